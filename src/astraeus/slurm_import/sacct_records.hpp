// Slurm accounting records as `sacct` prints them, one per job segment: `sacct --json` (Slurm
// 22.05, openapi dbv0.0.38 job objects) and `sacct --parsable2` with a header line naming the
// fields (docs/slurm.md, "Goodput from Slurm accounting"). A requeued job has one record per
// segment (`sacct --duplicates`, state REQUEUED for every segment but the last); GPUs come from the
// allocated TRES (`gres/gpu=N`, AccountingStorageTRES=gres/gpu).
// Thread safety: pure functions.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"

namespace astraeus::slurm {

/// One job segment (one run of a job's batch script on its allocation).
struct Segment {
    std::string job;        ///< the job id as sacct names it: "123", "123_4" (array), "123+1" (het)
    std::string name;       ///< the job's name ("" when not given)
    std::string account;    ///< the Slurm account (Astraeus: the workspace)
    std::string partition;  ///< the partition (Astraeus: the pool)
    std::string state;      ///< the base state: COMPLETED, REQUEUED, NODE_FAIL, RUNNING, ...
    Seconds submit_s = 0;   ///< when this segment was submitted (reset at a requeue)
    std::optional<Seconds> start_s;  ///< absent when the segment never started
    std::optional<Seconds> end_s;    ///< absent while it runs or waits
    std::vector<std::string> nodes;  ///< the allocation's nodes, expanded
    std::int64_t gpus = 0;           ///< allocated GPUs, all nodes together (gres/gpu)
    std::int64_t requested_gpus = 0; ///< requested GPUs (ReqTRES; for jobs never allocated)
    std::string where;               ///< "FILE:LINE" or "FILE: jobs[i]", for messages
    /// The job's restart count when the input gives it (parsable2's Restarts field; the JSON's
    /// restart_cnt, Slurm 23.02 and later), else -1. A job with fewer records than restarts + 1
    /// is refused: sacct ran without -D and its requeued segments are missing.
    std::int64_t restarts = -1;
};

/// True when some segment carries a restart count: only then can records missing because sacct
/// ran without -D be detected (the caller says so when none does).
bool restart_count_given(const std::vector<Segment>& segments);

enum class SacctFormat : std::uint8_t { Auto, Json, Parsable2 };
/// "auto", "json", "parsable2"; else an error naming them.
Result<SacctFormat> parse_sacct_format(std::string_view name);

/// `sacct --json` output: {"jobs": [...]} with job_id, name, account, partition, state.current,
/// time.{submission,start,end} (Unix seconds, 0 = none), nodes, tres.allocated [{type, name,
/// count}] (and tres.requested), array.{job_id,task_id}, het.{job_id,job_offset}, restart_cnt
/// (when given). Steps are ignored. Errors: "FILE: jobs[i].field: what was expected"; a job
/// requeued restart_cnt times with fewer records than restart_cnt + 1 (sacct without -D).
Result<std::vector<Segment>> parse_sacct_json(std::string_view text, std::string_view file);

/// How a sacct time printed without a zone ("YYYY-MM-DDTHH:MM:SS", given here as if it were UTC)
/// becomes Unix seconds; an error when it cannot be known (e.g. printed in a local time zone
/// that was not named). Empty: the times are UTC.
using WallClock = std::function<Result<Seconds>(Seconds wall_as_utc)>;

/// Job ids of a job array record: "68_[0-5]" (pending elements, also "68_[1,3-5%2]") -> "68_0",
/// ..., "68_5"; any other id -> itself. An error on a malformed or huge (> 1,000,000) list.
Result<std::vector<std::string>> array_elements(std::string_view job);

/// `sacct --parsable2` output: '|'-separated, the first non-blank line a header. Required fields:
/// JobID, State, Submit, Start, End, NodeList, AllocTRES, Account, Partition (any order; others,
/// e.g. JobName, ExitCode, are allowed; ReqTRES, when given, supplies the GPUs of jobs that never
/// started). Step rows (JobID with a '.') are skipped. Times:
/// "YYYY-MM-DDTHH:MM:SS" read as UTC (run sacct with TZ=UTC), or Unix seconds
/// (SLURM_TIME_FORMAT=%s); "Unknown", "None" and "" are no time. A pending job array's record
/// ("68_[0-5]") is one segment per element. With a `Restarts` field, a job with fewer records
/// than Restarts + 1 is refused (sacct was run without -D). The last line must end with a line
/// end (a cut-short file is refused). Errors: "FILE:LINE: field 'Start': what was expected".
Result<std::vector<Segment>> parse_sacct_parsable(std::string_view text, std::string_view file,
                                                  const WallClock& wall = {});

/// Either format: `Auto` picks JSON when the first non-blank character is '{'.
Result<std::vector<Segment>> parse_sacct(std::string_view text, std::string_view file,
                                         SacctFormat format, const WallClock& wall = {});

/// GPUs in a TRES string ("billing=2,cpu=2,gres/gpu=16,node=2" -> 16): the untyped gres/gpu
/// count, else the sum of typed ones (gres/gpu:a100=8); 0 when none. Errors on a malformed count.
Result<std::int64_t> gpus_in_tres(std::string_view tres);

}  // namespace astraeus::slurm
