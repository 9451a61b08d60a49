// `astraeus-init`: the init of a sandboxed worker's pid namespace once it has cloned its worker.
// exec/worker_runner.cpp's init execs it there (still root), so that the namespace's init no
// longer pins the service's copy-on-write pages nor holds a copy of the service's memory. It:
//   - drops to the worker's identity when given one (setgroups, setgid, setuid; the credential
//     change makes it non-dumpable, so the worker, the same uid, cannot ptrace it), sets the
//     parent-death signal again (a credential change clears it: the namespace dies with the
//     service), and reports a failure on the error pipe as the init would ({step 1, errno});
//   - only reaps: when the worker exits on its own it exits at once (the kernel then kills
//     whatever is left in the namespace); after the stop signal it waits for every process of the
//     namespace (their grace). The worker's wait status is written to the status pipe, then it
//     exits 0. The stop signal reaches the worker through its process group (the runner signals
//     the group); here it only marks the stop, as the init did before.
//
// usage (by the worker runner only):
//   astraeus-init WORKER_PID STOP_SIGNAL STATUS_FD ERR_FD STOPPING [UID GID GROUPS]
//   STOPPING: 1 when the stop signal came before this exec (the runner blocks the stop signal
//   across the exec: one sent meanwhile stays pending and reaches the handler set here).
//   GROUPS: the supplementary groups, comma-separated ("-": none).
#include <grp.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "astraeus/exec/sandbox/init_reap.hpp"

namespace {

volatile sig_atomic_t g_stopping = 0;
void on_stop(int) { g_stopping = 1; }

/// A decimal integer >= 0 (the whole of `s`, up to `end`), or -1.
long number(const char* s, const char* end = nullptr) {
    if (!s || s == end || !*s) return -1;
    long v = 0;
    for (; *s && s != end; ++s) {
        if (*s < '0' || *s > '9' || v > 1000000000000L) return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

[[noreturn]] void usage(const char* why) {
    const char* m = "astraeus-init: the init of a sandboxed worker's pid namespace, started by the worker runner "
                    "only (usage: astraeus-init WORKER_PID STOP_SIGNAL STATUS_FD ERR_FD STOPPING [UID GID GROUPS]): ";
    (void)!::write(2, m, std::strlen(m));
    (void)!::write(2, why, std::strlen(why));
    (void)!::write(2, "\n", 1);
    ::_exit(2);
}

/// The identity could not be taken: the step (1: setup, as the runner's ChildStep) and errno to
/// the runner, every process of the namespace killed.
[[noreturn]] void fail_setup(int err_fd, int e) {
    const int msg[2] = {1, e};
    (void)!::write(err_fd, msg, sizeof msg);
    ::kill(-1, SIGKILL);
    ::_exit(127);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6 && argc != 9) usage("5 or 8 arguments expected");
    const long worker = number(argv[1]), sig = number(argv[2]), status_fd = number(argv[3]), err_fd = number(argv[4]),
               stopping = number(argv[5]);
    if (worker <= 0 || sig <= 0 || sig >= NSIG || status_fd < 0 || err_fd < 0 || (stopping != 0 && stopping != 1))
        usage("bad argument");
    if (::getpid() != 1) usage("not the init of a pid namespace");
    if (argc == 9) {
        const long uid = number(argv[6]), gid = number(argv[7]);
        gid_t groups[256];
        std::size_t n = 0;
        if (std::strcmp(argv[8], "-") != 0)
            for (const char* p = argv[8];;) {
                const char* comma = std::strchr(p, ',');
                const long g = number(p, comma);
                if (g < 0 || n == 256) usage("bad group list");
                groups[n++] = static_cast<gid_t>(g);
                if (!comma) break;
                p = comma + 1;
            }
        if (uid < 0 || gid < 0) usage("bad uid or gid");
        if (::setgroups(n, groups) != 0 || ::setgid(static_cast<gid_t>(gid)) != 0 || ::setuid(static_cast<uid_t>(uid)) != 0)
            fail_setup(static_cast<int>(err_fd), errno);
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail_setup(static_cast<int>(err_fd), errno);
        // The credential change cleared the parent-death signal: set it again.
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail_setup(static_cast<int>(err_fd), errno);
    }
    (void)::prctl(PR_SET_DUMPABLE, 0);  // never ptraced nor dumped by the worker's user
    ::close(static_cast<int>(err_fd));
    g_stopping = static_cast<sig_atomic_t>(stopping);
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    ::sigaction(static_cast<int>(sig), &sa, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // a stop signal pending since the exec comes now
    const int wst = astraeus::exec::sandbox::reap_until_worker_exits(static_cast<pid_t>(worker), g_stopping);
    (void)!::write(static_cast<int>(status_fd), &wst, sizeof wst);
    ::_exit(0);
}
