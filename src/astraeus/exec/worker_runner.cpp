#include "astraeus/exec/worker_runner.hpp"

#include "astraeus/exec/sandbox/init_reap.hpp"
#include "astraeus/exec/sandbox/safe_fs.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <cerrno>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace astraeus::exec {

namespace {

std::string errno_text(int e) { return std::strerror(e); }

/// The step of a worker's start that failed in the child (sent to the parent with its errno).
enum class ChildStep : int { Setup = 1, Workdir = 2, Exec = 3 };

/// argv[0] looked up in `path` (colon-separated) unless it names a path; itself when not found
/// (execve then fails with ENOENT).
std::string resolve(const std::string& prog, const std::string& path) {
    if (prog.find('/') != std::string::npos) return prog;
    std::string dir;
    auto try_dir = [&]() -> bool {
        const std::filesystem::path cand = std::filesystem::path(dir.empty() ? std::string(".") : dir) / prog;
        return ::access(cand.c_str(), X_OK) == 0;
    };
    for (char ch : path) {
        if (ch != ':') {
            dir.push_back(ch);
            continue;
        }
        if (try_dir()) return (std::filesystem::path(dir.empty() ? std::string(".") : dir) / prog).string();
        dir.clear();
    }
    if (try_dir()) return (std::filesystem::path(dir.empty() ? std::string(".") : dir) / prog).string();
    return prog;
}

void write_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        const ssize_t k = ::write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        p += k;
        n -= static_cast<std::size_t>(k);
    }
}


/// What the child needs (built before the fork: the child only makes system calls).
struct ChildArgs {
    int out_w = -1, err_w = -1, status_w = -1;
    pid_t parent = 0;
    bool ns = false;  ///< the child is the first process of a new pid namespace: be its init
    int stop_signal = SIGTERM;
    const sandbox::ChildPlan* plan = nullptr;  ///< the sandbox's steps (null: none)
    bool drop = false;  ///< without the sandbox: the legacy exec user
    uid_t uid = 0;
    gid_t gid = 0;
    const std::vector<gid_t>* groups = nullptr;
    const char* prog = nullptr;
    char** argv = nullptr;
    char** envp = nullptr;
    const char* workdir = nullptr;
    int init_fd = -1;  ///< ns: astraeus-init, exec'd by the init once its worker is cloned (-1: none)
    const char* init_uid = nullptr;  ///< its identity arguments (when the plan drops it)
    const char* init_gid = nullptr;
    const char* init_groups = nullptr;
};

/// {step, errno} to the parent: which step failed (ChildStep) and why.
[[noreturn]] void die(const ChildArgs& a, ChildStep step, int e) {
    const int msg[2] = {static_cast<int>(step), e};
    (void)!::write(a.err_w, msg, sizeof msg);
    ::_exit(127);
}

[[noreturn]] void exec_worker(const ChildArgs& a) {
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(a.out_w, 1) < 0 || ::dup2(a.out_w, 2) < 0)
        die(a, ChildStep::Setup, errno);
    if (a.workdir && ::chdir(a.workdir) != 0) die(a, ChildStep::Workdir, errno);
    ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    ::execve(a.prog, a.argv, a.envp);
    die(a, ChildStep::Exec, errno);
}

volatile sig_atomic_t g_stopping = 0;  // in the init: the stop signal came
void on_stop(int) { g_stopping = 1; }

/// Decimal digits of v >= 0 into buf (at least 12 chars), no allocation.
void format_int(long v, char* buf) {
    char d[24];
    int k = 0;
    do d[k++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) > 0);
    int i = 0;
    while (k > 0) buf[i++] = d[--k];
    buf[i] = '\0';
}

/// In the init, its worker `w` cloned, still root: replaces this copy of the service by
/// astraeus-init (init_main.cpp), which takes the identity, reaps and passes the worker's status
/// on, holding none of the service's pages. The stop signal stays blocked across the exec (one
/// sent meanwhile waits for astraeus-init's handler); one already seen is passed as STOPPING.
/// The error pipe stays open through the exec, for astraeus-init's identity step; the status
/// pipe is passed by number. Returns only when the exec failed (then nothing has changed).
void exec_init(const ChildArgs& a, pid_t w) {
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, a.stop_signal);
    ::sigprocmask(SIG_BLOCK, &stop, &old);
    char wbuf[24], sbuf[24], status_buf[24], err_buf[24];
    format_int(w, wbuf);
    format_int(a.stop_signal, sbuf);
    format_int(a.status_w, status_buf);
    format_int(a.err_w, err_buf);
    char stopping[2] = {g_stopping ? '1' : '0', '\0'};
    char name[] = "astraeus-init";
    const bool drop = a.plan && a.plan->id.drop && a.init_uid && a.init_gid && a.init_groups;
    char* argv[] = {name, wbuf, sbuf, status_buf, err_buf, stopping,
                    drop ? const_cast<char*>(a.init_uid) : nullptr, const_cast<char*>(a.init_gid),
                    const_cast<char*>(a.init_groups), nullptr};
    char* envp[] = {nullptr};
    if (::fcntl(a.status_w, F_SETFD, 0) == 0 && ::fcntl(a.err_w, F_SETFD, 0) == 0) {
        char empty[] = "";
        ::syscall(SYS_execveat, a.init_fd, empty, argv, envp, AT_EMPTY_PATH);
    }
    ::fcntl(a.status_w, F_SETFD, FD_CLOEXEC);
    ::fcntl(a.err_w, F_SETFD, FD_CLOEXEC);
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

/// The child (async-signal-safe calls only). With `ns` it is the init of its pid namespace: it
/// runs the worker as its child and reaps every orphan; when the worker exits on its own the
/// init exits at once (the kernel then kills whatever is left in the namespace: nothing
/// outlives the attempt); after the stop signal it waits for every process (their grace).
/// The worker's wait status goes to the parent on status_w.
int child_main(void* arg) {
    const ChildArgs& a = *static_cast<const ChildArgs*>(arg);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (!a.ns && ::getppid() != a.parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
    if (a.ns) {
        // The init never execs: it must not keep the service's descriptors (its store, its
        // sockets, its lock). Kept: the three pipes and the cgroup files to join.
        int keep[4 + 8];
        int n = 0;
        for (int fd : {a.out_w, a.err_w, a.status_w}) keep[n++] = fd;
        if (a.init_fd >= 0) keep[n++] = a.init_fd;
        for (int fd : a.plan->join_fds)
            if (n < 10) keep[n++] = fd;
        if (a.plan->worker_join_fd >= 0) keep[n++] = a.plan->worker_join_fd;
        for (int i = 1; i < n; ++i)
            for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) std::swap(keep[j - 1], keep[j]);
        unsigned lo = 3;
        for (int i = 0; i < n; ++i) {
            const unsigned k = static_cast<unsigned>(keep[i]);
            if (k > lo) ::close_range(lo, k - 1, 0);
            if (k + 1 > lo) lo = k + 1;
        }
        ::close_range(lo, ~0U, 0);
    }
    // The init is a copy of the service: its resident size counts the service's pages, so an
    // OOM killer would pick it (and with it the whole namespace) before the worker's process
    // that went past the limit. It stays out of a v1 memory cgroup (only its worker joins it,
    // plan.worker_join_fd), and where the service may (CAP_SYS_RESOURCE) it is shielded while
    // root (oom_score_adj -1000); the worker, cloned before the identity is dropped, sets its own
    // back to 0 as root, which also raises its floor to 0: it can never shield itself.
    bool shielded = false;
    if (a.plan && a.ns) {
        if (const int e = sandbox::enter_setup(*a.plan); e != 0) die(a, ChildStep::Setup, e);
        shielded = sandbox::set_oom_score_adj("-1000") == 0;
    } else if (a.plan) {
        if (const int e = sandbox::enter(*a.plan); e != 0) die(a, ChildStep::Setup, e);
        // A change of credentials clears the parent-death signal: set it again.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    } else if (a.drop) {
        if (const int e = sandbox::set_identity(a.uid, a.gid, a.groups->data(), a.groups->size()); e != 0)
            die(a, ChildStep::Setup, e);
    }
    if (!a.ns) exec_worker(a);
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    ::sigaction(a.stop_signal, &sa, nullptr);
    // A raw fork: glibc's fork() runs its atfork handlers, whose locks (malloc's) another
    // thread of the service may have held when this process was cloned: a deadlock.
    const pid_t w = static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
    if (w < 0) die(a, ChildStep::Setup, errno);
    if (w == 0) {
        ::signal(a.stop_signal, SIG_DFL);
        if (a.plan) {
            if (a.plan->worker_join_fd >= 0 && ::write(a.plan->worker_join_fd, "0", 1) != 1)
                die(a, ChildStep::Setup, errno);
            if (shielded)
                if (const int e = sandbox::set_oom_score_adj("0"); e != 0) die(a, ChildStep::Setup, e);
            if (const int e = sandbox::drop_identity(*a.plan); e != 0) die(a, ChildStep::Setup, e);
        }
        exec_worker(a);
    }
    if (a.plan && a.plan->worker_join_fd >= 0) ::close(a.plan->worker_join_fd);
    ::close(a.out_w);
    if (a.init_fd >= 0) exec_init(a, w);  // returns only when the exec failed
    if (a.plan) {
        if (const int e = sandbox::drop_identity(*a.plan); e != 0) die(a, ChildStep::Setup, e);
        // A change of credentials clears the parent-death signal: set it again (the init, and
        // with it the whole namespace, dies with the service).
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    }
    ::close(a.err_w);
    const int wst = sandbox::reap_until_worker_exits(w, g_stopping);
    (void)!::write(a.status_w, &wst, sizeof wst);
    ::_exit(0);
}

}  // namespace

int signal_number(const std::string& name) {
    const std::string n = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
    static const std::pair<const char*, int> kSignals[] = {{"TERM", SIGTERM}, {"INT", SIGINT},   {"HUP", SIGHUP},
                                                           {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
    for (const auto& [k, v] : kSignals)
        if (n == k) return v;
    return 0;
}

std::map<std::string, std::string> current_env() {
    std::map<std::string, std::string> out;
    for (char** e = environ; e && *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (eq) out[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
    }
    return out;
}

std::map<std::string, std::string> worker_env(const WorkerIdentity& id,
                                              const std::map<std::string, std::string>& run_env,
                                              const std::map<std::string, std::string>& base) {
    std::map<std::string, std::string> env;
    for (const char* k : {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR"}) {
        auto it = base.find(k);
        if (it != base.end()) env[k] = it->second;
    }
    if (!env.contains("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
    for (const auto& [k, v] : run_env) env[k] = v;
    std::string gpus;
    for (int g : id.gpus) {
        if (!gpus.empty()) gpus += ',';
        gpus += std::to_string(g);
    }
    env["ASTRAEUS_RUN"] = id.run;
    env["ASTRAEUS_WORKSPACE"] = id.workspace;
    env["ASTRAEUS_WORKER"] = std::to_string(id.worker);
    env["ASTRAEUS_WORKERS"] = std::to_string(id.workers);
    env["ASTRAEUS_ATTEMPT"] = std::to_string(id.attempt);
    env["ASTRAEUS_CHECKPOINT_DIR"] = id.checkpoint_dir;
    env["ASTRAEUS_PROGRESS_FILE"] = id.progress_file;
    env["CUDA_VISIBLE_DEVICES"] = gpus;
    env["MASTER_ADDR"] = id.master_addr;
    env["MASTER_PORT"] = std::to_string(id.master_port);
    env["RANK"] = std::to_string(id.worker);
    env["WORLD_SIZE"] = std::to_string(id.workers);
    env["LOCAL_RANK"] = std::to_string(id.local_rank);
    env["NODE_RANK"] = std::to_string(id.worker);
    return env;
}

std::optional<std::int64_t> parse_progress(const std::string& text) {
    std::size_t a = 0, b = text.size();
    while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\n' || text[a] == '\r')) ++a;
    while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\n' || text[b - 1] == '\r')) --b;
    if (a == b || b - a > 18) return std::nullopt;
    std::int64_t v = 0;
    for (std::size_t i = a; i < b; ++i) {
        if (text[i] < '0' || text[i] > '9') return std::nullopt;
        v = v * 10 + (text[i] - '0');
    }
    return v;
}

WorkerRunner::WorkerRunner(RunnerConfig c) : c_(std::move(c)) {
    // Orphaned members of a worker's group (its leader gone) come back to this process, so that
    // poll() reaps them: no zombies.
    (void)::prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (c_.sandbox && c_.sandbox->namespaces) {
        std::string path = c_.init_program;
        if (path.empty()) {
            std::error_code ec;
            const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
            if (!ec) path = (self.parent_path() / "astraeus-init").string();
        }
        // Opened here, executed in each namespace by descriptor (execveat): the file need not be
        // visible in the worker's mount namespace.
        init_fd_ = path.empty() ? -1 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (init_fd_ >= 0) {
            init_path_ = path;
        } else {
            static std::once_flag said;
            const int e = errno;
            std::call_once(said, [&] {
                std::fprintf(stderr,
                             "astraeus: the workers' namespace init program %s cannot be opened (%s): each sandboxed "
                             "worker's init stays a copy of the service (it keeps the service's pages)\n",
                             path.empty() ? "astraeus-init" : path.c_str(), std::strerror(e));
            });
        }
    }
}

WorkerRunner::~WorkerRunner() {
    for (auto& [h, w] : workers_) {
        if (!w.gone && w.pid > 0) {
            kill_all(w);
            for (;;) {
                int st = 0;
                const pid_t r = ::waitpid(-w.pid, &st, 0);
                if (r < 0 && errno == EINTR) continue;
                if (r < 0) break;
            }
        }
        close_fds(w);
        w.cg.kill();
        w.cg.remove();
    }
    if (init_fd_ >= 0) ::close(init_fd_);
}

void WorkerRunner::kill_all(Worker& w) {
    w.cg.kill();
    if (w.pid > 0) ::kill(-w.pid, SIGKILL);
}

bool WorkerRunner::empty(const Worker& w) const {
    if (w.cg.active()) return w.cg.empty() && (::kill(-w.pid, 0) != 0 && errno == ESRCH);
    return ::kill(-w.pid, 0) != 0 && errno == ESRCH;
}

/// One worker between its preparation and its start's confirmation (launch_all): everything
/// its child needs, at a stable address (ChildArgs points into it) until the clone.
struct WorkerRunner::Pending {
    const WorkerSpec* spec = nullptr;
    bool boxed = false, ns = false, drop = false;
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
    std::string user_home, user_name;
    int log_fd = -1;
    sandbox::Cgroup cg;
    sandbox::ChildPlan plan;
    std::string prog;
    std::vector<std::string> env_strs;
    std::vector<char*> argv, envp;
    char init_uid[16] = "", init_gid[16] = "";
    std::string init_groups;  ///< comma-separated, "-" for none (astraeus-init's argument)
    int out[2] = {-1, -1}, err[2] = {-1, -1}, status[2] = {-1, -1};
    /// ns: the child's stack until it has cloned its worker. Not zeroed (a zeroed vector cost a
    /// 256 KiB memset and its page faults per worker): the child's copy touches only what it uses.
    std::unique_ptr<char[]> stack;
    static constexpr std::size_t kStack = 256 * 1024;
    pid_t pid = -1;
    int fork_errno = 0;
    ChildArgs args;
    std::optional<Error> error;  ///< the launch failed before the clone (everything released)
};

Result<WorkerRunner::Handle> WorkerRunner::launch(const WorkerSpec& spec) {
    std::vector<const WorkerSpec*> one{&spec};
    return std::move(launch_all(one).front());
}

std::vector<Result<WorkerRunner::Handle>> WorkerRunner::launch_all(const std::vector<const WorkerSpec*>& specs) {
    // 1. Each worker's parent side (identity, log, cgroups, mount plan, argv, pipes), in turn.
    std::vector<std::unique_ptr<Pending>> pend;
    for (const WorkerSpec* spec : specs) {
        pend.push_back(std::make_unique<Pending>());
        pend.back()->spec = spec;
        if (auto ok = prepare(*pend.back()); !ok) pend.back()->error = ok.error();
    }
    // 2. Every clone at once, from the runner's own thread (fork_thread.hpp: PR_SET_PDEATHSIG
    // follows the forking thread, and the caller's thread may end long before the worker
    // should): their namespaces, mounts and execve then run side by side.
    fork_thread_.run([&] {
        for (auto& pp : pend) {
            Pending& p = *pp;
            if (p.error) continue;
            if (p.ns) {
                p.pid = ::clone(child_main, p.stack.get() + Pending::kStack, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, &p.args);
            } else {
                p.pid = ::fork();
                if (p.pid == 0) ::_exit(child_main(&p.args));
            }
            if (p.pid < 0) {
                p.fork_errno = errno;
                continue;
            }
            ::setpgid(p.pid, p.pid);  // also here: no race with an early signal to the group
        }
    });
    // 3. The parent's copies of what the children hold; then each start's confirmation.
    for (auto& pp : pend) {
        Pending& p = *pp;
        if (p.error) continue;
        sandbox::close_plan(p.plan);
        p.cg.close_join_fds();
        p.stack.reset();
        ::close(p.out[1]);
        ::close(p.err[1]);
        ::close(p.status[1]);
        if (p.pid < 0) {
            ::close(p.out[0]), ::close(p.err[0]), ::close(p.status[0]);
            ::close(p.log_fd);
            p.cg.remove();
            p.error = Error{"fork: " + errno_text(p.fork_errno)};
        }
    }
    std::vector<Result<Handle>> out;
    for (auto& pp : pend) {
        if (pp->error) out.emplace_back(std::unexpected(*pp->error));
        else out.emplace_back(finish(*pp));
    }
    return out;
}

Result<void> WorkerRunner::prepare(Pending& p) {
    const WorkerSpec& spec = *p.spec;
    auto close_log = [&] {
        if (spec.log_fd >= 0) ::close(spec.log_fd);
    };
    if (spec.argv.empty()) {
        close_log();
        return fail("the worker's command is empty");
    }
    const bool boxed = p.boxed = spec.sandbox.on && c_.sandbox;
    // Who runs it.
    bool& drop = p.drop;
    uid_t& uid = p.uid;
    gid_t& gid = p.gid;
    std::vector<gid_t>& groups = p.groups;
    std::string& user_home = p.user_home;
    std::string& user_name = p.user_name;
    if (boxed) {
        drop = spec.sandbox.id.drop;
        uid = spec.sandbox.id.uid;
        gid = spec.sandbox.id.gid;
        groups = spec.sandbox.id.groups;
        user_home = spec.sandbox.id.home;
        user_name = spec.sandbox.id.user;
    } else if (::geteuid() == 0) {
        if (!c_.run_as_user.empty()) {
            std::vector<char> buf(16384);
            struct passwd pw {};
            struct passwd* res = nullptr;
            if (::getpwnam_r(c_.run_as_user.c_str(), &pw, buf.data(), buf.size(), &res) != 0 || !res) {
                close_log();
                return fail("no Unix user named '" + c_.run_as_user + "' (exec user)");
            }
            uid = pw.pw_uid;
            gid = pw.pw_gid;
            int n = 64;
            groups.resize(64);
            if (::getgrouplist(pw.pw_name, gid, groups.data(), &n) < 0) {
                groups.resize(static_cast<std::size_t>(n));
                (void)::getgrouplist(pw.pw_name, gid, groups.data(), &n);
            }
            groups.resize(static_cast<std::size_t>(std::max(n, 0)));
            drop = uid != 0;
            user_home = pw.pw_dir ? pw.pw_dir : "/";
            user_name = c_.run_as_user;
        } else if (!c_.allow_root) {
            close_log();
            return fail("refusing to run workers as root: set the exec user (a Unix user for the "
                        "workers) or allow_root in the configuration");
        }
    }
    int& log_fd = p.log_fd;
    log_fd = spec.log_fd;
    if (log_fd < 0) {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(spec.log_path).parent_path(), ec);
        log_fd = sandbox::open_nofollow(spec.log_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0640);
        if (log_fd < 0) return fail("cannot create the log file " + spec.log_path + ": " + errno_text(errno));
    }

    // The sandbox: its cgroup and what the child does first.
    sandbox::Cgroup& cg = p.cg;
    sandbox::ChildPlan& plan = p.plan;
    if (boxed) {
        const sandbox::Probe& pr = *c_.sandbox;
        if (!spec.sandbox.cgroup.empty()) {
            auto g = sandbox::Cgroup::create(pr, spec.sandbox.cgroup, spec.sandbox.limits);
            if (!g) {
                ::close(log_fd);
                return fail("the worker's cgroup: " + g.error().message);
            }
            cg = std::move(*g);
        }
        plan.join_fds = cg.join_fds();
        if (pr.namespaces && cg.memory_join_fd() >= 0) {  // the init stays out of the memory limit
            plan.worker_join_fd = cg.memory_join_fd();
            std::erase(plan.join_fds, plan.worker_join_fd);
        }
        plan.mounts = pr.namespaces;
        if (plan.mounts) {
            plan.hide = c_.hide;
            for (const char* t : sandbox::kPrivateTmpDirs) plan.hide.push_back(t);
            std::sort(plan.hide.begin(), plan.hide.end(),
                      [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
            if (auto ok = sandbox::plan_binds(plan, spec.sandbox.keep); !ok) {
                ::close(log_fd);
                sandbox::close_plan(plan);
                cg.remove();
                return fail(ok.error().message);
            }
        }
        plan.id = spec.sandbox.id;
    }
    const bool ns = p.ns = boxed && c_.sandbox->namespaces;

    // Everything the child needs, built before fork (the child only makes system calls).
    auto path_it = spec.env.find("PATH");
    p.prog = resolve(spec.argv.front(), path_it == spec.env.end() ? "" : path_it->second);
    std::map<std::string, std::string> env = spec.env;
    if (drop) {  // the user's own identity, not the service's
        if (!user_home.empty()) env["HOME"] = user_home;
        else if (!spec.workdir.empty()) env["HOME"] = spec.workdir;
        env["USER"] = env["LOGNAME"] = user_name;
    }
    for (const auto& [k, v] : env) p.env_strs.push_back(k + "=" + v);
    for (const auto& a : spec.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
    p.argv.push_back(nullptr);
    for (auto& e : p.env_strs) p.envp.push_back(e.data());
    p.envp.push_back(nullptr);
    const char* workdir = spec.workdir.empty() ? nullptr : spec.workdir.c_str();
    if (ns && plan.id.drop) {  // astraeus-init's identity arguments
        std::snprintf(p.init_uid, sizeof p.init_uid, "%u", static_cast<unsigned>(plan.id.uid));
        std::snprintf(p.init_gid, sizeof p.init_gid, "%u", static_cast<unsigned>(plan.id.gid));
        for (gid_t g : plan.id.groups) p.init_groups += (p.init_groups.empty() ? "" : ",") + std::to_string(g);
        if (p.init_groups.empty()) p.init_groups = "-";
    }

    int* out = p.out;
    int* err = p.err;
    int* status = p.status;
    auto undo = [&](const std::string& what) {
        ::close(log_fd);
        sandbox::close_plan(plan);
        cg.remove();
        return fail(what + ": " + errno_text(errno));
    };
    if (::pipe2(out, O_CLOEXEC) != 0) return undo("pipe");
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(out[0]), ::close(out[1]);
        return undo("pipe");
    }
    if (::pipe2(status, O_CLOEXEC) != 0) {
        ::close(out[0]), ::close(out[1]), ::close(err[0]), ::close(err[1]);
        return undo("pipe");
    }
    // A worker never waits on its log: a big pipe (the service drains it as it fills).
    if (::fcntl(out[0], F_SETPIPE_SZ, 4 << 20) < 0) (void)::fcntl(out[0], F_SETPIPE_SZ, 1 << 20);
    ChildArgs& a = p.args;
    a.out_w = out[1];
    a.err_w = err[1];
    a.status_w = status[1];
    a.parent = ::getpid();
    a.ns = ns;
    a.stop_signal = c_.stop_signal;
    a.plan = boxed ? &plan : nullptr;
    a.drop = !boxed && drop;
    a.uid = uid;
    a.gid = gid;
    a.groups = &groups;
    a.prog = p.prog.c_str();
    a.argv = p.argv.data();
    a.envp = p.envp.data();
    a.workdir = workdir;
    a.init_fd = ns ? init_fd_ : -1;
    a.init_uid = p.init_uid;
    a.init_gid = p.init_gid;
    a.init_groups = p.init_groups.empty() ? nullptr : p.init_groups.c_str();
    if (ns) p.stack.reset(new char[Pending::kStack]);  // NOLINT: uninitialised on purpose
    return {};
}

Result<WorkerRunner::Handle> WorkerRunner::finish(Pending& p) {
    const WorkerSpec& spec = *p.spec;
    int child_msg[2] = {0, 0};  // {ChildStep, errno}; nothing read: execve succeeded
    for (;;) {
        const ssize_t n = ::read(p.err[0], child_msg, sizeof child_msg);
        if (n < 0 && errno == EINTR) continue;
        if (n != static_cast<ssize_t>(sizeof child_msg)) child_msg[0] = child_msg[1] = 0;
        break;
    }
    const int child_errno = child_msg[1];
    ::close(p.err[0]);
    ::fcntl(p.out[0], F_SETFL, ::fcntl(p.out[0], F_GETFL) | O_NONBLOCK);
    Worker w;
    w.pid = p.pid;
    w.out_fd = p.out[0];
    w.log_fd = p.log_fd;
    w.cap = spec.log_cap_bytes.value_or(c_.log_cap_bytes);
    w.progress_path = spec.progress_path;
    w.exec_errno = child_errno;
    w.ns = p.ns;
    w.status_fd = p.status[0];
    w.cg = std::move(p.cg);
    w.memory_limit = p.boxed ? spec.sandbox.limits.memory_bytes : 0;
    if (child_errno != 0) {
        std::string m;
        switch (static_cast<ChildStep>(child_msg[0])) {
        case ChildStep::Workdir:  // the program was never tried: no blame on it
            m = "astraeus: cannot enter working directory '" + spec.workdir + "': " + errno_text(child_errno);
            break;
        case ChildStep::Setup:
            m = "astraeus: cannot prepare the worker's process (standard streams, sandbox or user): " +
                errno_text(child_errno);
            break;
        case ChildStep::Exec:
            m = "astraeus: cannot run '" + spec.argv.front() + "': " + errno_text(child_errno);
            if (!spec.workdir.empty()) m += " (working directory " + spec.workdir + ")";
            break;
        }
        m += "\n";
        write_all(p.log_fd, m.data(), m.size());
        w.logged = m.size();
    }
    const Handle h = next_++;
    workers_.emplace(h, std::move(w));
    return h;
}

bool WorkerRunner::started(Handle h) const {
    auto it = workers_.find(h);
    return it != workers_.end() && it->second.exec_errno == 0;
}

Result<void> WorkerRunner::give_to_user(const std::string& path) const {
    if (::geteuid() != 0 || c_.run_as_user.empty()) return {};
    std::vector<char> buf(16384);
    struct passwd pw {};
    struct passwd* res = nullptr;
    if (::getpwnam_r(c_.run_as_user.c_str(), &pw, buf.data(), buf.size(), &res) != 0 || !res)
        return fail("no Unix user named '" + c_.run_as_user + "' (exec user)");
    if (::chown(path.c_str(), pw.pw_uid, pw.pw_gid) != 0)
        return fail("cannot give " + path + " to " + c_.run_as_user + ": " + errno_text(errno));
    return {};
}

pid_t WorkerRunner::pid(Handle h) const {
    auto it = workers_.find(h);
    return it == workers_.end() ? 0 : it->second.pid;
}

void WorkerRunner::signal(Handle h, int sig) {
    auto it = workers_.find(h);
    if (it == workers_.end() || it->second.gone) return;
    it->second.signalled = true;
    ::kill(-it->second.pid, sig);
}

void WorkerRunner::stop(Handle h) {
    auto it = workers_.find(h);
    if (it == workers_.end() || it->second.gone || it->second.kill_at) return;
    it->second.signalled = true;
    ::kill(-it->second.pid, c_.stop_signal);
    it->second.kill_at = Clock::now() + std::chrono::milliseconds(static_cast<std::int64_t>(c_.grace_s * 1000.0));
}

void WorkerRunner::kill(Handle h) {
    auto it = workers_.find(h);
    if (it == workers_.end() || it->second.gone) return;
    it->second.signalled = true;
    kill_all(it->second);
}

void WorkerRunner::close_fds(Worker& w) {
    if (w.out_fd >= 0) ::close(w.out_fd);
    if (w.log_fd >= 0) ::close(w.log_fd);
    if (w.status_fd >= 0) ::close(w.status_fd);
    w.out_fd = w.log_fd = w.status_fd = -1;
}

void WorkerRunner::drain(Worker& w) {
    char buf[65536];
    while (w.out_fd >= 0) {
        const ssize_t n = ::read(w.out_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return;  // EAGAIN: nothing more now
        if (n == 0) {       // every writer closed it
            ::close(w.out_fd);
            w.out_fd = -1;
            return;
        }
        if (w.capped) continue;  // read and dropped: not counted (a capped worker is not hurried)
        std::uint64_t take = static_cast<std::uint64_t>(n);
        if (w.logged + take > w.cap) take = w.cap > w.logged ? w.cap - w.logged : 0;
        write_all(w.log_fd, buf, static_cast<std::size_t>(take));
        w.logged += take;
        drained_ += take;
        if (take < static_cast<std::uint64_t>(n)) {
            w.capped = true;
            const std::string m = "\n[astraeus: log capped at " + std::to_string(w.cap) +
                                  " bytes; later output dropped]\n";
            write_all(w.log_fd, m.data(), m.size());
        }
    }
}

std::vector<WorkerRunner::Report> WorkerRunner::poll(int timeout_ms) {
    std::vector<Report> out;
    drained_ = 0;
    std::vector<pollfd> fds;
    for (auto& [h, w] : workers_)
        if (w.out_fd >= 0) fds.push_back({w.out_fd, POLLIN, 0});
    if (timeout_ms > 0) {
        if (!fds.empty()) (void)::poll(fds.data(), fds.size(), timeout_ms);
        else if (live() > 0) ::usleep(static_cast<useconds_t>(timeout_ms) * 1000u);
    }
    const auto now = Clock::now();
    for (auto& [h, w] : workers_) {
        if (w.gone) continue;
        drain(w);
        // Reap every member of the group that has ended; the leader's status is the worker's.
        for (;;) {
            int st = 0;
            const pid_t r = ::waitpid(-w.pid, &st, WNOHANG);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            if (r == w.pid && !w.exited) {
                w.exited = true;
                Report rep{Report::Kind::Exited, h};
                // The init of a namespace passes its worker's status on (none: it was killed).
                if (w.ns) {
                    int wst = 0;
                    if (::read(w.status_fd, &wst, sizeof wst) == static_cast<ssize_t>(sizeof wst)) st = wst;
                }
                if (WIFEXITED(st)) rep.exit_code = WEXITSTATUS(st);
                else if (WIFSIGNALED(st)) rep.signal = WTERMSIG(st);
                rep.we_signalled = w.signalled;
                out.push_back(rep);
                // Left to itself, what remains of the group goes with its leader; during a
                // stop the group keeps its grace (a shell leader may die before its child has
                // written its checkpoint).
                if (!w.signalled) {
                    kill_all(w);
                    w.signalled = true;
                }
            }
        }
        if (w.kill_at && now >= *w.kill_at) {
            kill_all(w);
            w.kill_at.reset();
        }
        if (!w.progress_path.empty() && !w.exited) {
            // Written by the worker: never through a link, never a FIFO that would block us.
            struct stat sb {};
            const int fd = sandbox::open_nofollow(w.progress_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
            if (fd >= 0 && (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
                            (sb.st_mtim.tv_sec == w.progress_mtime.tv_sec && sb.st_mtim.tv_nsec == w.progress_mtime.tv_nsec))) {
                ::close(fd);
            } else if (fd >= 0) {
                w.progress_mtime = sb.st_mtim;
                {
                    char buf[64];
                    const ssize_t n = ::read(fd, buf, sizeof buf);
                    ::close(fd);
                    if (n > 0) {
                        auto step = parse_progress(std::string(buf, static_cast<std::size_t>(n)));
                        if (step && *step != w.last_step) {
                            w.last_step = *step;
                            out.push_back({Report::Kind::Progress, h, -1, 0, false, *step});
                        }
                    }
                }
            }
        }
        // Gone: the leader reaped, and no process of its group (of its cgroup) left.
        if (w.exited && empty(w)) {
            int st = 0;
            while (::waitpid(-w.pid, &st, WNOHANG) > 0) {
            }
            drain(w);
            if (const auto oom = w.cg.oom_kills(); oom > 0 && w.log_fd >= 0) {
                const std::string m = "\n[astraeus: the memory limit (" + std::to_string(w.memory_limit) +
                                      " bytes) was reached: the kernel killed " + std::to_string(oom) +
                                      " process(es) of this worker]\n";
                write_all(w.log_fd, m.data(), m.size());
            }
            close_fds(w);
            w.cg.remove();
            w.gone = true;
            out.push_back({Report::Kind::Gone, h});
        }
    }
    for (auto it = workers_.begin(); it != workers_.end();)
        it = it->second.gone && it->second.forgotten ? workers_.erase(it) : std::next(it);
    return out;
}

bool WorkerRunner::gone(Handle h) const {
    auto it = workers_.find(h);
    return it == workers_.end() || it->second.gone;
}

void WorkerRunner::forget(Handle h) {
    auto it = workers_.find(h);
    if (it == workers_.end()) return;
    if (it->second.gone) {
        close_fds(it->second);
        workers_.erase(it);
        return;
    }
    it->second.forgotten = true;
    kill_all(it->second);
    it->second.signalled = true;
}

std::size_t WorkerRunner::live() const {
    std::size_t n = 0;
    for (const auto& [h, w] : workers_) n += w.gone ? 0 : 1;
    return n;
}

}  // namespace astraeus::exec
