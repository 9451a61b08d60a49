// Reader for the RFold Philly arrivals CSV (github.com/shuoshuc/RFold, MIT;
// WorkloadGen/data/philly_trace.csv, bundled as data/philly/philly_trace.csv.gz): one row per
// Philly job, derived by RFold's author from the Philly cluster_job_log, header
//   #job id,arrival time (sec),topology,shape,size,duration (sec)
// (the header line starts with '#'; `topology` and `shape` are ignored).
// Times: `arrival time (sec)` is seconds since the first arrival (no calendar date, no zone), so
// epoch_unix_s = 0 and day boundaries (trace/slice.hpp) fall every 86400 s from the first job.
// Per row: id = job id (unique integer), gpus = size, submit = arrival, duration = duration;
// arrival and duration are written as decimals ("3613033.0", "4045909.9999999995": minutes x 60
// in floating point) and are rounded to the nearest second. No tenants: tenant = -1 for every
// job (give them virtual clusters with trace/tenant_assign.hpp).
// Skipped and counted: size = 0. Errors name file:line and field: a bad or negative number, a
// duplicate id. The file may be gzip-compressed. Thread safety: pure function of the file.
#pragma once
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/trace/skips.hpp"

namespace astraeus {

/// Reads an RFold Philly arrivals CSV; `skips` (optional) receives the counts of rows left out.
Result<Workload> read_rfold(const std::string& path, SkipCounts* skips = nullptr);

}  // namespace astraeus
