// Reader for Microsoft Philly's `cluster_job_log` (github.com/msr-fiddle/philly-traces, CC BY 4.0;
// Jeon et al., USENIX ATC '19): a JSON list of jobs
//   {"status", "vc", "jobid", "user", "submitted_time",
//    "attempts": [{"start_time", "end_time", "detail": [{"ip", "gpus": ["gpu0", ...]}]}]}.
// Also reads the DRE sample's flattened variant (data/philly/sampled_jobs.json.gz), where a job
// has no "attempts" but "start_time", "end_time" and "detail" of its last attempt at top level:
// that is read as a job with that one attempt.
//
// Time zone: timestamps are zone-less strings "2017-10-03 14:24:30". They are Philly's local
// time: the same trace's utilization logs carry "PDT"/"PST" suffixes, and the cluster ran in a
// US Pacific data center. They are read as America/Los_Angeles (US DST rules; the repeated hour
// 01:00-01:59 of 2017-11-05 is read as daylight time) and converted to UTC.
// Per job:
//  - tenant = vc (interned in first-appearance order, weight 1); `user` and `status` are ignored
//    (Killed and Failed jobs are kept: they held GPUs);
//  - submit = submitted_time; epoch_unix_s = the earliest submit, so the first job submits at 0;
//  - duration = the SUM of the attempts' (end_time - start_time): the GPU-time the job actually
//    held. Not last end - first start, which would also count the time a retried job waited in
//    the queue between attempts, and the simulator models queueing itself;
//  - gpus = number of GPUs in the first attempt's detail (summed over its machines);
//  - id: "application_<T>_<N>" (T < 4.6e12, N < 1e6) maps to T * 1'000'000 + N, a stable id that
//    keeps both parts readable; any other string maps to a 62-bit FNV-1a hash plus 2^62 (a
//    range the first form never reaches). The original string is kept in Job::name.
// Skipped and counted (SkipCounts), never an error: jobs with no attempts, with an attempt
// lacking start_time or end_time (null or "None": a logging gap, or still running at the
// snapshot, so the run time is unknown), with an attempt ending before it starts, with no
// submitted_time, with no GPUs in the first attempt, and repeated jobid strings (first kept).
// Errors (naming file:line of the job's opening brace, the jobid and the field): invalid JSON,
// a top level that is not a list, a job that is not an object, a missing or non-string
// vc/jobid, a timestamp that does not parse, attempts/detail/gpus of the wrong type.
// The file may be gzip-compressed. Thread safety: pure function of the file.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/trace/skips.hpp"

namespace astraeus {

/// Reads a Philly cluster_job_log JSON file (or the DRE sample); `skips` (optional) receives
/// the counts of jobs left out, by reason.
Result<Workload> read_philly_joblog(const std::string& path, SkipCounts* skips = nullptr);

/// The stable integer id of a Philly job id string (see the header comment); always >= 0.
std::int64_t philly_job_id(std::string_view jobid);

}  // namespace astraeus
