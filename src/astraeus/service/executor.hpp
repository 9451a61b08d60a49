// The executor: between the scheduler loop and the machines. The service tells it to launch a
// run's workers on GPUs, to stop them (the owner's stop, a preemption) and to forget a run; the
// executor reports what happened on the machines as timed events (started, finished, time limit
// reached, wound down, failed, released, machine lost or back). This issue ships the simulated
// executor (service/sim_executor.hpp): workers advance on the service's clock. Real node agents
// implement the same interface later. Times are Unix seconds of the service's clock.
// Thread safety: not thread-safe (the service serialises its calls).
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "astraeus/base/time.hpp"

namespace astraeus::service {

/// What the executor knows of a run it runs (restored from the store after a restart).
struct ExecRun {
    std::int64_t run = 0;
    int workers = 1;
    Seconds duration_s = 0;    ///< work until it succeeds; 0: runs until stopped
    Seconds time_limit_s = 0;  ///< work until the owner's time limit stops it; 0: none
    int attempt = 0;           ///< 1 on the first placement
    Seconds executed_s = 0;    ///< work done by earlier attempts
};

enum class ExecPhase : std::uint8_t { Starting, Running, Stopping, Failed };

struct ExecEvent {
    enum class Kind : std::uint8_t {
        Started,    ///< every worker of the run is running (GPUs busy at `level` %)
        Finished,   ///< its work is done: it succeeded
        TimeLimit,  ///< its time limit is reached: it should wind down (owner stop)
        StopDone,   ///< a stop's wind-down is over: its GPUs are free
        Failed,     ///< a worker failed; the run still holds its GPUs
        Released,   ///< a failed run's GPUs are free again
        MachineLost,
        MachineBack,
    };
    Kind kind;
    Seconds t;
    std::int64_t run = 0;      ///< run events
    std::int64_t machine = 0;  ///< machine events
    double level = 0;          ///< Started: utilization level, percent
};

inline constexpr Seconds kNever = std::numeric_limits<Seconds>::max() / 4;

class Executor {
public:
    virtual ~Executor() = default;
    /// Launches attempt `r.attempt` of run r at t (its workers placed): Starting.
    virtual void launch(Seconds t, const ExecRun& r) = 0;
    /// Starts a stop's wind-down at t (the owner's stop, a time limit or a preemption).
    virtual void stop(Seconds t, std::int64_t run) = 0;
    /// Forgets run `run` (ended, or released after a failure).
    virtual void forget(std::int64_t run) = 0;
    /// Re-adopts a run after a restart, in `phase` since `since_s`, `executed_s` of work done
    /// before that (Running: before the current running stretch).
    virtual void restore(const ExecRun& r, ExecPhase phase, Seconds since_s, Seconds executed_s) = 0;
    /// The time of the next event (kNever when none).
    virtual Seconds next_event_s() const = 0;
    /// Removes and returns the next event if it is due at or before `now` (in time order).
    virtual bool pop_due(Seconds now, ExecEvent& out) = 0;
    /// Work done by run `run` by time t (seconds running), for its record.
    virtual Seconds executed_s(std::int64_t run, Seconds t) const = 0;
    /// The machines it runs on (ids), all up at t. Machine losses and recoveries come back as
    /// MachineLost / MachineBack events; the service fails the runs on a lost machine.
    virtual void set_machines(const std::vector<std::int64_t>& ids, Seconds t) {
        (void)ids, (void)t;
    }
};

}  // namespace astraeus::service
