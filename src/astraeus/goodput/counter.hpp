// The minute count (spec/goodput.md, "The count"): every worker's GPU time since its run was
// submitted, added every UTC minute to the categories it was really in, to the second, times
// the GPUs it held (or asked for while waiting), and written to hourly rows through a DeltaSink.
//
// Rules (one place for all of them):
//  - Every call at time t first decides the worker's time up to t in its old state, then
//    applies the change: state intervals come from the calls' own timestamps. A count at
//    boundary b emits everything decided in [previous count, b); what is decided after the
//    last boundary waits in `pending` for the next count (the service persists "counted to
//    minute b"). The first count covers the time since the run's submission; end() makes a
//    last count up to the end.
//  - Running time: each valid utilization sample decides the running time from it to the next
//    sample (>= busy_pct: productive, else idle), at most 2 sample periods; a worker given a
//    utilization *level* (the simulator) uses it until the next level. Running time no sample
//    decides is productive while the worker reports progress (tracked, not stalled), else idle
//    and also counted as unmeasured (a Delta of category kUnmeasured). Samples outside 0..100
//    (NaN, negative, 4294967295) are rejected and counted.
//  - Stalls: a worker that reported progress (a rising step counter) is stalled once it makes
//    none for stall_timeout_s; its running time since the last progress moves from
//    productive/idle to stalled (the retroactive rule: negative deltas on the old category and
//    positive on stalled in the same hours for what was emitted; pending pieces are recast).
//    Progress again ends the stall at the report. Workers that never report progress never
//    stall; each attempt starts with no progress or sample history.
//
// Cost: O(changes + hours spanned), not O(worker-minutes): a worker is counted only when one
// of its own calls (or advance()) needs it, and a quiet stretch is counted in one step split
// at hour boundaries. advance(t) visits only the workers due by t (a set ordered by each
// worker's next minute boundary or stall detection), so a call that crosses no boundary costs
// O(log workers), whatever the number of waiting workers. Times are Unix seconds (UTC).
// Thread safety: not thread-safe.
#pragma once
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/goodput/calendar.hpp"
#include "astraeus/goodput/lifecycle.hpp"

namespace astraeus::goodput {

struct CounterConfig {
    Seconds stall_timeout_s = 600;  ///< no progress for this long = stalled (cluster config)
    double busy_pct = 5.0;          ///< a sample's mean utilization >= this = busy
    Seconds sample_period_s = 10;   ///< a sample decides at most 2 periods after it
    /// Waits are open intervals (see above) instead of counts at every minute boundary.
    bool open_waits = false;
};

/// The pseudo-category of a Delta counting unmeasured GPU time: running time that neither a
/// utilization sample nor progress decided. It is also counted idle (a second Delta); sinks
/// keep it beside the categories (Counts::unmeasured), never as a ninth category.
inline constexpr Category kUnmeasured = static_cast<Category>(kCategories);

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

/// A worker's wait not counted yet (CounterConfig::open_waits): from `from_s` on, its run
/// asks for `gpus` GPUs (not held) in `category`, up to the count's last minute boundary.
struct OpenWait {
    int worker;
    int run;
    Seconds from_s;
    Category category;
    int gpus;
};

/// Receives every count (the in-memory GoodputLedger; the service's store).
class DeltaSink {
public:
    virtual ~DeltaSink() = default;
    virtual void add(const Delta& d) = 0;
    /// A wait opens (open_waits only); a worker has at most one open at a time.
    virtual void open_wait(const OpenWait&) {}
    /// Worker w's open wait closes: its time is (or will be) counted by add() from now on.
    virtual void close_wait(int /*worker*/) {}
    /// The count stands at minute boundary `boundary_s` (advance): open waits extend to it.
    virtual void counted_to(Seconds /*boundary_s*/) {}
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
    /// the service calls it before every change; the simulator at the end. O(log workers) plus
    /// the work of the workers with a boundary or a stall detection <= t.
    void advance(Seconds t);

    int workers() const { return static_cast<int>(w_.size()); }
    int run_of(int w) const { return w_[w].run; }
    const WorkerStatus& status(int w) const { return w_[w].s; }
    /// Workers Running and stalled now (as of their last count).
    int stalled_now() const;
    /// Whether worker w's wait is open (CounterConfig::open_waits): not counted since its
    /// last_count(w), all of it in its waiting state.
    bool open(int w) const { return w_[w].open; }
    std::int64_t invalid_samples() const { return invalid_samples_; }
    /// Running GPU-seconds that neither a sample nor progress decided (counted idle), all
    /// workers, as emitted so far.
    GpuSeconds unmeasured_gpu_s() const { return unmeasured_gpu_s_; }
    const CounterConfig& config() const { return cfg_; }

    // What a restart needs to go on exactly (the service stores it with the worker's state).
    /// The time up to which worker w's time has been emitted (a minute boundary, its
    /// submission or the time it was re-created at).
    Seconds last_count(int w) const { return w_[w].last_count; }
    /// The time up to which worker w's time is decided: [last_count, decided_to) is pending,
    /// and from decided_to on the worker is in its current state.
    Seconds decided_to(int w) const { return w_[w].decided_to; }
    /// Sends worker w's pending time (decided, not yet emitted) to `out` as the Deltas its next
    /// count will emit, unmeasured pseudo-category included; emits nothing to the counter's sink.
    void pending(int w, DeltaSink& out) const;

private:
    struct JournalEntry {
        Seconds hour;
        Category category;
        Seconds seconds;  ///< per GPU
    };
    /// A decided interval not yet emitted (after the last count).
    struct Piece {
        Seconds from;
        Seconds to;
        Category category;
        bool held;
        bool unmeasured;
        bool journal;      ///< running time since the last progress (moves on a stall)
        std::int8_t gen;   ///< -1: the current parts; else old_parts[gen]
    };
    struct Worker {
        int run;
        int gpus_asked;
        WorkerStatus s;
        Seconds last_count;           ///< emitted up to (a boundary, the submission, the end)
        Seconds decided_to;           ///< decided up to (>= last_count)
        Seconds last_event;
        Seconds due;                  ///< its key in due_: next boundary or stall detection
        bool open = false;            ///< its wait is open (in no due_ entry then)
        Seconds open_from = 0;        ///< where it opened (its last_count then)
        std::vector<HeldPart> parts;  ///< while holding
        std::vector<Piece> pending;   ///< decided in [last_count, decided_to)
        std::vector<std::vector<HeldPart>> old_parts;  ///< released during the pending minute
        // utilization
        bool has_level = false;
        double level = 0;
        bool has_sample = false;
        bool sample_busy = false;
        Seconds sample_t = 0;
        // progress and stalls
        bool tracked = false;         ///< has reported progress
        std::int64_t step = 0;
        Seconds last_progress = 0;
        std::vector<JournalEntry> journal;  ///< emitted running time since the last progress
    };

    Result<void> check(Seconds t, int w, const char* what) const;
    /// Stall detection and counts up to t (the boundaries <= t, then pending up to t), then
    /// last_event = t.
    void catch_up(Worker& k, Seconds t);
    /// Emits the boundaries <= t and decides the time up to t in k's current state.
    void count_to(Worker& k, Seconds t);
    /// Decides [from, to) in k's current state: emitted now (`now`) or kept pending.
    void decide(Worker& k, Seconds from, Seconds to, bool now);
    void piece(Worker& k, Piece p, bool now);
    void flush(Worker& k);
    void emit(const Worker& k, const Piece& p, int sign) const { emit_to(k, p, sign, sink_); }
    void emit_to(const Worker& k, const Piece& p, int sign, DeltaSink& to) const;
    void stall(Worker& k);
    /// Re-files worker w in due_ after a change (out of it once it has ended).
    void reschedule(int w);
    /// Calls reschedule(w) when a public call on w returns, whatever it changed.
    struct Refile {
        GoodputCounter& c;
        int w;
        ~Refile() { c.reschedule(w); }
    };

    CounterConfig cfg_;
    DeltaSink& sink_;
    std::vector<Worker> w_;
    std::set<std::pair<Seconds, int>> due_;  ///< (due, worker) of every worker not ended nor open
    std::int64_t invalid_samples_ = 0;
    GpuSeconds unmeasured_gpu_s_ = 0;
};

}  // namespace astraeus::goodput
