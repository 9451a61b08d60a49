// Subcommands of the `astraeus` program. Each registers its options on a CLI11 app and returns
// the process exit code when run (0 ok, 2 bad input or usage, 1 other failure).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace astraeus::cli {

/// `astraeus simulate`: runs the ASTRAEA scheduler over a trace in the simulator.
std::function<int()> add_simulate(CLI::App& app);

/// `astraeus compare`: runs several policies on the same input and prints one table.
std::function<int()> add_compare(CLI::App& app);

/// `astraeus trace stats|slice|assign-tenants|convert`: inspects and prepares traces.
std::function<int()> add_trace(CLI::App& app);

/// `astraeus goodput replay EVENTS`: accounts a goodput event log and prints the page's table.
std::function<int()> add_goodput(CLI::App& app);

/// `astraeus goodput import-slurm SACCT_OUTPUT` on the `goodput` subcommand: goodput from Slurm
/// accounting. The callback returns -1 when this subcommand was not chosen.
std::function<int()> add_goodput_import_slurm(CLI::App& goodput);

/// `astraeus serve`: the live service (REST API, scheduler loop, goodput, metrics).
std::function<int()> add_serve(CLI::App& app);

/// `astraeus admin ...`: bootstraps organisations, clusters, workspaces and API tokens.
std::function<int()> add_admin(CLI::App& app);

/// `astraeus agent`: the node agent of a machine (registers it, runs the service's workers).
std::function<int()> add_agent(CLI::App& app);

/// `astraeus gpu-sample`: a Slurm step's GPU sampler (gpu_sample_command.cpp).
std::function<int()> add_gpu_sample(CLI::App& app);

/// `astraeus step-sandbox ... -- COMMAND...`: a Slurm step's sandbox (step_sandbox_command.cpp).
/// Called by main() before CLI11 when argv[1] is "step-sandbox"; returns the exit code.
int step_sandbox_main(int argc, char** argv);

}  // namespace astraeus::cli
