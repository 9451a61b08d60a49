// A thin C++ face of libslurm (Debian's libslurm-dev, Slurm 22.05) with the verbs an external
// scheduler needs (docs/slurm.md): submit a batch job held and requeueable, admit it (SiteFactor =
// its rank, ReqNodeList = the nodes Astraeus chose, release), the checkpoint signal to the whole
// job (batch shell included), requeue-held, resume (release with StartTime = now + 1: a relaunch
// in the requeue's second fails the job), cancel; and the state of jobs, nodes and partitions.
// No scraping of human-oriented output. Errors carry Slurm's own message (slurm_strerror).
// libslurm reads SLURM_CONF (or the default slurm.conf); open() must be called once per process.
// Thread safety: libslurm's RPCs are thread-safe; the client holds no state besides the config.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"
#include "astraeus/exec/slurm_foreign.hpp"

namespace astraeus::exec::slurm {

/// A batch job to submit held.
struct JobSpec {
    std::string name;
    std::string comment;            ///< the job's comment (`squeue -o %k`; empty: none)
    std::string command;            ///< `scontrol show job`'s Command= (empty: none, "(null)")
    std::string partition;          ///< empty: the default partition
    std::string account;            ///< empty: the user's default account
    int nodes = 1;                  ///< exactly this many nodes (the gang)
    int gpus_per_node = 0;          ///< gres gpu per node (0: none)
    std::string script;             ///< the batch script ("#!/bin/bash\n...")
    std::string workdir;            ///< the job's working directory
    std::string output;             ///< stdout+stderr file, opened in append mode
    std::vector<std::string> env;   ///< "KEY=VALUE" lines: the job's whole environment
    /// The job's Unix user and group (`sbatch --uid/--gid`: only root or SlurmUser may submit
    /// for another user); unset: this process's own.
    std::optional<std::uint32_t> uid, gid;
    std::string name_user;          ///< the user's name, for messages
};

/// Slurm's base job states (job_state & JOB_STATE_BASE).
enum class JobState : std::uint8_t {
    Pending, Running, Suspended, Complete, Cancelled, Failed, Timeout, NodeFail, Preempted,
    BootFail, Deadline, OutOfMemory, Unknown
};
/// "PENDING", "RUNNING", ... (Slurm's names; "UNKNOWN" for a state outside 22.05's list).
const char* to_string(JobState s);

struct JobInfo {
    std::uint32_t id = 0;
    std::string name;
    std::string work_dir;        ///< the job's working directory (Astraeus: the run's folder)
    JobState state = JobState::Unknown;
    bool completing = false;     ///< JOB_COMPLETING: processes still being cleaned up
    bool held = false;           ///< priority 0 (held by admin/user or requeued held)
    /// Held by an administrator (`scontrol hold`, Reason=JobHeldAdmin); Astraeus's own holds are
    /// user holds (JobHeldUser) so that the two can be told apart.
    bool admin_held = false;
    std::uint32_t priority = 0;
    std::string reason;          ///< why it is pending, in Slurm's words ("Resources", "JobHeldUser")
    std::uint32_t restarts = 0;  ///< restart_cnt: segments started before the current one
    /// The fencing generation stamped on the job (AdminComment "astraeus-generation=N"; 0: none).
    std::int64_t generation = 0;
    std::string nodes;           ///< hostlist of the allocation ("" when none)
    Seconds start_s = 0;         ///< of the current segment (0: none)
    Seconds end_s = 0;
    int exit_code = 0;           ///< the batch script's exit status (WEXITSTATUS)
    int exit_signal = 0;         ///< the signal that ended it (0: none)
};

struct NodeInfo {
    std::string name;
    std::string addr;            ///< NodeAddr (the host to reach it at)
    int gpus = 0;                ///< gres gpu count
    bool down = false;           ///< DOWN or FAIL
    bool drain = false;          ///< DRAIN (draining or drained)
    std::vector<std::string> partitions;
};

struct PartitionInfo {
    std::string name;
    std::vector<std::string> nodes;  ///< expanded, in Slurm's order
};

class SlurmClient {
public:
    /// Initialises libslurm from `slurm_conf` (empty: SLURM_CONF or the default) and checks that
    /// slurmctld answers. Errors: the config cannot be read, the controller does not answer.
    static Result<SlurmClient> open(const std::string& slurm_conf);

    /// Submits `spec` held (priority 0) and requeueable; returns the job id.
    Result<std::uint32_t> submit_held(const JobSpec& spec) const;
    /// Admit or resume: ReqNodeList = `nodes` (comma-separated node names), SiteFactor = `rank`
    /// (priority = rank under multifactor with zero weights), StartTime = now_s + 1, release.
    /// `comment` (non-empty): the job's comment set in the same request (the run's command again,
    /// after the waiting reason).
    Result<void> release_on(std::uint32_t job, const std::string& nodes, std::int64_t rank,
                            Seconds now_s, const std::string& comment = {}) const;
    /// Sets the job's comment (`squeue -o %k`, `scontrol show job`'s Comment=).
    Result<void> set_comment(std::uint32_t job, const std::string& comment) const;
    /// Sends `sig` to every step of the job and its batch shell (KILL_FULL_JOB), or, with
    /// `steps_only`, to the tasks of its steps only (every worker; not the batch shell or srun).
    Result<void> signal(std::uint32_t job, int sig, bool steps_only = false) const;
    /// Sends `sig` to the job's batch shell only (KILL_JOB_BATCH); an error when the job is not
    /// running.
    Result<void> signal_batch(std::uint32_t job, int sig) const;
    /// Requeues the job in the held state (it goes PENDING with priority 0 within ~0.5 s).
    Result<void> requeue_hold(std::uint32_t job) const;
    /// Holds a pending job (priority 0) with a user hold (JobHeldUser, as `scontrol uhold`).
    Result<void> hold(std::uint32_t job) const;
    /// Sets a pending job's earliest start (StartTime) to `at_s` (Unix seconds): a job held by
    /// an administrator gets a far one, so that their release does not start it on the nodes
    /// chosen for it earlier (release_on() sets the next one).
    Result<void> set_begin(std::uint32_t job, Seconds at_s) const;
    /// The fencing token (docs/slurm.md, "Several service replicas"): with `generation` > 0,
    /// every submission and every update of a job (release_on, hold, set_begin, stamp) carries
    /// AdminComment "astraeus-generation=N" in the same request, and Astraeus's job_submit.lua
    /// in slurmctld refuses an update whose generation is below the one the job is stamped
    /// with: a deposed leader's late placement or release of a job that the new leader has
    /// adopted is refused by Slurm itself. 0 (SQLite, one service): nothing is stamped.
    /// Set once before the client is used from other threads.
    void set_generation(std::int64_t generation) { generation_ = generation; }
    std::int64_t generation() const { return generation_; }
    /// Stamps the job with this client's generation (an update with the AdminComment alone):
    /// a new leader's first command to a job it adopts. Errors: Slurm's refusal (the job is
    /// stamped with a newer generation: this client is deposed), no such job.
    Result<void> stamp(std::uint32_t job) const;
    /// Cancels the job (SIGKILL to everything); Ok when it is already gone.
    Result<void> cancel(std::uint32_t job) const;

    /// Who cancelled job `job`, from Slurm's accounting (slurmdbd's record of the job: the uid
    /// of the request that ended it, as `sacct` prints "CANCELLED by UID"). Nullopt: no
    /// accounting storage, no record yet, or no uid in it.
    std::optional<std::uint32_t> cancelled_by(std::uint32_t job) const;

    /// The accounts slurmdbd knows (`sacctmgr list account`). Nullopt: no accounting storage
    /// or slurmdbd does not answer.
    std::optional<std::vector<std::string>> accounts() const;

    /// Jobs known to slurmctld (finished ones for MinJobAge), all users.
    Result<std::vector<JobInfo>> jobs() const;
    Result<std::vector<NodeInfo>> nodes() const;
    /// Every job holding an allocation now (RUNNING, SUSPENDED or completing), all users, with
    /// its GPUs per node (one slurm_load_jobs with SHOW_DETAIL: `scontrol -d show job`).
    Result<std::vector<JobAlloc>> allocations() const;
    Result<std::vector<PartitionInfo>> partitions() const;
    /// The controller's SchedulerType ("sched/backfill", "sched/builtin"; `scontrol show config`),
    /// read with slurm_load_ctl_conf. Errors: the controller does not answer.
    Result<std::string> scheduler_type() const;

private:
    SlurmClient() = default;
    std::string fence_comment() const;
    /// A failed update's error: Slurm's, or the fence's refusal when the job is stamped with a
    /// newer generation than this client's.
    std::unexpected<Error> update_fail(std::uint32_t job, const std::string& what) const;
    std::int64_t generation_ = 0;
};

/// The generation in an AdminComment ("astraeus-generation=N" anywhere in it; 0 when absent
/// or malformed).
std::int64_t generation_in(const std::string& admin_comment);

/// The gpu count in a node's gres string ("gpu:8", "gpu:a100:4(S:0-1),nic:2" -> 8, 4); 0 if none.
int gres_gpus(const std::string& gres);

}  // namespace astraeus::exec::slurm
