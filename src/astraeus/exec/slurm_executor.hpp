// The Slurm executor (`astraeus serve --executor slurm`): Slurm executes and places, Astraeus
// decides who runs and when (docs/slurm.md). Each run is one Slurm batch job, submitted held and
// requeueable at its first launch, with one task per node (srun) per worker:
//   launch   first attempt: submit held; every attempt: ReqNodeList = the machines Astraeus chose,
//            SiteFactor = a rank, StartTime = now + 1, release ("admit" / "resume")
//   stop     the checkpoint signal (SIGTERM) to the whole job, batch shell included
//            (KILL_FULL_JOB); when the job has exited, or after the grace, requeue-held; StopDone
//            once it is PENDING and held. The job is kept for the next launch (resume = release).
//   forget   the job is cancelled (a held job kept for a resume is cancelled only when no launch
//            follows within 60 s + the grace: the service forgets a run right before it places it
//            again, and that launch may wait for other runs' GPUs; at shutdown they are cancelled)
// Waiting runs (waiting(), shows_waiting()): a held job each from the first round that leaves
// the run pending, its comment the run's reason; launch() releases it in place.
// A thread polls slurmctld through libslurm every `poll_ms`: PENDING past pending_bound_s after
// the release -> held again + Withdrawn (slurm_pending.hpp); RUNNING -> WorkerStarted + Started;
// COMPLETED with exit 0 -> Finished; any other end (FAILED, NODE_FAIL, TIMEOUT, CANCELLED by
// someone else, OUT_OF_MEMORY), or a requeue by Slurm itself (node failure), -> Failed, the job
// requeued held, then Released; nodes DOWN/FAIL or DRAIN -> MachineLost, back -> MachineBack;
// GPUs of a node allocated to jobs this service did not submit (slurm_foreign.hpp), read once a
// second with the nodes -> Foreign (their count; 0 when they end).
// Administrators win (docs/slurm.md, "Sharing a cluster"): a job CANCELLED by anyone but this
// process (`scancel`) -> Cancelled (who: slurmdbd's record of the job, when: its end), never
// requeued; a job held by an administrator (`scontrol hold`, JobHeldAdmin) before it started or
// while parked -> Held (StartTime set far off, so that a release cannot start it on the nodes
// chosen earlier); released (`scontrol release`) -> held again by us (a user hold) and Unheld:
// the service places it again. Astraeus's own holds are user holds (JobHeldUser). A requeue of
// a running job by an administrator (`scontrol requeue`; none of its nodes down or drained) ->
// Preempted, held by us until placed again; `requeuehold` -> Preempted + Held; a held job left by
// an earlier process that an administrator holds is kept held at the next launch (Held), never
// cancelled by us (slurm_executor_admin.cpp).
// Stale ranks: before each release the run's current attempt is written into a file of the
// service's (attempt_file, sandbox/attempt_guard.hpp); the step sandboxes of older attempts kill
// themselves on reading it.
// Times: events carry Slurm's times where it records them (Started at the job's start_time,
// Finished at its end_time, StopDone/Released at the requeue that ended the segment), so that the
// service's ledger, which holds a run's GPUs from Started to the end event (holds_from_start()),
// equals Slurm's accounting of each segment (docs/slurm.md, "Accounting").
// Jobs: named astraeus-<workspace>-<run>, the run's command in the job's comment (`squeue -o %k`),
// submitted as the workspace's Unix user (the worker sandbox's identity, which must have a passwd
// entry) in its Slurm account (docs/slurm.md, "Tenants"); a missing user or a submission Slurm
// refuses fails the attempt with the reason (ExecEvent::detail), never a job as root.
// Restarts: restore() of a run this process has no job of adopts the run's job, found by its name
// (astraeus-*) and working directory (the run's folder), in the phase the service stored;
// launch() resumes a held job left by an earlier process (found the same way at start) instead of
// submitting another one.
// Machines: the service's machines of `--executor slurm` are the partitions' nodes, in order
// (slurm_machines(): every partition with GPU nodes, or only those Astraeus owns, `slurm.partitions`);
// the executor maps the service's machine ids to node names in that order. A job is submitted to
// the partition of its first node.
// Worker environment (set in the job; docs/slurm.md): ASTRAEUS_RUN, ASTRAEUS_WORKSPACE,
// ASTRAEUS_WORKER = RANK = NODE_RANK = SLURM_PROCID, ASTRAEUS_WORKERS = WORLD_SIZE, LOCAL_RANK = 0,
// ASTRAEUS_ATTEMPT = SLURM_RESTART_COUNT + 1, MASTER_ADDR (the first node's NodeAddr),
// MASTER_PORT, ASTRAEUS_CHECKPOINT_DIR, ASTRAEUS_PROGRESS_FILE, CUDA_VISIBLE_DEVICES (Slurm's
// gres binding). Files under runs_dir/<workspace>/<run>/ (a folder every node must see; the
// workspace's and run's folders belong to the job's user, 0700):
// checkpoint/, job.out (the batch shell, appended), attempt-K/worker-I.log.
// Steps: each task is `astraeus step-sandbox` around the worker (SlurmExecutorConfig::step_sandbox).
// Thread safety: the service serialises its calls; the poll thread shares state under a mutex
// and calls `wake` without holding it.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "astraeus/exec/executor.hpp"
#include "astraeus/exec/sandbox/sandbox.hpp"
#include "astraeus/exec/slurm_client.hpp"
#include "astraeus/exec/slurm_pools.hpp"
#include "astraeus/exec/slurm_pending.hpp"

namespace astraeus::exec {

struct SlurmExecutorConfig {
    std::string runs_dir = "astraeus-data/runs";
    int poll_ms = 100;
    Seconds grace_s = 10;        ///< after the checkpoint signal, before requeue-held
    /// A released job Slurm has not started this many seconds later (PENDING for anything but a
    /// hold: Resources, Priority) is taken back: held again, Withdrawn, its nodes withheld
    /// (slurm_pending.hpp) while the jobs outside Astraeus there at that moment hold them, or
    /// for `blocked_cool_off_s` when there are none.
    Seconds pending_bound_s = 5;
    Seconds blocked_cool_off_s = 30;
    /// Who a workspace's jobs run as (`sbatch --uid/--gid`): the worker sandbox's identity of
    /// the workspace (sandbox::identity_for over `identity`, `allow_root`, `run_as_user`; the
    /// local executor's), which must be a Unix user (a passwd entry) here and on the nodes.
    /// A service not running as root submits as itself.
    sandbox::SandboxConfig identity;
    bool allow_root = false;
    std::string run_as_user;
    /// Slurm account per workspace (`--account`); unmapped: the workspace's name; mapped to "":
    /// the user's default account in Slurm.
    std::map<std::string, std::string> accounts;
    /// The program each step runs as `PROGRAM gpu-sample` beside its worker (NVML on the node;
    /// empty: this process's own executable, which the nodes must see at the same path).
    std::string sampler;
    double sample_period_s = 10;  ///< the samplers' period (the service's utilization period)
    /// The steps' sandbox: each task runs `PROGRAM step-sandbox --hide ... --keep <run> -- worker`
    /// (exec/sandbox/step_sandbox.hpp: user, pid and mount namespaces; docs/slurm.md "What
    /// confines a step"). Off: the bare worker, as before.
    bool step_sandbox = true;
    /// A node that cannot make the namespaces (or lacks PROGRAM) fails the step, with the reason
    /// in job.out; otherwise the step runs unconfined and job.out says what is off and why.
    bool step_sandbox_required = false;
    /// Folders the workers must not see (the service's data directory, the runs' root,
    /// local.sandbox.hide): each covered by an empty tmpfs, the run's own folder bound back.
    std::vector<std::string> step_hide;
    /// The `astraeus` executable the steps run as the sandbox (empty: this process's own, which
    /// the nodes must see at the same path, as for the sampler).
    std::string step_program;
};

/// The pools of Slurm's partitions now (slurm_pools(): every partition with GPU nodes, or the
/// `owned` ones only). Errors: Slurm's, or slurm_pools()'s.
Result<std::vector<SlurmPool>> slurm_machines(const slurm::SlurmClient& c,
                                              const std::vector<std::string>& owned = {});

class SlurmExecutor final : public Executor {
public:
    SlurmExecutor(SlurmExecutorConfig c, slurm::SlurmClient client, std::vector<SlurmPool> pools);
    ~SlurmExecutor() override;

    void launch(Seconds t, const ExecRun& r) override;
    void stop(Seconds t, std::int64_t run) override;
    void forget(std::int64_t run) override;
    void restore(const ExecRun& r, ExecPhase phase, Seconds since_s, Seconds executed_s) override;
    Seconds next_event_s() const override;
    bool pop_due(Seconds now, ExecEvent& out) override;
    Seconds executed_s(std::int64_t run, Seconds t) const override;
    void set_machines(const std::vector<std::int64_t>& ids, Seconds t) override;
    void attach(std::function<Seconds()> now, std::function<void()> wake) override;
    /// Every job it submits or updates carries the generation (SlurmClient::set_generation);
    /// a job adopted at restore() is stamped with it before any other command.
    void set_fencing_generation(std::int64_t generation) override;
    bool runs_commands() const override { return true; }
    /// Every pending run has a held job (submitted by the poll thread, at most
    /// kWaitingSubmitsPerPoll a poll), its comment "astraeus waiting: REASON | COMMAND", updated
    /// at most every kReasonEveryS per job (docs/slurm.md, "What an administrator sees").
    bool shows_waiting() const override { return true; }
    void waiting(Seconds t, const ExecRun& r, const std::string& reason) override;
    static constexpr int kWaitingSubmitsPerPoll = 8;
    static constexpr int kReasonUpdatesPerPoll = 16;
    static constexpr Seconds kReasonEveryS = 5;
    bool holds_from_start() const override { return true; }
    /// The job (its workspace's user) writes the logs itself.
    bool logs_written_by_workers() const override { return true; }
    /// The Slurm account of `workspace`'s jobs ("" : the user's default).
    std::string account_of(const std::string& workspace) const;
    std::string log_path(const std::string& workspace, const std::string& run, int attempt,
                         int worker) const override;

    /// The Slurm job of a run (0: none), for tests and logs.
    std::uint32_t job_of(std::int64_t run) const;

private:
    /// AdminHeld: held by a Slurm administrator (Held sent), until released (Unheld).
    /// Waiting: a pending run's held job (waiting()), submitted by the poll thread.
    enum class Phase : std::uint8_t { Starting, Running, Stopping, Failed, Parked, AdminHeld, Done, Waiting };
    struct RunState {
        ExecRun r;
        std::uint32_t job = 0;
        Phase phase = Phase::Starting;
        Seconds executed_s = 0;
        Seconds running_since = -1;
        Seconds stop_deadline = 0;     ///< Stopping: requeue-held from then on
        Seconds released_s = -1;       ///< Starting: when released on its nodes, real clock
        std::string waiting_reason;    ///< Waiting/Parked: the run's reason to show (waiting())
        std::string shown_reason;      ///< the reason in the job's comment now ("": the command)
        Seconds shown_at = -1;         ///< when the comment was last set, real clock
        bool submit_failed = false;    ///< Waiting: the held job could not be submitted
        bool requeue_sent = false;
        /// Stopping: when the workers get the checkpoint signal (SIGTERM), after the batch shell
        /// wrote the lease end into the job's output; unset: sent.
        std::optional<std::chrono::steady_clock::time_point> term_at;
        std::uint32_t restarts_at_launch = 0;
        Seconds forgotten_at = -1;     ///< Parked and forgotten: cancel unless relaunched
        Seconds segment_end_s = -1;    ///< when Slurm ended the current segment, real clock
                                       ///< (-1: not yet)
        Seconds cancel_seen_s = -1;    ///< when a cancel by someone else was seen, real clock
        bool user_hold_seen = false;   ///< Parked: seen held by us (JobHeldUser) since parking
        bool uhold_sent = false;       ///< Stopping/Failed: our user hold sent once
        std::vector<std::int64_t> steps;  ///< each worker's last progress step (-1: none yet)
        std::vector<std::int64_t> sampled;  ///< each worker's last sample's time (-1: none yet)
        /// The job's last poll showed it COMPLETING: a requeue Slurm has not finished. Slurm
        /// ends it by setting BeginTime = now + cred_expire + 1, so a release before then is
        /// undone; launch() defers the release (`deferred`) to the poll that sees it done.
        bool completing_seen = false;
        struct Release {
            std::string nodes;
            std::int64_t rank = 0;
            std::string comment;
        };
        std::optional<Release> deferred;  ///< Starting: the release waiting for the requeue's end
    };
    /// The newest Slurm job of run `r` (its name and its working directory, the run's folder),
    /// for a run this process has no job of: after a restart of the service. Jobs that ended
    /// before `since_s` are not its (a run name used again). Nullopt: none, or Slurm unreachable.
    std::optional<slurm::JobInfo> find_job(const ExecRun& r, Seconds since_s) const;
    /// A time Slurm recorded (`slurm_s`, real clock) as the service's, seen at `t`: itself when
    /// the service's clock is the real one (time_scale 1), else `t` (and `t` when unknown, 0).
    Seconds slurm_time(Seconds slurm_s, Seconds t) const;
    void loop();
    void poll_jobs(Seconds now, std::vector<ExecEvent>& out);
    void poll_nodes(Seconds now, std::vector<ExecEvent>& out);
    /// A cancel by someone else (`scancel`), seen at `t`: true when handled (Cancelled sent, or
    /// waiting up to 3 s for slurmdbd's record of who); false when the job is not cancelled.
    bool poll_cancel(RunState& s, const slurm::JobInfo& j, Seconds t, std::vector<ExecEvent>& out);
    /// A released job Slurm did not start within the bound: held again, Withdrawn, its nodes
    /// withheld. False when it cannot be held (it has just started).
    bool take_back(RunState& s, const slurm::JobInfo& j, Seconds t, std::vector<ExecEvent>& out);
    /// Machine `node`'s Foreign event when its withheld GPUs (foreign GPUs, or all of them while
    /// blocked_) changed since the last one sent.
    void foreign_event(const std::string& node, Seconds t, std::vector<ExecEvent>& out);
    /// An administrator's hold or release of a job not running (Starting, Parked, AdminHeld).
    void poll_admin_hold(RunState& s, const slurm::JobInfo& j, Seconds t, std::vector<ExecEvent>& out);
    // --- slurm_executor_admin.cpp ------------------------------------------------------------
    /// Writes the run's current attempt into attempt_file(r) (sandbox/attempt_guard.hpp) right
    /// before a release: each step of an older attempt still running (a node whose slurmd died)
    /// kills its workers once it reads it. A failure is logged (the guard is then off).
    void mark_current_attempt(const ExecRun& r) const;
    /// `<runs_dir>/.attempts/<workspace>/<run>`: outside the run's folder, in folders of the
    /// service's that the job's user can read through but not write.
    std::string attempt_file(const ExecRun& r) const;
    /// Releases `s`'s held job on its nodes (ReqNodeList, SiteFactor `rank`, StartTime now + 1,
    /// the comment) after writing the current attempt; false, with the error, when Slurm refused.
    Result<void> release(RunState& s, const RunState::Release& how);
    /// A launch that cannot go on (the job not submitted or not released): Failed with `why` as
    /// the run's reason (and on stderr), Released, the run Parked.
    void fail_launch(RunState& s, Seconds t, const std::string& why, std::vector<ExecEvent>& out);
    /// A running job found PENDING with more restarts than at its launch, and not requeued by
    /// this process: when none of the nodes it was placed on is down or drained, an
    /// administrator's `scontrol requeue` (-> Preempted; held by us until placed again) or
    /// `requeuehold` (-> Preempted + Held: AdminHeld); true. False: a node failure (Failed).
    bool poll_admin_requeue(RunState& s, const slurm::JobInfo& j, Seconds t, std::vector<ExecEvent>& out);
    /// launch() of a held job an earlier process kept: when an administrator holds it
    /// (JobHeldAdmin), it is not released: AdminHeld, Held; true.
    bool keep_admin_hold(RunState& s, Seconds t, std::vector<ExecEvent>& out);
    /// The workers' files in the run's folder on the shared file system (attempt folder
    /// `restarts` + 1, as the batch script names it): ASTRAEUS_PROGRESS_FILE, a Progress event
    /// for each step above the last one seen; the step's GPU sampler's (`gpu-sample`), a
    /// Utilization event for each newer sample.
    void poll_worker_files(RunState& s, std::uint32_t restarts, Seconds now,
                           std::vector<ExecEvent>& out) const;
    /// The job of run `r` as far as who submits it: its user (the workspace's identity) and
    /// account, its folders made and given to that user. Errors: no such user, a folder.
    Result<slurm::JobSpec> submitter(const ExecRun& r) const;
    std::string script(const RunState& s) const;
    /// The whole job to submit for s.r, `first` its first node ("": not placed yet: the run's
    /// pool's partition). Errors: submitter()'s.
    Result<slurm::JobSpec> job_spec(const RunState& s, const std::string& first) const;
    /// The run's command as the job's comment (its words quoted).
    static std::string command_comment(const ExecRun& r);
    /// Waiting runs: their held jobs submitted, their comments set to the reason (bounded).
    void poll_waiting();
    std::string run_dir(const ExecRun& r) const;
    /// "astraeus-<workspace>-<run>" (what `squeue -o %j` shows an administrator).
    static std::string job_name(const ExecRun& r);
    std::string node_of(const WorkerPlacement& p) const;
    Seconds now() const;
    /// Queues `evs` (kept in time order) and wakes the poll thread, which wakes the service
    /// (never from here: launch() and stop() are called under the service's lock). Empties evs.
    void push(std::vector<ExecEvent>& evs);

    SlurmExecutorConfig c_;
    slurm::SlurmClient client_;
    std::vector<SlurmPool> pools_;
    std::function<Seconds()> now_;
    std::function<void()> wake_;

    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool quit_ = false;
    bool wake_pending_ = false;  ///< events queued by push(): the poll thread wakes the service
    std::map<std::int64_t, RunState> runs_;
    std::map<std::int64_t, std::string> machine_node_;   ///< service machine id -> node name
    std::map<std::string, std::int64_t> node_machine_;
    std::map<std::string, std::string> node_addr_;
    std::map<std::string, bool> node_up_;
    std::map<std::string, slurm::ForeignNode> foreign_;  ///< node -> GPUs held outside us
    std::map<std::string, slurm::BlockedNode> blocked_;  ///< nodes that did not start our job
    std::map<std::string, std::pair<int, std::string>> foreign_sent_;  ///< last Foreign event
    std::deque<ExecEvent> events_;
    Seconds last_nodes_poll_ = 0;
    /// Held jobs of this data directory found at start that no run has claimed yet (job id ->
    /// when found): an earlier process kept them for a resume. Cancelled when still unclaimed
    /// 60 s + the grace later (the run ended, or its placement is far off), or at shutdown;
    /// those an administrator holds are left to the administrator (launch() keeps the hold).
    struct Orphan {
        Seconds found_s = 0;
        std::string name, work_dir;
        bool admin_held = false;  ///< held by an administrator: never cancelled by Astraeus
    };
    std::map<std::uint32_t, Orphan> orphans_;
    std::thread thread_;
};

}  // namespace astraeus::exec
