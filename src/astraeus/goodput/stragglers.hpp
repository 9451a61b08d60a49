// Straggler detection in a gang from progress reports (spec/goodput.md, "Stalls and
// stragglers"): a run has a straggler when one worker's progress rate over the last window
// (default 10 minutes) is below a ratio (default 1/2) of its gang's median rate. Workers that
// never report progress are never stragglers (and do not count in the median).
//
// The rate of a worker at time `now`, with W the window:
//   base = its last report at or before now - W; last = its last report at or before now;
//   rate = (last.step - base.step) / (last.t - base.t), in steps per second, or 0 when it made no
//   report after base (nothing in (now - W, now]). A worker without a report at or before
//   now - W (less than one window of history since it started or reset) is not judged and not
//   counted in the median. The gang's median is over its judged workers (the mean of the two
//   middle rates when their number is even); a gang needs at least two judged workers, and a
//   median > 0, to have a straggler. A worker is a straggler when rate < ratio x median.
// A step lower than the worker's last one (a restart from a checkpoint) starts its history
// again; reset() (called by the shell on every lifecycle event: placed, started, stopped,
// failed, ended) does the same, so only the current attempt's progress is judged.
//
// Memory: per worker, the reports of the last window plus one. Reports of a worker must come in
// time order; queries at a `now` not before any report. Ids (run, worker in the gang) are the
// caller's small integers. Pure and deterministic. Thread safety: not thread-safe.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "astraeus/base/time.hpp"

namespace astraeus::goodput {

struct StragglerConfig {
    Seconds window_s = 600;  ///< rates are measured over this window (cluster config)
    double ratio = 0.5;      ///< straggler: rate < ratio x the gang's median rate
};

class StragglerDetector {
public:
    explicit StragglerDetector(StragglerConfig config = {});

    /// Declares run `run` with a gang of `workers` >= 1 (0..workers-1); again = a new gang size.
    void set_gang(int run, int workers);
    /// A progress report of worker `worker` of `run` at time t: its step counter.
    /// Requires set_gang(run, n) with worker < n, and t not before the worker's last report.
    void progress(int run, int worker, Seconds t, std::int64_t step);
    /// Forgets a worker's reports (a new attempt, a stop, an end): it is not judged until it
    /// has a window of new reports.
    void reset(int run, int worker);

    /// The worker's last reported step counter, or -1 when it has no report kept.
    std::int64_t last_step(int run, int worker) const;
    /// The worker's rate at `now` in steps per second; negative when it is not judged.
    double rate(int run, int worker, Seconds now) const;
    /// The workers of `run` that are stragglers at `now`, ascending.
    std::vector<int> stragglers(int run, Seconds now) const;
    bool has_straggler(int run, Seconds now) const { return !stragglers(run, now).empty(); }
    /// The runs with a straggler at `now`, ascending. O(reports kept).
    std::vector<int> runs_with_straggler(Seconds now) const;

    const StragglerConfig& config() const { return cfg_; }

private:
    struct Report {
        Seconds t;
        std::int64_t step;
    };
    using History = std::deque<Report>;

    StragglerConfig cfg_;
    std::vector<std::vector<History>> runs_;  ///< [run][worker]
};

}  // namespace astraeus::goodput
