// Reader for the RFold Philly arrivals CSV (github.com/shuoshuc/RFold, MIT;
// WorkloadGen/data/philly_trace.csv, bundled as data/philly/philly_trace.csv.gz): one row per
// Philly job, derived by RFold's author from the Philly cluster_job_log, header
//   #job id,arrival time (sec),topology,shape,size,duration (sec)
// (the header line starts with '#'; `topology` and `shape` are ignored).
// Times: `arrival time (sec)` is seconds since the first arrival (no calendar date, no zone), so
// read_rfold sets epoch_unix_s = 0 and day boundaries (trace/slice.hpp) fall every 86400 s from
// the first job; read_rfold_philly puts the Philly trace on the calendar (see below).
// Per row: id = job id (unique integer), gpus = size, submit = arrival, duration = duration;
// arrival and duration are written as decimals ("3613033.0", "4045909.9999999995": minutes x 60
// in floating point) and are rounded to the nearest second. No tenants: tenant = -1 for every
// job (give them virtual clusters with trace/tenant_assign.hpp).
// Skipped and counted: size = 0. Errors name file:line and field: a bad or negative number, a
// duplicate id. The file may be gzip-compressed. Thread safety: pure function of the file.
#pragma once
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/trace/skips.hpp"

namespace astraeus {

/// Reads an RFold Philly arrivals CSV; `skips` (optional) receives the counts of rows left out.
Result<Workload> read_rfold(const std::string& path, SkipCounts* skips = nullptr);

/// The Philly wall-clock time of arrival 0 in RFold's philly_trace.csv: 2017-08-14 23:27:00
/// US Pacific (2017-08-15 06:27:00 UTC). Not stored in the file; found by matching the DRE
/// sample (5,910 jobs from the same cluster_job_log): with it, 5,894 of the 5,910 sample jobs
/// have an RFold row with the same GPU count and exactly the same submit second. The match also
/// shows that RFold's arrivals are differences of zone-less local times (daylight saving
/// ignored), so after 2017-11-05 02:00 they run one hour behind elapsed time.
inline constexpr std::string_view kRfoldPhillyStartLocal = "2017-08-14 23:27:00";

/// Reads RFold's Philly trace onto the calendar: as read_rfold, then every arrival a is taken
/// as the local time kRfoldPhillyStartLocal + a in US Pacific and converted to UTC (undoing the
/// DST hour above), epoch_unix_s = the first arrival's instant (1502778420), so submits agree
/// with read_philly_joblog's to the second. Run times are left as they are (they too are
/// local-time differences: one hour short for a job that ran across 2017-11-05 01:00-02:00).
Result<Workload> read_rfold_philly(const std::string& path, SkipCounts* skips = nullptr);

}  // namespace astraeus
