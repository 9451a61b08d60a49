// The minute count (spec/goodput.md, "The count"): every worker's GPU time since its run was
// submitted, put into one category per UTC minute, times the GPUs it held (or asked for while
// waiting), and written to hourly rows through a DeltaSink.
//
// Rules (one place for all of them):
//  - A count at minute boundary b covers [previous count, b) and is decided by the worker's
//    state just before b: every call at time t first counts the boundaries <= t in the old
//    state, then applies the change. A change at exactly b belongs to the minute after b.
//  - The first count of a worker covers the time since its run's submission; end() makes a
//    last count of the time since the previous one, in the state it ended from.
//  - Running minutes are productive when the mean of the minute's valid utilization samples is
//    >= busy_pct, idle otherwise; a running minute with no valid sample is idle and counted in
//    no_sample_minutes. Samples outside 0..100 (NaN, negative, 4294967295) are rejected and
//    counted. A worker given a utilization *level* (the simulator) uses that level for every
//    minute until the next level instead of samples.
//  - Stalls: a worker that reported progress (a rising step counter) is stalled once it makes
//    none for stall_timeout_s; the time counted since its last progress (to the second: in the
//    report's minute, only the seconds after it) moves from productive/idle to stalled (the
//    retroactive rule), negative deltas on the old category and positive on stalled in the same
//    hours. Progress again ends the stall at the report (the seconds of its minute before the
//    report stay stalled). Workers that never report progress never stall; each attempt
//    starts with no progress history (start() forgets the previous attempt's reports).
//
// Cost: O(changes + hours spanned), not O(worker-minutes): a worker is counted only when one
// of its own calls (or advance()) needs it, and a quiet stretch is counted in one step split
// at hour boundaries. Times are Unix seconds (UTC). Thread safety: not thread-safe.
#pragma once
#include <span>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/goodput/calendar.hpp"
#include "astraeus/goodput/lifecycle.hpp"

namespace astraeus::goodput {

struct CounterConfig {
    Seconds stall_timeout_s = 600;  ///< no progress for this long = stalled (cluster config)
    double busy_pct = 5.0;          ///< a minute's mean utilization >= this = busy
};

/// One addition to the hourly ledgers: the run's row for (hour, category, held), on a machine
/// (held time) or on none (-1: not placed; attributed to the run's pool by the ledger).
struct Delta {
    int run;
    int machine;
    Seconds hour;       ///< Unix seconds of the UTC hour's start
    Category category;
    bool held;
    GpuSeconds gpu_s;   ///< negative for the retroactive stall move's withdrawal
};

/// Receives every count (the in-memory GoodputLedger; the service's store).
class DeltaSink {
public:
    virtual ~DeltaSink() = default;
    virtual void add(const Delta& d) = 0;
};

/// GPUs a worker holds on one machine.
struct HeldPart {
    int machine;
    int gpus;
};

class GoodputCounter {
public:
    GoodputCounter(CounterConfig config, DeltaSink& sink);

    /// A new worker of run `run` (an id of the caller's) asking for `gpus` > 0 GPUs, its run
    /// submitted at `submit_s`. Returns its id: 0, 1, ... in call order.
    int add_worker(Seconds submit_s, int run, int gpus);

    // Lifecycle (see lifecycle.hpp). Each fails, changing nothing, on a move the state does not
    // allow or a time earlier than the worker's last event, with a message saying which.
    /// Waiting -> Placed (attempt + 1) on `parts` (GPUs per machine, > 0 in all).
    Result<void> place(Seconds t, int w, std::span<const HeldPart> parts);
    /// Placed -> Running.
    Result<void> start(Seconds t, int w);
    /// Placed or Running -> Stopping(why); why is Owner (winding down: productive), Stall or
    /// Preemption (lease end not renewed, higher-priority work, a drain).
    Result<void> stop(Seconds t, int w, Cause why);
    /// Placed, Running or Stopping -> Failed (still holding GPUs): a failure or a lost machine.
    Result<void> fail(Seconds t, int w);
    /// Stopping(Stall | Preemption) or Failed -> Waiting again (GPUs released).
    Result<void> release(Seconds t, int w);
    /// Any state -> Ended, after a last count in the state it ended from.
    Result<void> end(Seconds t, int w);

    // Observations.
    /// Per-GPU utilization samples, percent. Invalid values are rejected and counted.
    Result<void> utilization(Seconds t, int w, std::span<const double> pct);
    /// The simulator's form: the worker's utilization is `pct` from t until the next level.
    Result<void> utilization_level(Seconds t, int w, double pct);
    /// A progress report: `step` above the last one is progress (and ends a stall).
    Result<void> progress(Seconds t, int w, std::int64_t step);

    /// Counts every worker through the minute boundaries <= t (stall detections included):
    /// the service calls it every minute; the simulator at the end. O(workers).
    void advance(Seconds t);

    int workers() const { return static_cast<int>(w_.size()); }
    int run_of(int w) const { return w_[w].run; }
    const WorkerStatus& status(int w) const { return w_[w].s; }
    /// Workers Running and stalled now (as of their last count).
    int stalled_now() const;
    std::int64_t invalid_samples() const { return invalid_samples_; }
    /// Running minutes without a valid utilization sample (counted idle), all workers.
    std::int64_t no_sample_minutes() const { return no_sample_minutes_; }
    const CounterConfig& config() const { return cfg_; }

private:
    struct JournalEntry {
        Seconds hour;
        Category category;
        Seconds seconds;  ///< per GPU
    };
    struct Worker {
        int run;
        int gpus_asked;
        WorkerStatus s;
        Seconds last_count;           ///< time counted up to
        Seconds last_event;
        std::vector<HeldPart> parts;  ///< while holding
        // utilization of the minute being accumulated
        double sample_sum = 0;
        int samples = 0;
        bool has_level = false;
        double level = 0;
        // progress and stalls
        bool tracked = false;         ///< has reported progress
        std::int64_t step = 0;
        Seconds last_progress = 0;
        std::vector<JournalEntry> journal;  ///< running counts since the last progress
    };

    Result<void> check(Seconds t, int w, const char* what) const;
    /// Stall detection and counts up to t (the boundaries <= t), then last_event = t.
    void catch_up(Worker& k, Seconds t);
    /// Counts the boundaries <= t in k's current state.
    void count_to(Worker& k, Seconds t);
    /// Adds [from, to) in category c; journals running time if tracked.
    void put(Worker& k, Seconds from, Seconds to, Category c);
    void emit(const Worker& k, Seconds from, Seconds to, Category c, bool held, int sign);
    void stall(Worker& k);
    int held_gpus(const Worker& k) const;

    CounterConfig cfg_;
    DeltaSink& sink_;
    std::vector<Worker> w_;
    std::int64_t invalid_samples_ = 0;
    std::int64_t no_sample_minutes_ = 0;
};

}  // namespace astraeus::goodput
