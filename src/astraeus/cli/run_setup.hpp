// What `astraeus simulate` and `astraeus compare` share: the options that describe a run
// (trace, tenants, cluster, scheduler options) and turning them into a workload and a
// configuration, with every bad value reported as a clear error.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/sim/engine.hpp"
#include "astraeus/sim/report.hpp"

namespace astraeus::cli {

struct RunArgs {
    std::string trace, format = "auto", tenants, names, cluster = "40x8";
    std::string mode = "default", job_order = "fairness", quota = "fair";
    std::string placement = "consolidate", unknown_tenant = "error";
    Seconds lease_s = 1800, starvation_s = 4 * 3600, delay_s = 300;
    Seconds checkpoint_s = 5, restore_s = 20, bucket_s = 3600;
    int window = 24;
    bool no_block = false, quiet = false;
    std::uint64_t seed = 1;
};

/// Registers the run options on `sub`.
void add_run_options(CLI::App* sub, RunArgs& a);

struct PreparedRun {
    Workload workload;
    SimConfig config;
    std::vector<InputFile> inputs;
    std::string skipped;  ///< what the trace reader left out, e.g. "12 (no attempts: 12)"
};

/// Reads the trace and tenants and builds the configuration.
Result<PreparedRun> prepare_run(const RunArgs& a);

/// A progress printer for stderr (after 2 s of wall time), or none when quiet.
ProgressFn progress_printer(bool quiet, const std::string& label);

/// Prints "astraeus CMD: error: MESSAGE" on stderr and returns 2.
int usage_error(const std::string& command, const Error& e);

}  // namespace astraeus::cli
