#include "astraeus/exec/sandbox/step_sandbox.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <chrono>
#include <fstream>
#include <optional>

#include "astraeus/exec/sandbox/attempt_guard.hpp"

#include "astraeus/exec/sandbox/init_reap.hpp"
#include "astraeus/exec/sandbox/sandbox.hpp"

namespace astraeus::exec::sandbox {

namespace {

constexpr int kForwardMagic = 0x41535452;  // sigqueue value of a signal the task passes on ("ASTR")

volatile sig_atomic_t g_init = 0;      // the task: the init's pid (its own pid namespace's view)
volatile sig_atomic_t g_stepd = 0;     // the task: its parent, slurmstepd
volatile sig_atomic_t g_worker = 0;    // the init: its worker's pid
volatile sig_atomic_t g_stopping = 0;  // the init: a stop signal came from outside

/// The task (outside the namespace): a signal from slurmstepd reached every process of the step
/// already (proctrack signals them all); any other sender's is passed on to the init, marked.
void task_handler(int sig, siginfo_t* si, void*) {
    if (si->si_pid == g_stepd && si->si_code == SI_USER) return;
    if (g_init > 0) {
        union sigval v {};
        v.sival_int = kForwardMagic;
        (void)::sigqueue(g_init, sig, v);
    }
}

/// The init (pid 1): signals from its own namespace are ignored (as for any init); from outside
/// (si_pid 0: the sender is not in the namespace) a stop signal starts the stop (the init then
/// waits for every process); the task's marked ones go to the worker.
void init_handler(int sig, siginfo_t* si, void*) {
    if (si->si_pid != 0) return;
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) g_stopping = 1;
    if (si->si_code == SI_QUEUE && si->si_value.sival_int == kForwardMagic && g_worker > 0) (void)::kill(g_worker, sig);
}

void catch_signals(void (*handler)(int, siginfo_t*, void*)) {
    struct sigaction sa {};
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigfillset(&sa.sa_mask);
    for (int s : step_forwarded_signals()) ::sigaction(s, &sa, nullptr);
}

sigset_t forwarded_set() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : step_forwarded_signals()) sigaddset(&set, s);
    return set;
}

bool write_text(const char* path, const std::string& text, int& err) {
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        err = errno;
        return false;
    }
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    err = ok ? 0 : errno;
    ::close(fd);
    return ok;
}

std::string first_line(const char* path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

/// Why user namespaces are refused here: the kernel's knobs that say so.
std::string userns_hint() {
    std::string out;
    const std::string max = first_line("/proc/sys/user/max_user_namespaces");
    if (!max.empty()) out += "; /proc/sys/user/max_user_namespaces = " + max;
    const std::string deb = first_line("/proc/sys/kernel/unprivileged_userns_clone");
    if (!deb.empty()) out += "; kernel.unprivileged_userns_clone = " + deb;
    const std::string apparmor = first_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    if (!apparmor.empty()) out += "; kernel.apparmor_restrict_unprivileged_userns = " + apparmor;
    return out;
}

std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out.empty() ? "none" : out;
}

/// The init's report to the task: the worker's wait status, or the errno of a step that failed.
struct Report {
    enum Kind : int { Worker = 1, Mounts = 2, Fork = 3 } kind;
    int value;
};

[[noreturn]] void exec_worker(const StepSandboxSpec& spec, char** argv) {
    sigset_t none;
    sigemptyset(&none);
    for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    (void)::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    ::execvp(argv[0], argv);
    std::fprintf(stderr, "astraeus step-sandbox: cannot run '%s': %s\n", spec.argv.front().c_str(), std::strerror(errno));
    ::_exit(127);
}

/// The namespace's init (pid 1). Never returns.
[[noreturn]] void init_main(const StepSandboxSpec& spec, const ChildPlan& plan, char** argv, int report_w, int alive_r,
                            const std::string& on_line) {
    // With the task: a kill -9 of it (slurmstepd's at the end) ends the namespace.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct pollfd p {alive_r, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLIN))) ::_exit(1);  // the task is gone already
    auto report = [&](Report::Kind k, int v) {
        const Report r{k, v};
        (void)!::write(report_w, &r, sizeof r);
        ::_exit(0);
    };
    if (const int e = enter_setup(plan); e != 0) report(Report::Mounts, e);
    if (!on_line.empty()) std::fprintf(stderr, "%s\n", on_line.c_str());
    catch_signals(init_handler);
    ::signal(SIGPIPE, SIG_IGN);
    const sigset_t fwd = forwarded_set();
    const pid_t w = ::fork();
    if (w < 0) report(Report::Fork, errno);
    if (w == 0) exec_worker(spec, argv);
    g_worker = w;
    ::sigprocmask(SIG_UNBLOCK, &fwd, nullptr);
    // After a stop signal the others get their grace (Slurm's KillWait ends them).
    const int wst = reap_until_worker_exits(w, g_stopping, &g_worker);
    report(Report::Worker, wst);
    ::_exit(0);
}

std::int64_t now_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

/// The task's wait for the init's report; with an attempt file, read every kAttemptPollMs: when
/// it names an attempt newer than `own`, the init is killed (SIGKILL: the kernel ends the whole
/// namespace) and the newer attempt is returned.
std::optional<CurrentAttempt> watch_attempt(int report_r, pid_t init, int dir, const std::string& name, int own) {
    if (dir < 0) return std::nullopt;
    for (;;) {
        struct pollfd p {report_r, POLLIN, 0};
        const int k = ::poll(&p, 1, kAttemptPollMs);
        if (k > 0 || (k < 0 && errno != EINTR)) return std::nullopt;  // the init reported or ended
        if (k < 0) continue;
        if (auto c = read_current_attempt_at(dir, name); c && c->attempt > own) {
            (void)::kill(init, SIGKILL);
            return c;
        }
    }
}

/// Exits as the worker did: its code, or the same signal.
[[noreturn]] void exit_like(int wst) {
    if (WIFSIGNALED(wst)) {
        const int sig = WTERMSIG(wst);
        ::signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        ::sigprocmask(SIG_UNBLOCK, &one, nullptr);
        ::raise(sig);
        ::_exit(128 + sig);
    }
    ::_exit(WIFEXITED(wst) ? WEXITSTATUS(wst) : 1);
}

}  // namespace

const std::vector<int>& step_forwarded_signals() {
    static const std::vector<int> kSignals = {SIGHUP, SIGINT,  SIGQUIT, SIGUSR1, SIGUSR2,
                                              SIGTERM, SIGALRM, SIGWINCH, SIGCONT};
    return kSignals;
}

int run_step_sandbox(const StepSandboxSpec& spec) {
    const std::string who = "astraeus: step sandbox" + (spec.label.empty() ? "" : " (" + spec.label + ")");
    if (spec.argv.empty()) {
        std::fprintf(stderr, "%s: no command to run\n", who.c_str());
        return 2;
    }
    ChildPlan plan;
    plan.mounts = true;
    for (std::string h : spec.hide) {
        while (h.size() > 1 && h.back() == '/') h.pop_back();
        if (h.empty() || h.front() != '/') {
            std::fprintf(stderr, "%s: --hide %s: an absolute folder expected\n", who.c_str(), h.c_str());
            return 2;
        }
        if (h != "/" && std::find(plan.hide.begin(), plan.hide.end(), h) == plan.hide.end()) plan.hide.push_back(h);
    }
    for (const char* t : {"/tmp", "/dev/shm"})
        if (std::find(plan.hide.begin(), plan.hide.end(), t) == plan.hide.end()) plan.hide.push_back(t);
    std::stable_sort(plan.hide.begin(), plan.hide.end(),
                     [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
    std::vector<std::string> keep;
    for (std::string k : spec.keep) {
        while (k.size() > 1 && k.back() == '/') k.pop_back();
        // Relative: under the job's folder, kept anyway.
        if (!k.empty() && k.front() == '/' && std::find(keep.begin(), keep.end(), k) == keep.end()) keep.push_back(k);
    }
    std::vector<char*> argv;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    // 0. The run's current attempt (attempt_guard.hpp): this step's own; a step of a new attempt
    // starts its worker only once an old rank still running elsewhere has seen the change.
    // Its folder is opened now and read through later: the mount namespace may hide it (the
    // service's file lies outside the run's folder, under a hidden one).
    int own_attempt = 0;
    int attempt_dir = -1;
    std::string attempt_name;
    if (!spec.attempt_file.empty()) {
        const auto slash = spec.attempt_file.rfind('/');
        const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : spec.attempt_file.substr(0, slash);
        attempt_name = spec.attempt_file.substr(slash == std::string::npos ? 0 : slash + 1);
        attempt_dir = ::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (attempt_dir < 0)
            std::fprintf(stderr, "%s: --attempt-file %s: %s (a stale attempt's workers are not ended)\n", who.c_str(),
                         spec.attempt_file.c_str(), std::strerror(errno));
    }
    if (attempt_dir >= 0)
        if (auto c = read_current_attempt_at(attempt_dir, attempt_name)) {
            own_attempt = c->attempt;
            const std::int64_t wait_ms = std::min<std::int64_t>(c->written_ms + kAttemptSettleMs - now_ms(), kAttemptSettleMs);
            if (wait_ms > 0) ::usleep(static_cast<useconds_t>(wait_ms * 1000));
        }

    // 1. The namespaces: as root a pid and a mount namespace; otherwise a user namespace first
    // (its own uid and gid mapped to themselves), which owns them.
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    std::string off;  // why not, when not
    if (uid != 0) {
        int err = 0;
        if (::unshare(CLONE_NEWUSER) != 0) {
            off = std::string("user namespace: unshare(CLONE_NEWUSER) failed: ") + std::strerror(errno) + userns_hint();
        } else if (!write_text("/proc/self/setgroups", "deny", err) ||
                   !write_text("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n", err) ||
                   !write_text("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n", err)) {
            off = std::string("user namespace: mapping uid ") + std::to_string(uid) + " failed: " + std::strerror(err);
        }
    }
    if (off.empty() && ::unshare(CLONE_NEWNS | CLONE_NEWPID) != 0)
        off = std::string("pid and mount namespaces: unshare(CLONE_NEWNS|CLONE_NEWPID) failed: ") + std::strerror(errno);
    if (!off.empty()) {
        std::fprintf(stderr,
                     "%s: OFF: %s. This step's worker sees the node's processes, /tmp and the folders the "
                     "sandbox would hide, and what it leaves running may outlive the step%s\n",
                     who.c_str(), off.c_str(),
                     spec.require ? "; the sandbox is required (local.sandbox.require): the step fails" : "");
        if (spec.require) return 1;
        std::fflush(stderr);
        ::execvp(argv[0], argv.data());
        std::fprintf(stderr, "astraeus step-sandbox: cannot run '%s': %s\n", spec.argv.front().c_str(), std::strerror(errno));
        return 127;
    }
    if (auto ok = plan_binds(plan, keep); !ok) {
        std::fprintf(stderr, "%s: %s\n", who.c_str(), ok.error().message.c_str());
        return 1;
    }
    std::vector<std::string> hidden(plan.hide.begin(), plan.hide.end());
    std::erase_if(hidden, [](const std::string& h) { return h == "/tmp" || h == "/dev/shm"; });
    std::vector<std::string> bound;
    for (const auto& b : plan.binds) bound.push_back(b.target);
    const bool say = spec.label.rfind("task 0 ", 0) == 0 || spec.label.empty();  // once per step
    const std::string on_line =
        !say ? std::string()
             : who + ": on: " + (uid != 0 ? "user namespace (uid " + std::to_string(uid) + " mapped to itself), " : "") +
                   "pid namespace (an init of Astraeus: nothing outlives the step), mount namespace (hidden: " +
                   joined(hidden) + "; bound back: " + joined(bound) +
                   "; private /tmp and /dev/shm; /proc of the namespace); cgroups: Slurm's";

    // 2. The init (pid 1 of the new pid namespace) and its worker.
    int report[2], alive[2];
    if (::pipe2(report, O_CLOEXEC) != 0 || ::pipe2(alive, O_CLOEXEC) != 0) {
        std::fprintf(stderr, "%s: pipe: %s\n", who.c_str(), std::strerror(errno));
        return 1;
    }
    const sigset_t fwd = forwarded_set();
    ::sigprocmask(SIG_BLOCK, &fwd, nullptr);
    g_stepd = ::getppid();
    catch_signals(task_handler);
    ::signal(SIGPIPE, SIG_IGN);
    std::fflush(stderr);
    const pid_t init = ::fork();
    if (init < 0) {
        std::fprintf(stderr, "%s: fork: %s\n", who.c_str(), std::strerror(errno));
        return 1;
    }
    if (init == 0) {
        ::close(report[0]);
        ::close(alive[1]);
        if (attempt_dir >= 0) ::close(attempt_dir);  // nothing of it inside the namespace
        init_main(spec, plan, argv.data(), report[1], alive[0], on_line);
    }
    ::close(report[1]);
    ::close(alive[0]);
    g_init = init;
    ::sigprocmask(SIG_UNBLOCK, &fwd, nullptr);
    const auto newer = watch_attempt(report[0], init, attempt_dir, attempt_name, own_attempt);
    int st = 0;
    while (::waitpid(init, &st, 0) < 0 && errno == EINTR) {
    }
    if (newer) {
        std::fprintf(stderr,
                     "%s: attempt %d is stale: %s names attempt %d (written at %lld ms): its workers were killed "
                     "(SIGKILL to the step's pid namespace)\n",
                     who.c_str(), own_attempt, spec.attempt_file.c_str(), newer->attempt,
                     static_cast<long long>(newer->written_ms));
        // Exits at once, as exit_like() does for the worker's status: no exit-time work (under
        // ASan, LeakSanitizer cannot stop the world of a task that made a user namespace and
        // exits 1 instead: the CI failure this fixes).
        std::fflush(stderr);
        ::_exit(128 + SIGKILL);
    }
    Report r{};
    ssize_t n;
    while ((n = ::read(report[0], &r, sizeof r)) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof r)) {
        std::fprintf(stderr, "%s: the namespace's init ended (%s %d) before its worker\n", who.c_str(),
                     WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
    }
    if (r.kind == Report::Mounts) {
        std::fprintf(stderr, "%s: setting up the mount namespace (tmpfs over %s; bind back %s; /proc) failed: %s\n",
                     who.c_str(), joined(plan.hide).c_str(), joined(bound).c_str(), std::strerror(r.value));
        return 1;
    }
    if (r.kind == Report::Fork) {
        std::fprintf(stderr, "%s: fork of the worker: %s\n", who.c_str(), std::strerror(r.value));
        return 1;
    }
    exit_like(r.value);
}

}  // namespace astraeus::exec::sandbox
