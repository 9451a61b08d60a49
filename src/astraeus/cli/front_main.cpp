// `astraeus`: the front program. `simulate` and `compare` run here, in a small program linked
// statically with the simulator only, so that a run starts in about a millisecond (no shared
// libraries to load and relocate; docs/performance.md, "Compat mode against the reference
// simulator"). Every other subcommand, `--help` and `--version` replace this process (execv, same
// PID, same arguments) with `astraeus-full`, installed beside it, which holds the service, the
// executors and the tools.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "astraeus/cli/commands.hpp"

namespace {

/// The directory of this executable (from /proc/self/exe), with a trailing '/'; "" if unknown.
std::string own_directory() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return {};
    const std::string_view path(buf, static_cast<std::size_t>(n));
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string{} : std::string(path.substr(0, slash + 1));
}

/// Runs `astraeus-full` beside this program with the same arguments; returns only on failure.
int exec_full(char** argv) {
    const std::string full = own_directory() + "astraeus-full";
    execv(full.c_str(), argv);
    std::cerr << "astraeus: cannot run " << full << ": " << std::strerror(errno)
              << " (it is built and installed beside `astraeus`; every subcommand but simulate "
                 "and compare runs there)\n";
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string_view sub = argc > 1 ? argv[1] : "";
    if (sub != "simulate" && sub != "compare") return exec_full(argv);
    CLI::App app{"Astraeus: fair scheduling for multi-tenant GPU clusters (ASTRAEA and baselines) "
                 "in a\ntrace-driven simulator.\nRun `astraeus SUBCOMMAND --help` for each "
                 "subcommand."};
    app.require_subcommand(1);
    auto simulate = astraeus::cli::add_simulate(app);
    auto compare = astraeus::cli::add_compare(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    return app.got_subcommand("simulate") ? simulate() : compare();
}
