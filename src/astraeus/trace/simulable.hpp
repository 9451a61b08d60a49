// What `simulate` and `compare` need of a workload beyond what its trace format allows: a
// native trace may keep a submit before its epoch (negative submit_s: the round trip keeps it),
// which the simulator refuses. This check runs before a simulation and, for a native trace,
// names the file, the job's line and the field (the simulator only knows the job id).
// Thread safety: pure functions (reads the trace file again only to name a line on error).
#pragma once
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"

namespace astraeus {

/// Ok when every job has 0 <= submit_s <= kMaxTraceTime; otherwise the first one that does not,
/// as "FILE:LINE: field 'submit_s': ..." when `trace_path` is a native trace (`format`
/// "native", or "auto" detecting it), else "FILE: job ID: field 'submit_s': ...".
Result<void> check_simulable(const Workload& w, const std::string& trace_path, const std::string& format);

}  // namespace astraeus
