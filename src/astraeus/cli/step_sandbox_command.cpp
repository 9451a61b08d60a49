// `astraeus step-sandbox [--hide DIR]... [--keep DIR]... [--require] [--attempt-file FILE] --
// COMMAND [ARG]...`: the
// sandbox of a Slurm step (exec/sandbox/step_sandbox.hpp). The Slurm executor's batch script runs
// it under `srun` in place of the bare worker; not for people, so not in `astraeus --help`.
// Parsed here, before CLI11: everything after `--` is the worker's, options included.
// Exit codes: the worker's (or its signal), 1 the sandbox is required and cannot be made (or a
// mount failed), 2 bad usage, 127 the command cannot be run.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "astraeus/cli/commands.hpp"
#include "astraeus/exec/sandbox/step_sandbox.hpp"

namespace astraeus::cli {

int step_sandbox_main(int argc, char** argv) {
    exec::sandbox::StepSandboxSpec spec;
    const char* usage = "usage: astraeus step-sandbox [--hide DIR]... [--keep DIR]... [--require] [--attempt-file FILE] -- COMMAND [ARG]...\n";
    int i = 2;  // argv[1] is "step-sandbox"
    for (; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if ((a == "--hide" || a == "--keep") && i + 1 < argc) {
            (a == "--hide" ? spec.hide : spec.keep).push_back(argv[++i]);
        } else if (a == "--attempt-file" && i + 1 < argc) {
            spec.attempt_file = argv[++i];
        } else if (a == "--require") {
            spec.require = true;
        } else {
            std::fprintf(stderr, "astraeus step-sandbox: unexpected '%s'\n%s", a.c_str(), usage);
            return 2;
        }
    }
    for (; i < argc; ++i) spec.argv.emplace_back(argv[i]);
    if (spec.argv.empty()) {
        std::fprintf(stderr, "astraeus step-sandbox: no command after --\n%s", usage);
        return 2;
    }
    const char* rank = std::getenv("SLURM_PROCID");
    const char* node = std::getenv("SLURMD_NODENAME");
    if (rank) spec.label = std::string("task ") + rank + (node ? std::string(" on ") + node : std::string());
    return exec::sandbox::run_step_sandbox(spec);
}

}  // namespace astraeus::cli
