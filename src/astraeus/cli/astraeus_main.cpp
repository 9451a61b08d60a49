// `astraeus`: the Astraeus scheduler's command line (simulate, compare, trace, goodput, serve, admin).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string_view>

#include "astraeus/cli/commands.hpp"
#include "astraeus/sim/report.hpp"

int main(int argc, char** argv) {
    // A Slurm step's sandbox (the executor's batch script): its own parser, the command after --.
    if (argc > 1 && std::string_view(argv[1]) == "step-sandbox") return astraeus::cli::step_sandbox_main(argc, argv);
    CLI::App app{"Astraeus: fair scheduling for multi-tenant GPU clusters (ASTRAEA and baselines) in a\n"
                 "trace-driven simulator.\n"
                 "Run `astraeus SUBCOMMAND --help` for each subcommand."};
    app.set_version_flag("--version", astraeus::astraeus_version());
    app.require_subcommand(1);
    auto simulate = astraeus::cli::add_simulate(app);
    auto compare = astraeus::cli::add_compare(app);
    auto trace = astraeus::cli::add_trace(app);
    auto goodput = astraeus::cli::add_goodput(app);
    auto serve = astraeus::cli::add_serve(app);
    auto admin = astraeus::cli::add_admin(app);
    auto agent = astraeus::cli::add_agent(app);
    auto gpu_sample = astraeus::cli::add_gpu_sample(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    if (app.got_subcommand("simulate")) return simulate();
    if (app.got_subcommand("compare")) return compare();
    if (app.got_subcommand("trace")) return trace();
    if (app.got_subcommand("goodput")) return goodput();
    if (app.got_subcommand("serve")) return serve();
    if (app.got_subcommand("admin")) return admin();
    if (app.got_subcommand("agent")) return agent();
    if (app.got_subcommand("gpu-sample")) return gpu_sample();
    return 2;
}
