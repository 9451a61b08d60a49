// The worker runner: launches a run's worker processes on this machine and sees them through to
// the end. Shared by the local executor (exec/local_executor.hpp) and the node agent.
//   - each worker is fork/exec'd in its own process group (setpgid), with exactly the
//     environment it is given (worker_env() builds the contract's variables), in its working
//     directory, stdin from /dev/null, stdout and stderr into one log file capped at
//     `log_cap_bytes` (the output past the cap is read and dropped, a note says so);
//   - signals go to the whole group; stop() sends the checkpoint signal (SIGTERM by default)
//     and SIGKILL after the grace; a worker is "gone" when its group has no process left;
//   - when its leader exits on its own, what is left of its group is killed (SIGKILL): nothing
//     outlives its attempt; with the sandbox (spec.sandbox.on, exec/sandbox/sandbox.hpp) the
//     worker's first process is the init of its own pid namespace (a process that leaves the
//     group with setsid dies with the namespace) in its own cgroup, and "gone" means the cgroup
//     is empty; without it a process that calls setsid escapes (a limit); once that init has
//     cloned the worker it execs astraeus-init (exec/init_main.cpp: it reaps and passes the
//     worker's status on, holding none of the service's pages; missing: the init stays a copy);
//   - launch_all() starts a gang's workers at once: every clone first, then every execve's
//     confirmation (their namespace setups overlap);
//   - every child is reaped (waitpid on the group; the runner makes its process a child
//     subreaper so orphaned group members come back to it), the destructor kills and reaps all;
//   - never as root unless configured: as root, workers run as `run_as_user` when set, else
//     launch() refuses unless `allow_root`; a worker run as `run_as_user` gets that user's
//     HOME, USER and LOGNAME.
// Thread safety: not thread-safe (one owner; the local executor serialises with its lock).
#pragma once
#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/exec/fork_thread.hpp"
#include "astraeus/exec/sandbox/sandbox.hpp"

namespace astraeus::exec {

struct RunnerConfig {
    int stop_signal = SIGTERM;                ///< the checkpoint signal
    double grace_s = 30;                      ///< SIGKILL this long after the checkpoint signal
    std::uint64_t log_cap_bytes = 64ull << 20;  ///< per worker log file
    std::string run_as_user;                  ///< when root: the Unix user of the workers
    bool allow_root = false;                  ///< when root without run_as_user: run as root
    /// What the machine allows (sandbox::probe at start); null: no sandbox.
    std::shared_ptr<const sandbox::Probe> sandbox;
    /// Folders covered by an empty tmpfs in the sandboxed workers' view (the service's data
    /// folder, the other runs' folders); /tmp and /dev/shm are always made private.
    std::vector<std::string> hide;
    /// astraeus-init (exec/init_main.cpp), which a sandboxed worker's namespace init execs once it
    /// has cloned the worker (so that it holds none of the service's pages); "": `astraeus-init`
    /// beside this program (/proc/self/exe). Missing: the init stays a copy of the service (said
    /// once on stderr).
    std::string init_program;
};

/// How one worker is confined (when `on` and the runner has a probe).
struct WorkerSandbox {
    bool on = false;
    sandbox::Identity id;             ///< who it runs as (sandbox::identity_for)
    std::string cgroup;               ///< its cgroup's name, unique on this machine
    sandbox::Limits limits;
    std::vector<std::string> keep;    ///< folders bound back inside hidden ones (its run's)
};

/// One worker process to launch.
struct WorkerSpec {
    std::vector<std::string> argv;           ///< argv[0] without '/' is looked up in env PATH
    std::map<std::string, std::string> env;  ///< its whole environment
    std::string workdir;                     ///< must exist
    std::string log_path;                    ///< created (parents too), truncated
    std::string progress_path;               ///< polled for the step counter; empty: none
    int log_fd = -1;                         ///< >= 0: the log, already open (the runner owns it); log_path is then only its name
    /// This worker's log cap in bytes (the service's per-workspace log quota may give less than
    /// the runner's `log_cap_bytes`, down to 0); unset: the runner's.
    std::optional<std::uint64_t> log_cap_bytes;
    WorkerSandbox sandbox;
};

/// Who a worker is, for the contract's environment (docs/agents.md).
struct WorkerIdentity {
    std::string run;
    std::string workspace;
    int worker = 0;
    int workers = 1;
    int attempt = 1;
    std::vector<int> gpus;          ///< CUDA_VISIBLE_DEVICES
    std::string master_addr = "127.0.0.1";
    int master_port = 29500;
    int local_rank = 0;             ///< index among the run's workers on the same machine
    std::string checkpoint_dir;
    std::string progress_file;
};

/// The worker's environment: PATH, HOME, USER, LOGNAME, LANG, LC_ALL, TZ, TMPDIR from `base`
/// when set there (PATH defaults to /usr/local/bin:/usr/bin:/bin), then the run's own `run_env`,
/// then the contract's variables (ASTRAEUS_*, CUDA_VISIBLE_DEVICES, MASTER_ADDR, MASTER_PORT,
/// RANK, WORLD_SIZE, LOCAL_RANK, NODE_RANK), which win over the run's.
std::map<std::string, std::string> worker_env(const WorkerIdentity& id,
                                              const std::map<std::string, std::string>& run_env,
                                              const std::map<std::string, std::string>& base);
/// The number of a signal by name ("SIGTERM" or "TERM", also SIGINT, SIGHUP, SIGQUIT, SIGUSR1,
/// SIGUSR2); 0 for another name.
int signal_number(const std::string& name);
/// This process's environment as a map (for worker_env's `base`).
std::map<std::string, std::string> current_env();

/// The step counter in a progress file's text ("1200\n"); none when it is not a decimal integer.
std::optional<std::int64_t> parse_progress(const std::string& text);

class WorkerRunner {
public:
    using Clock = std::chrono::steady_clock;
    using Handle = std::uint64_t;

    /// What poll() saw happen to a worker.
    struct Report {
        enum class Kind : std::uint8_t { Exited, Progress, Gone };
        Kind kind;
        Handle worker;
        int exit_code = -1;   ///< Exited: the status, -1 when a signal ended it
        int signal = 0;       ///< Exited: the signal, 0 when it exited
        bool we_signalled = false;  ///< Exited: the runner had signalled its group
        std::int64_t step = 0;  ///< Progress
    };

    explicit WorkerRunner(RunnerConfig c);
    ~WorkerRunner();
    WorkerRunner(const WorkerRunner&) = delete;
    WorkerRunner& operator=(const WorkerRunner&) = delete;

    /// Launches a worker; returns once its program is running (execve succeeded) or has failed
    /// to start (then it is reported as Exited with code 127 by the next poll, the reason in its
    /// log: "cannot enter working directory 'D': ..." when chdir failed, "cannot run 'P': ..."
    /// when execve did). Errors: refusing to run as root, no such user, the log file or a pipe or fork failed.
    Result<Handle> launch(const WorkerSpec& spec);
    /// launch() for several workers at once (a gang's on this machine): every worker is prepared
    /// (log, cgroups, pipes) and cloned first, then every start's confirmation is awaited, so
    /// that their namespaces, mounts and execve overlap. One result per spec, in order, each as
    /// launch()'s (a failure of one does not stop the others).
    std::vector<Result<Handle>> launch_all(const std::vector<const WorkerSpec*>& specs);
    /// The path of astraeus-init in use ("" when not found: the inits are copies of the service).
    const std::string& init_program() const { return init_path_; }
    /// Whether its program started (execve succeeded).
    bool started(Handle h) const;
    /// As root with `run_as_user`: gives `path` to that user (the workers write there); else
    /// nothing. Errors name the path.
    Result<void> give_to_user(const std::string& path) const;
    /// Its process id (= process group id); 0 when unknown.
    pid_t pid(Handle h) const;
    /// Sends `sig` to the worker's process group (no-op when it is gone).
    void signal(Handle h, int sig);
    /// The checkpoint signal now, SIGKILL `grace_s` later if any process of the group is left
    /// (poll() escalates). Idempotent.
    void stop(Handle h);
    /// SIGKILL to the group now.
    void kill(Handle h);
    /// Drains logs, reaps, reads progress files, escalates stops past their grace. Waits up to
    /// `timeout_ms` for output when there is nothing to report. Reports in order of detection.
    std::vector<Report> poll(int timeout_ms);
    /// True when the worker's group has no process left (it has been reported Gone).
    bool gone(Handle h) const;
    /// Drops a gone worker's record (a live one is killed first and reaped by poll()).
    void forget(Handle h);
    /// Workers not yet gone.
    std::size_t live() const;
    /// Bytes of workers' output the last poll() wrote to their logs (output past a log's cap is
    /// not counted). A caller that polls with no wait, on a timer, polls again soon while workers
    /// write fast, so that their pipes never fill.
    std::uint64_t drained_last_poll() const { return drained_; }

private:
    struct Worker {
        pid_t pid = 0;
        int out_fd = -1;       ///< the read end of its stdout+stderr pipe
        int log_fd = -1;
        std::uint64_t logged = 0;
        std::uint64_t cap = 0;  ///< its log cap, bytes
        bool capped = false;
        std::string progress_path;
        std::int64_t last_step = -1;
        struct timespec progress_mtime {};
        bool exited = false;
        bool gone = false;
        bool signalled = false;
        bool forgotten = false;
        int exec_errno = 0;
        bool ns = false;         ///< its leader is the init of its pid namespace
        int status_fd = -1;      ///< ns: the read end on which the init writes the worker's wait status
        sandbox::Cgroup cg;
        std::uint64_t memory_limit = 0;
        std::optional<Clock::time_point> kill_at;
    };
    void drain(Worker& w);
    /// SIGKILL to everything of the worker: its cgroup, its group (its namespace with its init).
    void kill_all(Worker& w);
    /// No process of the worker left.
    bool empty(const Worker& w) const;
    void close_fds(Worker& w);
    struct Pending;
    /// The parent's side of a launch (everything before the clone); releases what it took on error.
    Result<void> prepare(Pending& p);
    /// Awaits the child's execve (or its failing step) and records the worker.
    Result<Handle> finish(Pending& p);

    RunnerConfig c_;
    int init_fd_ = -1;       ///< astraeus-init, open (close-on-exec) for execveat in the inits
    std::string init_path_;
    std::map<Handle, Worker> workers_;
    Handle next_ = 1;
    std::uint64_t drained_ = 0;  ///< output read by the last poll()
    ForkThread fork_thread_;  ///< every worker is forked from it (PR_SET_PDEATHSIG follows it)
};

}  // namespace astraeus::exec
