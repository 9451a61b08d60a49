// The worker sandbox: what keeps one workspace's workers from reaching anything that is not
// their own, with the kernel's mechanisms (docs/security.md). Used by the worker runner
// (exec/worker_runner.hpp), hence by the local executor and the node agent alike.
//   - identity: each workspace's workers run as its own uid (a configured user, or
//     uid_base + the workspace's id, no /etc/passwd entry needed), never root unless the
//     configuration says `allow_root`;
//   - one cgroup per worker of an attempt (cgroup v2 where writable, v1 pids/memory/devices
//     controllers where present): every process it starts is in it and cannot leave it (the
//     cgroup files belong to root); the worker is gone only when the cgroup is empty; a kill is
//     `cgroup.kill` (v2) or SIGKILL to every listed process (v1); pids.max and the memory limit
//     from the configuration; NVIDIA devices (major 195) denied except the assigned GPUs;
//   - a pid namespace (the worker's first process is an init of ours: the namespace dies with
//     it, so nothing outlives the attempt, and other runs' processes cannot be seen or
//     signalled) and a mount namespace in which the service's private directories are covered
//     by an empty tmpfs, the run's own folders bound back at their paths, /tmp and /dev/shm
//     private tmpfs, /proc the namespace's own.
// probe() says at start which of these this machine allows, and why not.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"

namespace astraeus::exec::sandbox {

/// The configuration (`local.sandbox` in the service's config, `astraeus agent` flags).
struct SandboxConfig {
    bool enabled = true;               ///< false: none of it (workers as before: one process group)
    std::optional<bool> require_full;  ///< refuse to start unless every protection is on; unset: on as root
    std::uint64_t memory_bytes = 0;    ///< per worker (its cgroup); 0: no limit
    std::int64_t pids_max = 4096;      ///< processes+threads per worker; 0: no limit
    std::uint32_t uid_base = 3000000;  ///< workspace W runs as uid_base + W's id (gid the same)
    std::uint32_t uid_count = 1000000; ///< ids >= uid_count are refused
    std::map<std::string, std::string> users;  ///< workspace name -> Unix user (wins over the range)
    std::vector<std::string> hide;     ///< directories covered by an empty tmpfs in the worker's view
};

/// One protection: on or off, and why when off.
struct Protection {
    std::string name;  ///< identity, cgroup, pids_limit, memory_limit, gpu_devices, pid_namespace, mount_namespace
    bool on = false;
    std::string why;   ///< when off: the reason; when on: how (e.g. "cgroup v2 at ...")
};

/// What this machine allows, found by trying (probe()).
struct Probe {
    bool root = false;
    bool namespaces = false;     ///< unshare(CLONE_NEWPID|CLONE_NEWNS) works
    std::string v2_parent;       ///< writable cgroup v2 folder for the workers' cgroups ("": none)
    bool v2_kill = false;        ///< cgroup.kill exists there
    bool v2_pids = false, v2_memory = false;  ///< the v2 controllers enabled for children
    std::string v1_pids, v1_memory, v1_devices;  ///< writable v1 folders ("": none)
    std::vector<Protection> protections;
    /// True when every protection is on.
    bool full() const;
    /// "name (why); ..." of the protections that are off ("" when none).
    std::string missing() const;
};

/// Tries each mechanism for `instance` (a name for this service or agent, e.g. "local" or
/// "agent-gpu-1"; its cgroups go under <parent>/astraeus-<instance>). `cfg.enabled == false`
/// turns every protection off ("disabled by the configuration").
Probe probe(const SandboxConfig& cfg, const std::string& instance);

/// Kills and removes every cgroup left under this instance's folders (a previous life's
/// workers). Returns how many were found.
int sweep(const Probe& p);

/// Who a worker runs as.
struct Identity {
    bool drop = false;  ///< change uid/gid (false: stay the service's user)
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
    std::string user;   ///< USER/LOGNAME ("astraeus-<uid>" without a passwd entry)
    std::string home;   ///< HOME ("" : keep the service's)
};

/// The identity of `workspace` (its id `workspace_id` >= 0): the configured user when mapped,
/// else as root uid_base + id, else (not root) the service's own user. Root only with
/// `allow_root` (a legacy `run_as_user`, when set, is every workspace's user).
/// Errors: an unknown mapped user, an id outside the range.
Result<Identity> identity_for(const SandboxConfig& cfg, bool allow_root, const std::string& run_as_user,
                              const std::string& workspace, std::int64_t workspace_id);

/// Limits of one worker's cgroup.
struct Limits {
    std::uint64_t memory_bytes = 0;
    std::int64_t pids_max = 0;
    std::optional<std::vector<int>> gpus;  ///< set: NVIDIA devices other than these are denied
};

/// One worker's cgroup(s): created before its launch, removed after it is gone.
class Cgroup {
public:
    Cgroup() = default;
    Cgroup(Cgroup&& o) noexcept;
    Cgroup& operator=(Cgroup&& o) noexcept;
    Cgroup(const Cgroup&) = delete;
    Cgroup& operator=(const Cgroup&) = delete;
    ~Cgroup();

    /// Makes `name` (letters, digits, '-', '_', '.') under every folder the probe found and sets
    /// the limits. Errors name the file that could not be written.
    static Result<Cgroup> create(const Probe& p, const std::string& name, const Limits& l);
    /// Files ("cgroup.procs" of each folder) open for writing: the child writes "0" in each.
    const std::vector<int>& join_fds() const { return join_fds_; }
    /// The one of join_fds() that joins a v1 memory hierarchy's folder (-1: none). A pid
    /// namespace's init stays out of it: only the worker's processes are charged and chosen by
    /// the memory limit's OOM killer (the init, a copy of the service, would be the largest).
    int memory_join_fd() const { return memory_join_fd_; }
    /// Closes join_fds (the parent, once the child has started).
    void close_join_fds();
    bool active() const { return !dirs_.empty(); }
    /// SIGKILL to every process in it (cgroup.kill when v2; else each listed process).
    void kill() const;
    /// No process left in it.
    bool empty() const;
    /// Removes the folders (when empty). Idempotent.
    void remove();
    /// Whether a memory limit killed something (v1 memory.oom_control's oom_kill, v2 memory.events).
    std::int64_t oom_kills() const;

private:
    std::vector<std::string> dirs_;  ///< the v2 folder first when there is one
    std::string procs_dir_;          ///< where the processes are listed
    bool v2_kill_ = false;
    std::string memory_dir_;
    bool memory_v2_ = false;
    std::vector<int> join_fds_;
    int memory_join_fd_ = -1;
};

/// The folders every user of a machine may write: each worker gets its own (an empty tmpfs, mode
/// 1777, in its mount namespace), so nothing one run leaves there reaches another run, another
/// workspace or the machine (/var/tmp and /run/lock were shared before).
inline constexpr const char* kPrivateTmpDirs[] = {"/tmp", "/dev/shm", "/var/tmp", "/run/lock"};

/// What the child does before it runs the worker, prepared before fork (enter() makes only
/// system calls: async-signal-safe).
struct ChildPlan {
    std::vector<int> join_fds;     ///< cgroup.procs files: "0" written in each
    int worker_join_fd = -1;       ///< joined by the init's worker only (Cgroup::memory_join_fd)
    bool mounts = false;           ///< set up the mount namespace (the child is in a new one)
    std::vector<std::string> hide; ///< tmpfs over each
    static constexpr std::size_t kMaxBinds = 16;
    struct Bind {
        std::string target;               ///< the real folder, bound back at its own path
        std::vector<std::string> mkdirs;  ///< folders to make in the tmpfs on the way, in order
    };
    std::vector<Bind> binds;
    Identity id;
};

/// Prepares `plan`'s binds: each folder in `keep` that lies under a folder of `plan.hide` is
/// bound back at its path (opened by the child in its namespace, before the tmpfs covers it).
/// Errors: a folder that cannot be opened, more than kMaxBinds.
Result<void> plan_binds(ChildPlan& plan, const std::vector<std::string>& keep);
/// Releases what the plan holds (nothing since the child opens the folders itself).
void close_plan(ChildPlan& plan);

/// In the child (after fork/clone, as root when dropping): joins the cgroups, sets up the
/// mounts (/proc is mounted anew: call it as the first process of a new pid namespace), drops
/// to the identity with no_new_privs. Returns 0 or the errno of the step that failed.
/// enter() = enter_setup() then drop_identity(); a pid namespace's init calls them apart, to
/// clone its worker between the two (worker_runner.cpp).
int enter(const ChildPlan& plan);
/// The cgroups and the mounts of enter(). Returns 0 or an errno.
int enter_setup(const ChildPlan& plan);
/// Sets the supplementary groups (`n` of `groups`), the gid and the uid of a process that has
/// one thread, by the system calls (never glibc's wrappers, which wait for threads a cloned
/// child does not have). Async-signal-safe. Returns 0 or the errno of the step that failed.
int set_identity(uid_t uid, gid_t gid, const gid_t* groups, std::size_t n);
/// The identity of enter() (setgroups, setgid, setuid, no_new_privs) when `plan.id.drop`.
/// Returns 0 or an errno.
int drop_identity(const ChildPlan& plan);
/// Writes `value` ("-1000" .. "1000") to /proc/self/oom_score_adj. Returns 0 or an errno.
/// Lowering it needs CAP_SYS_RESOURCE; a privileged write also sets the floor that the process
/// (and its later children) may lower it to again.
int set_oom_score_adj(const char* value);

}  // namespace astraeus::exec::sandbox
