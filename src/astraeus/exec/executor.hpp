// The executor interface: between the service's scheduler loop and the machines. The service
// tells an executor to launch a run's attempt (its command, environment and placement), to stop
// it (the owner's stop, a time limit, a lease end not renewed, a drain) and to forget it; the
// executor reports what happened on the machines as timed events, in time order:
//   WorkerStarted  a worker's process is running (exec succeeded)
//   Started        the gang is up: every worker is running (or, for a run that asked for it, the
//                  first progress report arrived); `level` = utilization percent (-1: unknown)
//   Progress       a worker reported step `step`
//   WorkerExited   a worker's process ended: `exit_code` (>= 0) or `signal` (> 0)
//   Finished       every worker exited 0: the run succeeded (its GPUs are free)
//   TimeLimit      its time limit is reached: the executor winds it down (like an owner stop)
//   StopDone       a stop's wind-down is over: every process is gone, its GPUs are free
//   Failed         a worker failed (non-zero exit, a signal not sent by us, a lost machine);
//                  the executor stops the others; the run still holds its GPUs
//   Released       a failed run's processes are all gone: its GPUs are free
//   Utilization    worker `worker`'s GPUs were sampled: `level` = their mean utilization, percent
//   MachineLost / MachineBack
//   Cancelled      the resource manager's administrator cancelled it (Slurm: an `scancel` not
//                  sent by Astraeus): the run ends as cancelled, never retried; `detail` says who
//                  and when; its GPUs are free
//   Held           the resource manager's administrator holds it (Slurm: `scontrol hold`) before
//                  it started or while it waits: it waits, holds no GPUs and is not placed until
//                  Unheld; `detail` says so
//   Unheld         the administrator released it (`scontrol release`): it may be placed again
//   Preempted      the resource manager's administrator ended the running attempt without ending
//                  the run (Slurm: `scontrol requeue`/`requeuehold`): the attempt is preempted
//                  (not a failure), its GPUs are free, the run waits to be placed again (a Held
//                  follows when it is held); `detail` says who and when, for the run's reason
//   Foreign        machine `machine` has `gpus` GPUs held by jobs outside this service (Slurm:
//                  jobs it did not submit), from now until the next Foreign event of the machine
//                  (0: none any more); `detail` says which (the pending runs' reason names it)
//   Withdrawn      the resource manager did not start a placed attempt in time (Slurm: its job
//                  stayed PENDING, Resources/Priority, past the bound): the placement is taken
//                  back before it held anything; the run waits and is placed again, its attempt
//                  neither charged nor a failure; `detail` says why
// Implementations: exec/local_executor.hpp (child processes of the service on its machine),
// service/sim_executor.hpp (simulated, on the service's clock), agents (node agents) and Slurm.
// Times are Unix seconds of the service's clock.
// Thread safety: the service serialises its calls; an executor with threads of its own reports
// through its queue and calls the `wake` callback (never while holding its own lock).
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "astraeus/base/time.hpp"

namespace astraeus::exec {

/// Where one worker runs: a machine (the service's id and name) and the GPU indices it gets
/// there (CUDA_VISIBLE_DEVICES), in order.
struct WorkerPlacement {
    std::int64_t machine = 0;
    std::string machine_name;
    std::vector<int> gpus;
};

/// One attempt of a run as the executor needs it (restored from the store after a restart).
struct ExecRun {
    std::int64_t run = 0;
    int workers = 1;
    Seconds duration_s = 0;    ///< simulated executor: work until it succeeds; 0: until stopped
    Seconds time_limit_s = 0;  ///< work until the owner's time limit stops it; 0: none
    int attempt = 0;           ///< 1 on the first placement
    Seconds executed_s = 0;    ///< work done by earlier attempts (running seconds)
    // --- what real executors run ---------------------------------------------------------------
    std::string run_name;
    std::string workspace;
    std::int64_t workspace_id = 0;            ///< the store's id (the sandbox's uid: uid_base + id)
    std::string pool;                         ///< its pool's name (Slurm: the partition)
    int gpus_per_worker = 0;
    std::vector<std::string> argv;            ///< the command; empty: nothing to run (sim only)
    std::map<std::string, std::string> env;   ///< the run's own variables
    std::string workdir;                      ///< empty: the run's directory
    bool running_at_progress = false;         ///< running at the first progress report
    std::vector<WorkerPlacement> placement;   ///< one per worker (empty: not known, sim)
    /// Each worker's log cap in bytes, from the workspace's log quota (service/log_quota.hpp);
    /// unset: the executor's own cap.
    std::optional<std::uint64_t> log_cap_bytes;
};

enum class ExecPhase : std::uint8_t { Starting, Running, Stopping, Failed };

struct ExecEvent {
    enum class Kind : std::uint8_t {
        Started,
        Finished,
        TimeLimit,
        StopDone,
        Failed,
        Released,
        MachineLost,
        MachineBack,
        WorkerStarted,
        Progress,
        WorkerExited,
        Utilization,
        Cancelled,
        Held,
        Unheld,
        Foreign,
        Preempted,
        Withdrawn,
    };
    Kind kind;
    Seconds t;
    std::int64_t run = 0;      ///< run events
    std::int64_t machine = 0;  ///< machine events
    double level = 0;          ///< Started: utilization level, percent (-1: none, sampled
                               ///< later); Utilization: the sample
    int worker = -1;           ///< WorkerStarted, Progress, WorkerExited (and Failed: the culprit)
    std::int64_t step = 0;     ///< Progress
    int exit_code = -1;        ///< WorkerExited: the exit status, or -1 when killed by a signal
    int signal = 0;            ///< WorkerExited: the signal that ended it (0: none)
    int attempt = 0;           ///< the attempt the event belongs to (0: not known)
    std::string detail = {};   ///< Cancelled, Held, Preempted: who and when, for the run's reason;
                               ///< Withdrawn: why the placement was taken back;
                               ///< Failed: why, when known (a refused submission);
                               ///< Foreign: whose GPUs
    int gpus = 0;              ///< Foreign: GPUs of the machine held outside the service
};

/// "started", "finished", ... (logs, tests).
const char* to_string(ExecEvent::Kind k);

inline constexpr Seconds kNever = std::numeric_limits<Seconds>::max() / 4;

class Executor {
public:
    virtual ~Executor() = default;
    /// Launches attempt `r.attempt` of run r at t, its workers placed as `r.placement`: Starting.
    virtual void launch(Seconds t, const ExecRun& r) = 0;
    /// Starts a stop's wind-down at t (the owner's stop, a time limit or a preemption): the
    /// checkpoint signal to every worker, SIGKILL after the grace; StopDone when all are gone.
    virtual void stop(Seconds t, std::int64_t run) = 0;
    /// Forgets run `run` (ended, or released after a failure); a real executor kills whatever
    /// is left of it.
    virtual void forget(std::int64_t run) = 0;
    /// Re-adopts a run after a restart, in `phase` since `since_s`, `executed_s` of work done
    /// before that (Running: before the current running stretch).
    virtual void restore(const ExecRun& r, ExecPhase phase, Seconds since_s, Seconds executed_s) = 0;
    /// The time of the next event (kNever when none is known yet).
    virtual Seconds next_event_s() const = 0;
    /// Removes and returns the next event if it is due at or before `now` (in time order).
    virtual bool pop_due(Seconds now, ExecEvent& out) = 0;
    /// Work done by run `run` by time t (seconds running), for its record.
    virtual Seconds executed_s(std::int64_t run, Seconds t) const = 0;
    /// The service is stopping cleanly (SIGTERM/SIGINT), its loop is over: an executor whose
    /// workers do not outlive the service (the local executor) gives them the checkpoint signal
    /// and their grace now, and returns true; the service then records their attempts as
    /// preempted (the runs wait again after the restart). Others return false (their workers go
    /// on; a restart re-adopts them). Called once, without the service's lock; no event after it.
    virtual bool shutdown() { return false; }
    /// The machines it runs on (ids), all up at t. Machine losses and recoveries come back as
    /// MachineLost / MachineBack events; the service fails the runs on a lost machine.
    virtual void set_machines(const std::vector<std::int64_t>& ids, Seconds t) {
        (void)ids, (void)t;
    }
    /// The leader lease's generation (store/lease.hpp), the fencing token of replicas on
    /// PostgreSQL: set once before the service is opened (0 or never: one service, no token).
    /// An executor that commands a resource manager stamps its commands with it (Slurm:
    /// exec/slurm_client.hpp set_generation); the node agents get it with every reply
    /// (exec/agent_hub.hpp).
    virtual void set_fencing_generation(std::int64_t generation) { (void)generation; }
    /// Called once by the service before anything else: its clock, and a callback that wakes
    /// its loop when events are queued from another thread (thread-safe, cheap).
    virtual void attach(std::function<Seconds()> now, std::function<void()> wake) {
        (void)now, (void)wake;
    }
    /// Whether the service tells it its pending runs (waiting()): an executor that shows the
    /// demand to its resource manager (Slurm: a held job per pending run, `squeue -t PD`).
    virtual bool shows_waiting() const { return false; }
    /// Run `r` waits at t (submitted, or back to pending) for `reason` (the run's reason); called
    /// again when the reason changes. It ends with launch() (placed) or forget() (ended).
    virtual void waiting(Seconds t, const ExecRun& r, const std::string& reason) { (void)t, (void)r, (void)reason; }
    /// Whether the executor runs `argv` commands (false: the simulated one ignores them).
    virtual bool runs_commands() const { return false; }
    /// Whether a run holds its GPUs only from its Started event to its attempt's end event
    /// (StopDone, Released, Finished), as with Slurm, which allocates at the job's start and
    /// frees at the segment's end: the service's count then places the workers at Started (the
    /// time between the decision and Started waits, not held) and the attempt record takes the
    /// Started and end events' times as its bounds. The executor stamps those events with the
    /// times its resource manager records (docs/slurm.md, "Accounting").
    virtual bool holds_from_start() const { return false; }
    /// Latest GPU utilization of (machine, gpu index) in percent, -1 when not sampled.
    virtual double gpu_utilization(std::int64_t machine, int gpu) const {
        (void)machine, (void)gpu;
        return -1;
    }
    /// True when the workers write their logs themselves (Slurm: the job, as its workspace's
    /// user) rather than the service from a pipe: the service then serves a log file whoever
    /// owns it (still never through a link, nor one with other hard links).
    virtual bool logs_written_by_workers() const { return false; }
    /// Log file of a worker's attempt (empty when this executor keeps none on this machine).
    virtual std::string log_path(const std::string& workspace, const std::string& run, int attempt,
                                 int worker) const {
        (void)workspace, (void)run, (void)attempt, (void)worker;
        return "";
    }
};

}  // namespace astraeus::exec
