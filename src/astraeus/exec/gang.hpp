// The gang of one run's attempt: what its workers' facts (up, progress, exited, gone) mean for
// the run as a whole, as the executor interface's events. Shared by the executors that see
// workers one by one (local, agents).
//   - Starting -> Running (Started) when every worker is up; for a run that asked for it
//     (running_at_progress), at the first progress report instead.
//   - a worker that exits non-zero, or is ended by a signal the executor did not send, fails
//     the gang (Failed, the culprit in `worker`): wants_stop() turns true (stop the others);
//     Released when every worker is gone.
//   - every worker exited 0 and gone -> Finished.
//   - stop() (owner, preemption, drain) and the time limit (TimeLimit, due at time_limit_at())
//     -> Stopping: wants_stop(); StopDone when every worker is gone (their exit codes then
//     do not matter).
// Thread safety: not thread-safe (plain value owned by one executor).
#pragma once
#include <vector>

#include "astraeus/exec/executor.hpp"

namespace astraeus::exec {

class Gang {
public:
    /// Attempt `r.attempt` of run r launched at t (`r.executed_s` of work before it).
    Gang(const ExecRun& r, Seconds t);

    void worker_up(int w, Seconds t, std::vector<ExecEvent>& out);
    void progress(int w, std::int64_t step, Seconds t, std::vector<ExecEvent>& out);
    /// `exit_code` >= 0 or `signal` > 0; `we_signalled`: the executor had signalled its group.
    void worker_exited(int w, int exit_code, int signal, bool we_signalled, Seconds t,
                       std::vector<ExecEvent>& out);
    /// The worker's processes are all gone.
    void worker_gone(int w, Seconds t, std::vector<ExecEvent>& out);
    /// The service's stop (owner, preemption, drain) at t.
    void stop(Seconds t);
    /// A machine of the gang is lost at t: Failed (when not already failed or stopping).
    void fail(Seconds t, std::vector<ExecEvent>& out);
    /// When the time limit is reached (kNever: none, or not running).
    Seconds time_limit_at() const;
    /// Emits TimeLimit at t and winds down.
    void time_limit(Seconds t, std::vector<ExecEvent>& out);

    ExecPhase phase() const { return phase_; }
    /// The executor must stop every live worker (failure, time limit, stop).
    bool wants_stop() const { return phase_ == ExecPhase::Stopping || phase_ == ExecPhase::Failed; }
    /// True once the final event (Finished, StopDone, Released) has been emitted.
    bool done() const { return done_; }
    Seconds executed_s(Seconds t) const;
    const ExecRun& run() const { return r_; }

private:
    ExecEvent event(ExecEvent::Kind k, Seconds t, int w = -1) const;
    void set_running(Seconds t, std::vector<ExecEvent>& out);

    ExecRun r_;
    ExecPhase phase_ = ExecPhase::Starting;
    Seconds since_ = 0;
    Seconds executed_ = 0;
    std::vector<char> up_, exited_, gone_, ok_;
    bool limit_sent_ = false;
    bool done_ = false;
};

}  // namespace astraeus::exec
