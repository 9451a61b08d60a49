// The simulator's goodput: the event engine tells a GoodputRecorder what happens to each job
// (submitted, placed, preempted, failed, stalled, released, ended); the recorder adds what the
// lifecycle models draw for the time in between (the start after the start-up time, utilization
// levels, stragglers, progress reports around stalls) and feeds the minute count
// (goodput/counter.hpp) into an hourly ledger (goodput/ledger.hpp). One worker per run (the job),
// holding every part of its placement; workspace = tenant; one pool (the cluster).
// Times given to the recorder are simulated seconds; the ledger holds Unix seconds
// (workload epoch + simulated seconds). Thread safety: not thread-safe (one per simulation).
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "astraeus/goodput/counter.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/goodput_io/table.hpp"
#include "astraeus/model/cluster.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/sim/lifecycle_model.hpp"

namespace astraeus {

/// What the lifecycle models made happen, for the report.
struct GoodputEvents {
    std::int64_t placements = 0;
    std::int64_t failures = 0;        ///< failures of running or starting jobs (losses included)
    std::int64_t machine_losses = 0;
    std::int64_t stalls = 0;
    std::int64_t stragglers = 0;
    std::int64_t preemptions = 0;     ///< lease ends not renewed and delay-job preemptions
    std::int64_t failed_for_good = 0; ///< jobs ended at their max_attempts-th failed attempt
    std::int64_t most_failures = 0;   ///< the most failed attempts (failures, losses, stalls) of a job
};

/// The goodput of one simulation.
struct GoodputResult {
    goodput::GoodputLedger ledger;
    std::vector<std::string> runs, workspaces, machines, pools;  ///< names by ledger id
    Seconds start_unix = 0;   ///< the first submit
    Seconds end_unix = 0;     ///< the last event
    GoodputEvents events;
    GpuSeconds unmeasured_gpu_s = 0;  ///< running time no utilization level decided
    LifecycleConfig lifecycle;
    std::uint64_t seed = 0;
};

class GoodputRecorder {
public:
    GoodputRecorder(const Workload& w, const ClusterSpec& cluster, std::string pool,
                    const LifecycleModel& model);

    /// Job j was admitted at t (its submit time).
    void submit(int j, Seconds t);
    /// Job j is placed on `p` at t and will be running from start_at >= t.
    void place(int j, Seconds t, const Placement& p, Seconds start_at);
    /// A preemption: stop(preemption) at stop_at, release at release_at >= stop_at (a lease end
    /// not renewed on the same GPUs: the lease's checkpoint time; a delay-job preemption: both
    /// at the kill).
    void preempt(int j, Seconds stop_at, Seconds release_at);
    /// Job j fails at t (a failure or a lost machine) and keeps its GPUs until release().
    void fail(int j, Seconds t);
    /// Job j stopped progressing at onset; the stall is detected (and the run stopped) at
    /// detected = onset + stall timeout; it keeps its GPUs until release().
    void stall(int j, Seconds onset, Seconds detected);
    /// A failed or stalled job j gives its GPUs back at t.
    void release(int j, Seconds t);
    /// Job j completed at t.
    void end(int j, Seconds t);
    /// A failed or stalled job j fails for good at t (its last attempt): it ends, its last count
    /// in the state it ended from (failed or stopping for the stall, still holding its GPUs).
    void fail_for_good(int j, Seconds t);
    /// Job j has had `n` failed attempts (for the report's maximum).
    void count_failed_attempts(std::int64_t n) {
        events_.most_failures = std::max(events_.most_failures, n);
    }
    void count_machine_loss() { ++events_.machine_losses; }

    /// The first error of the count (an engine bug), if any.
    const std::string& error() const { return error_; }
    /// The result; call once, after the last event at `end_t`.
    std::shared_ptr<GoodputResult> finish(Seconds end_t);

private:
    struct JobState {
        int worker = -1;
        Seconds start_at = -1;       ///< a start not yet given to the counter
        bool running = false;
        double base = 100;           ///< the current segment's level
        bool slowed = false;         ///< a straggler slows the gang now
        Seconds next_change = kNever;
        Seconds straggler_at = kNever;
        bool tracked = false;        ///< has reported progress (after its first stall)
        Seconds next_progress = kNever;
        std::int64_t step = 0;
    };
    Seconds unix_s(Seconds t) const { return epoch_ + t; }
    void flush(int j, Seconds t);
    void do_start(int j);
    void level(int j, Seconds t);
    void check(const Result<void>& r);

    const Workload& w_;
    const LifecycleModel& model_;
    Seconds epoch_;
    std::shared_ptr<GoodputResult> res_;
    goodput::GoodputCounter counter_;
    std::vector<JobState> jobs_;
    std::vector<Stream> util_;
    std::vector<goodput::HeldPart> parts_;
    GoodputEvents events_;
    std::string error_;
};

/// Rows of `by` over the whole simulation, named.
std::vector<goodput::NamedCounts> goodput_rows(const GoodputResult& r, goodput::By by);
/// The page's table (the whole simulation), then `weeks` > 0: one table per ISO week (the last
/// `weeks` complete weeks before the end, plus the week of the end), each under a heading.
std::string goodput_text(const GoodputResult& r, goodput::By by, int weeks);
/// goodput.json: the REST shape (rows_json of `by` over the whole simulation), "weekly" (one
/// rows_json per week when weeks > 0), "lifecycle" (the parameters and seed), "events" and
/// "unmeasured_gpu_hours".
nlohmann::json goodput_json(const GoodputResult& r, goodput::By by, int weeks);

}  // namespace astraeus
