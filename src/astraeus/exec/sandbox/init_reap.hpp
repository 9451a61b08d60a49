// The reaping loop of a pid namespace's init, shared by the three inits: the worker runner's
// (exec/worker_runner.cpp), astraeus-init (exec/init_main.cpp) and the Slurm step sandbox's
// (sandbox/step_sandbox.cpp). Header-only and async-signal-safe (waitpid alone): astraeus-init
// links nothing of the project.
#pragma once
#include <sys/types.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>

namespace astraeus::exec::sandbox {

/// Reaps every child of the calling init. Returns the worker's wait status once the worker has
/// exited on its own; after a stop signal (`stopping` set by the caller's handler) it goes on
/// reaping until no child is left (the others get their grace), then returns the worker's status
/// (0 if the worker was never seen to exit). `worker_seen`, when given, is set to 0 when the
/// worker has exited (a signal handler that forwards to it stops then).
inline int reap_until_worker_exits(pid_t worker, const volatile sig_atomic_t& stopping,
                                   volatile sig_atomic_t* worker_seen = nullptr) {
    int wst = 0;
    for (;;) {
        int st = 0;
        const pid_t r = ::waitpid(-1, &st, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            break;  // ECHILD: no process left
        }
        if (r == worker) {
            wst = st;
            if (worker_seen) *worker_seen = 0;
            // Exited on its own: the init goes now and the kernel ends the rest of the namespace.
            if (!stopping) break;
        }
    }
    return wst;
}

}  // namespace astraeus::exec::sandbox
