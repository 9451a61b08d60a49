// Slurm job segments (sacct_records.hpp) -> the goodput event log (docs/formats/goodput-events.md),
// so that Slurm accounting is counted by the same replay as Astraeus' own logs.
// Mapping (docs/slurm.md, "Goodput from Slurm accounting"):
//   run = the job id; workspace = the account; pool = the partition; one worker holding the
//   allocation's GPUs (gres/gpu), spread over its nodes (as evenly as possible when the total does
//   not divide: sacct gives the total, not each node's share - a note says so).
//   submit at the first segment's Submit; each started segment: place + start at its Start;
//   a segment followed by another (requeued): at its End `stop preemption` + `release` (REQUEUED,
//   PREEMPTED, CANCELLED, ...) or `fail` + `release` (NODE_FAIL, FAILED, BOOT_FAIL, OUT_OF_MEMORY),
//   so the wait until the next Start is preemption or failure time; the last segment: `end` at its
//   End, none while it runs or waits (counted up to the end of the records).
// A job that never started asks for its requested GPUs (ReqTRES). Jobs with no GPU allocated or
// requested are left out (a run without GPUs has no goodput).
// Thread safety: a pure function.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"
#include "astraeus/slurm_import/sacct_records.hpp"

namespace astraeus::slurm {

struct ImportedLog {
    std::string events;  ///< the event log, JSON Lines in time order (t in Unix seconds)
    int jobs = 0;                 ///< jobs with GPUs, i.e. runs in the log
    int segments = 0;             ///< their segments
    int jobs_without_gpus = 0;    ///< left out
    int jobs_still_going = 0;     ///< running or waiting at the end of the records
    std::optional<Seconds> last_s;  ///< the latest time in the records (submit, start or end)
    std::vector<std::string> notes;  ///< what the caller should tell the user (uneven splits, ...)
    /// Per run, its started segments as Slurm recorded them: (GPUs, Start, End or none).
    struct Held {
        std::int64_t gpus;
        Seconds start_s;
        std::optional<Seconds> end_s;
    };
    std::map<std::string, std::vector<Held>> held;
};

/// Slurm's own figure for a run: the sum of GPUs x (End - Start) over its segments, a segment
/// still running counted up to `end_s` (and nothing after it), in GPU-seconds. Exact to the
/// second, whereas the goodput count puts each whole minute in one category (counter.hpp).
GpuSeconds slurm_allocated_gpu_seconds(const std::vector<ImportedLog::Held>& held, Seconds end_s);

/// Builds the event log. Segments of one job are ordered by Start (segments that never started
/// last, by Submit). Errors name the record ("FILE:LINE: job 12: ...") when times go backwards
/// (a segment's Start before the previous segment's End, End before Start, Start before Submit),
/// or when a segment that is not the last has no End. A segment without nodes never ran (Slurm
/// records Start = End for a job cancelled while pending).
Result<ImportedLog> segments_to_events(std::vector<Segment> segments);

}  // namespace astraeus::slurm
