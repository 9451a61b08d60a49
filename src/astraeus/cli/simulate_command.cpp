#include <fmt/format.h>

#include <iostream>

#include "astraeus/cli/commands.hpp"
#include "astraeus/cli/run_setup.hpp"
#include "astraeus/config/cluster_config.hpp"
#include "astraeus/sched/policies.hpp"
#include "astraeus/sim/metrics.hpp"
#include "astraeus/sim/report.hpp"

namespace astraeus::cli {
namespace {

struct SimulateArgs {
    RunArgs run;
    std::string policy = "astraea", out = "out/simulate";
    bool json = false;
};

int run_simulate(const SimulateArgs& a) {
    auto prepared = prepare_run(a.run);
    if (!prepared) return usage_error("simulate", prepared.error());
    PreparedRun& p = *prepared;
    auto options = policy_options(a.policy, p.config.options);
    if (!options) return usage_error("simulate", options.error());
    p.config.options = *options;

    auto result = simulate(p.workload, p.config, progress_printer(a.run.quiet, ""));
    if (!result) return usage_error("simulate", result.error());

    const Summary summary = summarize(p.workload, *result, p.config.cluster.total_gpus());
    auto manifest = manifest_json(p.config, p.inputs, a.policy);
    if (!manifest) return usage_error("simulate", manifest.error());
    const nlohmann::json sj = summary_json(p.workload, *result, summary);
    auto written = write_files(a.out, {{"jobs.csv", jobs_csv(p.workload, *result)},
                                       {"tenants.csv", tenants_csv(p.workload, *result)},
                                       {"summary.json", sj.dump(2) + "\n"},
                                       {"manifest.json", manifest->dump(2) + "\n"}});
    if (!written) return usage_error("simulate", written.error());
    if (a.json) {
        std::cout << sj.dump(2) << "\n";
        return 0;
    }
    const AstraeaOptions& o = p.config.options;
    std::cout << fmt::format("{} ({} mode, job order {}, {} quotas, lease {} s) on {} ({}, {} "
                             "placement), {} tenant{}:\n",
                             a.policy, to_string(o.mode), to_string(o.job_order),
                             to_string(o.quota_mode), o.lease_s, a.run.cluster,
                             describe_cluster(p.config.cluster), p.config.placement,
                             p.workload.tenants.size(), p.workload.tenants.size() == 1 ? "" : "s")
              << summary_table(p.workload, *result, summary)
              << "  (F_j: a job's GPU-time received / deserved; fair = within 5 % of 1. F_u: the\n"
                 "   same for a tenant over the run; F_u > 1 means it borrowed idle GPUs.)\n";
    if (p.skipped != "0") std::cout << "  trace rows left out: " << p.skipped << "\n";
    std::cout << fmt::format("  outputs in {}/ (jobs.csv, tenants.csv, summary.json, "
                             "manifest.json)\n", a.out);
    return 0;
}

}  // namespace

std::function<int()> add_simulate(CLI::App& app) {
    auto args = std::make_shared<SimulateArgs>();
    CLI::App* sub = app.add_subcommand(
        "simulate",
        "Simulate a scheduling policy on a trace and report JCT, utilization and fairness.\n"
        "Writes jobs.csv (one row per job), tenants.csv (F_u, R_u, GPUs per tenant each hour),\n"
        "summary.json and manifest.json (seed, options, input hashes, version) to --out.");
    add_run_options(sub, args->run);
    sub->add_option("--policy", args->policy, "scheduling policy: " + policy_names())
        ->capture_default_str();
    sub->add_option("--out", args->out, "output directory")->capture_default_str();
    sub->add_flag("--json", args->json, "print the summary as JSON instead of a table");
    return [args] { return run_simulate(*args); };
}

}  // namespace astraeus::cli
