// The sandbox of a Slurm step (`astraeus step-sandbox`, run by the Slurm executor's batch script
// in place of the bare worker; docs/slurm.md "What confines a step"). The step runs as the
// workspace's Unix user, not root, so it builds its namespaces itself: an unprivileged user
// namespace that maps its own uid and gid to themselves (setgroups denied), owning a new pid and
// mount namespace. In it, as the local executor's sandbox does (sandbox.hpp, whose mount steps
// it reuses): the service's data directory and the runs' root covered by an empty tmpfs, the
// run's own folder bound back at its path, private /tmp and /dev/shm, /proc of the namespace.
// The namespace's first process is an init that runs the worker, reaps every orphan and passes
// the worker's exit status on; when the worker exits the init exits and the kernel kills what is
// left in the namespace (`setsid`, double-fork daemons), so nothing outlives the step.
// Signals: slurmstepd signals every process of the step itself (proctrack), the worker included;
// the two processes of the sandbox (the step's task and the init) catch the stop signals so that
// they survive them, and a signal sent to the task by anyone but slurmstepd (its parent) is
// passed on to the worker, once.
// Stale attempts (attempt_guard.hpp): with an attempt file, the task reads the run's current
// attempt at its start (its own) and every 250 ms while the worker runs; once the file names a
// newer attempt it kills the namespace's init (SIGKILL: the kernel ends every process in it) and
// exits 137. A new step's worker starts no earlier than 1 s after the file was written.
// Cgroups are Slurm's (proctrack/cgroup, task/cgroup): a non-root step cannot make its own.
#pragma once
#include <string>
#include <vector>

namespace astraeus::exec::sandbox {

/// What `astraeus step-sandbox` was asked for.
struct StepSandboxSpec {
    std::vector<std::string> hide;  ///< absolute folders covered by an empty tmpfs (/tmp, /dev/shm added)
    std::vector<std::string> keep;  ///< absolute folders under `hide` bound back at their paths
    bool require = false;           ///< fail the step (exit 1) when a namespace cannot be made
    std::vector<std::string> argv;  ///< the worker's command (argv[0] looked up in PATH)
    std::string label;              ///< who says it ("task 0 on gpu1"), in the status line
    /// The run's current-attempt file (attempt_guard.hpp; empty: not watched). Watched only
    /// when the namespaces are on.
    std::string attempt_file;
};

/// The signals the sandbox's processes catch (HUP, INT, QUIT, USR1, USR2, TERM, ALRM, WINCH,
/// CONT, PIPE): they are passed on to the worker (see above), never fatal to the sandbox.
const std::vector<int>& step_forwarded_signals();

/// Runs `spec.argv` in the step sandbox and returns the process's exit code: the worker's, or
/// (killed by a signal) the process kills itself with the same signal. Prints one line to stderr
/// (the job's output) saying which protections are on, or which are off and why. Not confined
/// (no user namespaces here and not required): runs the command as it is (execvp). Errors:
/// exit 1 with a line saying why (required and missing, a mount that failed), 127 when the
/// command cannot be run, 2 for an empty command or a relative folder.
/// Must be called from a single-threaded process (unshare(CLONE_NEWUSER) refuses others).
int run_step_sandbox(const StepSandboxSpec& spec);

}  // namespace astraeus::exec::sandbox
