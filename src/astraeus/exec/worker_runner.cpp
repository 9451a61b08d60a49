#include "astraeus/exec/worker_runner.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
}

WorkerRunner::~WorkerRunner() {
    for (auto& [h, w] : workers_) {
        if (!w.gone && w.pid > 0) {
            ::kill(-w.pid, SIGKILL);
            for (;;) {
                int st = 0;
                const pid_t r = ::waitpid(-w.pid, &st, 0);
                if (r < 0 && errno == EINTR) continue;
                if (r < 0) break;
            }
        }
        close_fds(w);
    }
}

Result<WorkerRunner::Handle> WorkerRunner::launch(const WorkerSpec& spec) {
    if (spec.argv.empty()) return fail("the worker's command is empty");
    // Who runs it.
    bool drop = false;
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
    std::string user_home;
    if (::geteuid() == 0) {
        if (!c_.run_as_user.empty()) {
            std::vector<char> buf(16384);
            struct passwd pw {};
            struct passwd* res = nullptr;
            if (::getpwnam_r(c_.run_as_user.c_str(), &pw, buf.data(), buf.size(), &res) != 0 || !res)
                return fail("no Unix user named '" + c_.run_as_user + "' (exec user)");
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
        } else if (!c_.allow_root) {
            return fail("refusing to run workers as root: set the exec user (a Unix user for the "
                        "workers) or allow_root in the configuration");
        }
    }
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(spec.log_path).parent_path(), ec);
    const int log_fd = ::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (log_fd < 0) return fail("cannot create the log file " + spec.log_path + ": " + errno_text(errno));

    // Everything the child needs, built before fork (the child only makes system calls).
    auto path_it = spec.env.find("PATH");
    const std::string prog = resolve(spec.argv.front(), path_it == spec.env.end() ? "" : path_it->second);
    std::map<std::string, std::string> env = spec.env;
    if (drop) {  // the user's own identity, not the service's
        env["HOME"] = user_home;
        env["USER"] = env["LOGNAME"] = c_.run_as_user;
    }
    std::vector<std::string> env_strs;
    for (const auto& [k, v] : env) env_strs.push_back(k + "=" + v);
    std::vector<char*> argv, envp;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : env_strs) envp.push_back(e.data());
    envp.push_back(nullptr);
    const char* workdir = spec.workdir.empty() ? nullptr : spec.workdir.c_str();

    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0) {
        ::close(log_fd);
        return fail("pipe: " + errno_text(errno));
    }
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(log_fd), ::close(out[0]), ::close(out[1]);
        return fail("pipe: " + errno_text(errno));
    }
    const pid_t parent = ::getpid();
    // Forked from the runner's own thread (fork_thread.hpp): PR_SET_PDEATHSIG follows the
    // forking thread, and the caller's thread may end long before the worker should.
    pid_t pid = -1;
    int fork_errno = 0;
    fork_thread_.run([&] {
        pid = ::fork();
        if (pid < 0) {
            fork_errno = errno;
            return;
        }
        if (pid == 0) {  // the child: async-signal-safe calls only
            // {step, errno} to the parent: which step failed (ChildStep) and why.
            auto die = [&](ChildStep step, int e) {
                const int msg[2] = {static_cast<int>(step), e};
                (void)!::write(err[1], msg, sizeof msg);
                ::_exit(127);
            };
            ::setpgid(0, 0);
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) ::_exit(127);
            sigset_t none;
            sigemptyset(&none);
            ::sigprocmask(SIG_SETMASK, &none, nullptr);
            for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
            const int devnull = ::open("/dev/null", O_RDONLY);
            if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(out[1], 2) < 0)
                die(ChildStep::Setup, errno);
            if (drop) {
                if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)
                    die(ChildStep::Setup, errno);
            }
            if (workdir && ::chdir(workdir) != 0) die(ChildStep::Workdir, errno);
            ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
            ::execve(prog.c_str(), argv.data(), envp.data());
            die(ChildStep::Exec, errno);
        }
        ::setpgid(pid, pid);  // also here: no race with an early signal to the group
    });
    if (pid < 0) {
        ::close(log_fd), ::close(out[0]), ::close(out[1]), ::close(err[0]), ::close(err[1]);
        return fail("fork: " + errno_text(fork_errno));
    }
    ::close(out[1]);
    ::close(err[1]);
    int child_msg[2] = {0, 0};  // {ChildStep, errno}; nothing read: execve succeeded
    for (;;) {
        const ssize_t n = ::read(err[0], child_msg, sizeof child_msg);
        if (n < 0 && errno == EINTR) continue;
        if (n != static_cast<ssize_t>(sizeof child_msg)) child_msg[0] = child_msg[1] = 0;
        break;
    }
    const int child_errno = child_msg[1];
    ::close(err[0]);
    ::fcntl(out[0], F_SETFL, ::fcntl(out[0], F_GETFL) | O_NONBLOCK);
    Worker w;
    w.pid = pid;
    w.out_fd = out[0];
    w.log_fd = log_fd;
    w.progress_path = spec.progress_path;
    w.exec_errno = child_errno;
    if (child_errno != 0) {
        std::string m;
        switch (static_cast<ChildStep>(child_msg[0])) {
        case ChildStep::Workdir:  // the program was never tried: no blame on it
            m = "astraeus: cannot enter working directory '" + spec.workdir + "': " + errno_text(child_errno);
            break;
        case ChildStep::Setup:
            m = "astraeus: cannot prepare the worker's process (standard streams or user): " +
                errno_text(child_errno);
            break;
        case ChildStep::Exec:
            m = "astraeus: cannot run '" + spec.argv.front() + "': " + errno_text(child_errno);
            if (workdir) m += " (working directory " + spec.workdir + ")";
            break;
        }
        m += "\n";
        write_all(log_fd, m.data(), m.size());
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

void WorkerRunner::kill(Handle h) { signal(h, SIGKILL); }

void WorkerRunner::close_fds(Worker& w) {
    if (w.out_fd >= 0) ::close(w.out_fd);
    if (w.log_fd >= 0) ::close(w.log_fd);
    w.out_fd = w.log_fd = -1;
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
        if (w.capped) continue;
        std::uint64_t take = static_cast<std::uint64_t>(n);
        if (w.logged + take > c_.log_cap_bytes) take = c_.log_cap_bytes > w.logged ? c_.log_cap_bytes - w.logged : 0;
        write_all(w.log_fd, buf, static_cast<std::size_t>(take));
        w.logged += take;
        if (take < static_cast<std::uint64_t>(n)) {
            w.capped = true;
            const std::string m = "\n[astraeus: log capped at " + std::to_string(c_.log_cap_bytes) +
                                  " bytes; later output dropped]\n";
            write_all(w.log_fd, m.data(), m.size());
        }
    }
}

std::vector<WorkerRunner::Report> WorkerRunner::poll(int timeout_ms) {
    std::vector<Report> out;
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
                if (WIFEXITED(st)) rep.exit_code = WEXITSTATUS(st);
                else if (WIFSIGNALED(st)) rep.signal = WTERMSIG(st);
                rep.we_signalled = w.signalled;
                out.push_back(rep);
                // Left to itself, what remains of the group goes with its leader; during a
                // stop the group keeps its grace (a shell leader may die before its child has
                // written its checkpoint).
                if (!w.signalled) {
                    ::kill(-w.pid, SIGKILL);
                    w.signalled = true;
                }
            }
        }
        if (w.kill_at && now >= *w.kill_at) {
            ::kill(-w.pid, SIGKILL);
            w.kill_at.reset();
        }
        if (!w.progress_path.empty() && !w.exited) {
            struct stat sb {};
            if (::stat(w.progress_path.c_str(), &sb) == 0 &&
                (sb.st_mtim.tv_sec != w.progress_mtime.tv_sec || sb.st_mtim.tv_nsec != w.progress_mtime.tv_nsec)) {
                w.progress_mtime = sb.st_mtim;
                const int fd = ::open(w.progress_path.c_str(), O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
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
        // Gone: the leader reaped, and no process of its group left (ours or reparented).
        if (w.exited && ::kill(-w.pid, 0) != 0 && errno == ESRCH) {
            int st = 0;
            while (::waitpid(-w.pid, &st, WNOHANG) > 0) {
            }
            drain(w);
            close_fds(w);
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
    ::kill(-it->second.pid, SIGKILL);
    it->second.signalled = true;
}

std::size_t WorkerRunner::live() const {
    std::size_t n = 0;
    for (const auto& [h, w] : workers_) n += w.gone ? 0 : 1;
    return n;
}

}  // namespace astraeus::exec
