// Reader for SenseTime Helios `cluster_log.csv` (github.com/S-Lab-System-Group/HeliosData; Hu et
// al., SC '21): one row per Slurm job, header
//   job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
// (job_id, vc, gpu_num, submit_time and duration are required; other columns are ignored).
// Time zone: submit_time is "YYYY-MM-DD HH:MM:SS" in the cluster's local time, Asia/Shanghai
// (UTC+8, no daylight saving time), and is converted to UTC by subtracting 8 hours.
// Per row: id = job_id (a Slurm integer id, unique); tenant = vc (first-appearance order, weight
// 1); gpus = gpu_num; duration = `duration` (seconds, end_time - start_time in the release; a
// decimal such as "249.0" is rounded to the nearest second); every state is kept (CANCELLED,
// FAILED, TIMEOUT and NODE_FAIL jobs held GPUs too); epoch_unix_s = the earliest submit.
// Skipped and counted: gpu_num = 0 (CPU jobs) and an empty duration (a job that never started).
// Errors name file:line and field: a bad or negative number, a duplicate job_id, an empty vc,
// a submit_time that does not parse. The file may be gzip-compressed. Thread safety: pure.
#pragma once
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/trace/skips.hpp"

namespace astraeus {

/// Reads a Helios cluster_log.csv; `skips` (optional) receives the counts of rows left out.
Result<Workload> read_helios(const std::string& path, SkipCounts* skips = nullptr);

}  // namespace astraeus
