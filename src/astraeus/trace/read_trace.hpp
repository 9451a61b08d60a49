// The trace-format registry: one entry point that reads any supported trace into a Workload, by
// format name or by detecting the format from the file's first bytes. Formats (one reader each):
//   reference      ASTRAEA reference simulator jobs CSV (trace/reference_csv.hpp)
//   philly-joblog  Philly cluster_job_log JSON, or the DRE sample of it (trace/philly_joblog.hpp)
//   helios         Helios cluster_log.csv (trace/helios_csv.hpp)
//   rfold          RFold Philly arrivals CSV, times relative, epoch 0 (trace/rfold_csv.hpp)
//   rfold-philly   the same file put on Philly's calendar (UTC), see read_rfold_philly
//   native         Astraeus native trace CSV (trace/native_trace.hpp)
// "auto" looks at the first line: "#astraeus-trace" -> native; "#job id,arrival time (sec)" ->
// rfold (name rfold-philly yourself for calendar dates); a JSON list ('[') -> philly-joblog; a CSV
// header with vc, gpu_num and submit_time -> helios; with user, num_gpu and submit_time ->
// reference. When the content says nothing, a .json or .json.gz name means philly-joblog. Thread
// safety: pure functions of the file.
#pragma once
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/trace/skips.hpp"

namespace astraeus {

/// The format names read_trace accepts (without "auto"), in a fixed order.
const std::vector<std::string>& trace_formats();

/// The format of the file at `path`, detected as described above; an error says what the first
/// line was and lists the formats.
Result<std::string> detect_trace_format(const std::string& path);

/// Reads the trace at `path` in `format` (a name from trace_formats() or "auto"). `skips`
/// (optional) receives what the reader left out. An unknown format is an error listing the
/// valid ones.
Result<Workload> read_trace(const std::string& path, const std::string& format,
                            SkipCounts* skips = nullptr);

}  // namespace astraeus
