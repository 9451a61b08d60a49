#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "astraeus/cli/commands.hpp"
#include "astraeus/config/cluster_config.hpp"
#include "astraeus/config/tenant_config.hpp"
#include "astraeus/sim/engine.hpp"
#include "astraeus/sim/metrics.hpp"
#include "astraeus/sim/report.hpp"
#include "astraeus/trace/reference_csv.hpp"

namespace astraeus::cli {
namespace {

struct SimulateArgs {
    std::string trace, tenants, names, out = "out/simulate", cluster = "40x8";
    std::string mode = "default", job_order = "fairness", quota = "fair", policy = "astraea";
    std::string placement = "consolidate", unknown_tenant = "error";
    Seconds lease_s = 1800, starvation_s = 4 * 3600, delay_s = 300;
    Seconds checkpoint_s = 5, restore_s = 20, bucket_s = 3600;
    int window = 24;
    bool no_block = false, json = false, quiet = false;
    std::uint64_t seed = 1;
};

int run_simulate(const SimulateArgs& a) {
    auto error = [](const Error& e) {
        std::cerr << "astraeus simulate: error: " << e.message << "\n";
        return 2;
    };
    SimConfig config;
    auto cluster = resolve_cluster(a.cluster);
    if (!cluster) return error(cluster.error());
    config.cluster = *cluster;
    config.cluster_name = a.cluster;
    config.placement = a.placement;
    auto mode = parse_mode(a.mode);
    if (!mode) return error(mode.error());
    auto order = parse_job_order(a.job_order);
    if (!order) return error(order.error());
    auto quota = parse_quota_mode(a.quota);
    if (!quota) return error(quota.error());
    if (a.policy != "astraea") return error({"unknown policy '" + a.policy + "'; valid: astraea"});
    AstraeaOptions& o = config.options;
    o.mode = *mode;
    o.job_order = *order;
    o.quota_mode = *quota;
    o.lease_s = a.lease_s;
    o.starvation_s = a.starvation_s;
    o.delay_s = a.delay_s;
    o.block_scheduling = !a.no_block;
    o.seed = a.seed;
    o.checkpoint_s = a.checkpoint_s;
    o.restore_s = a.restore_s;
    o.window_buckets = a.window;
    o.bucket_s = a.bucket_s;
    if (o.mode == Mode::Compat) o.checkpoint_s = o.restore_s = 0;  // quirk 5: not charged
    UnknownTenant unknown = UnknownTenant::Error;
    if (o.mode == Mode::Compat) {
        unknown = UnknownTenant::Drop;  // quirk 2
    } else if (a.unknown_tenant == "default-weight") {
        unknown = UnknownTenant::DefaultWeight;
    } else if (a.unknown_tenant != "error") {
        return error({"--unknown-tenant '" + a.unknown_tenant + "': valid: error, default-weight"});
    }

    auto tenants = read_tenant_config(a.tenants, a.names);
    if (!tenants) return error(tenants.error());
    auto trace = read_reference_jobs(a.trace);
    if (!trace) return error(trace.error());
    auto workload = apply_tenants(std::move(*trace), *tenants, unknown, a.trace);
    if (!workload) return error(workload.error());

    const auto started = std::chrono::steady_clock::now();
    ProgressFn progress;
    if (!a.quiet)
        progress = [&](const Progress& p) {
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                              started).count();
            if (wall < 2.0) return;
            std::cerr << fmt::format("  simulated {:.1f} h, {} / {} jobs done, {:.0f} jobs/s\n",
                                     static_cast<double>(p.now_s) / 3600.0, p.jobs_done,
                                     p.jobs_total, static_cast<double>(p.jobs_done) / wall);
        };
    auto result = simulate(*workload, config, progress);
    if (!result) return error(result.error());

    const Summary summary = summarize(*workload, *result, config.cluster.total_gpus());
    std::vector<InputFile> inputs{{"trace", a.trace}, {"tenants", a.tenants}};
    if (!a.names.empty()) inputs.push_back({"names", a.names});
    auto manifest = manifest_json(config, inputs);
    if (!manifest) return error(manifest.error());
    const nlohmann::json sj = summary_json(*workload, *result, summary);
    auto written = write_files(a.out, {{"jobs.csv", jobs_csv(*workload, *result)},
                                       {"tenants.csv", tenants_csv(*workload, *result)},
                                       {"summary.json", sj.dump(2) + "\n"},
                                       {"manifest.json", manifest->dump(2) + "\n"}});
    if (!written) {
        std::cerr << "astraeus simulate: error: " << written.error().message << "\n";
        return 1;
    }
    if (a.json) {
        std::cout << sj.dump(2) << "\n";
    } else {
        std::cout << fmt::format("ASTRAEA ({} mode, job order {}, {} quotas, lease {} s) on {} "
                                 "({}, {} placement):\n",
                                 to_string(o.mode), to_string(o.job_order), to_string(o.quota_mode),
                                 o.lease_s, a.cluster, describe_cluster(config.cluster),
                                 config.placement)
                  << summary_table(*workload, *result, summary)
                  << fmt::format("  outputs in {}/ (jobs.csv, tenants.csv, summary.json, "
                                 "manifest.json)\n", a.out);
    }
    return 0;
}

}  // namespace

std::function<int()> add_simulate(CLI::App& app) {
    auto args = std::make_shared<SimulateArgs>();
    CLI::App* sub = app.add_subcommand(
        "simulate",
        "Simulate the ASTRAEA scheduler on a trace and report JCT, utilization and fairness.\n"
        "Writes jobs.csv (one row per job), tenants.csv (F_u, R_u, GPUs per tenant each hour),\n"
        "summary.json and manifest.json (seed, options, input hashes, version) to --out.");
    sub->add_option("--trace", args->trace,
                    "jobs CSV in the reference simulator's format "
                    "(job_id,user,num_gpu,submit_time,...,duration; seconds; may be .gz)")
        ->required();
    sub->add_option("--tenants", args->tenants,
                    "tenant weights: CSV (name,share) or JSON ({\"tenants\": [{\"name\", "
                    "\"weight\" or \"quota_gpus\"}]}); see docs/tenants.md")
        ->required();
    sub->add_option("--names", args->names,
                    "tenant order, one name a line (default: the order of --tenants)");
    sub->add_option("--cluster", args->cluster,
                    "MACHINESxGPUS (e.g. 40x8), a preset (philly: 552 machines, 2490 GPUs; "
                    "reference-1120: 140x8) or a machine-list CSV")
        ->capture_default_str();
    sub->add_option("--placement", args->placement,
                    "gang placement: consolidate (spreads when it must) or pack (never spreads)")
        ->capture_default_str();
    sub->add_option("--policy", args->policy, "scheduling policy: astraea")->capture_default_str();
    sub->add_option("--mode", args->mode,
                    "default (the product) or compat (the reference simulator, quirks kept)")
        ->capture_default_str();
    sub->add_option("--job-order", args->job_order, "job order inside a tenant: " + job_order_names())
        ->capture_default_str();
    sub->add_option("--quota", args->quota, "quota mode: fair (water filling) or static")
        ->capture_default_str();
    sub->add_option("--lease", args->lease_s, "lease term L, seconds")->capture_default_str();
    sub->add_option("--starvation", args->starvation_s,
                    "starvation threshold T_starve, seconds pending since the last start")
        ->capture_default_str();
    sub->add_option("--delay", args->delay_s,
                    "delay threshold T_delay: a job restarted less than this ago may be "
                    "preempted by a new job of its tenant, seconds")
        ->capture_default_str();
    sub->add_option("--checkpoint-cost", args->checkpoint_s,
                    "default mode: seconds a lease end spends writing a checkpoint")
        ->capture_default_str();
    sub->add_option("--restore-cost", args->restore_s,
                    "default mode: seconds a resumed job spends restoring")
        ->capture_default_str();
    sub->add_option("--window", args->window, "tenant fairness window, in buckets")
        ->capture_default_str();
    sub->add_option("--bucket", args->bucket_s, "tenant fairness bucket, seconds")
        ->capture_default_str();
    sub->add_option("--unknown-tenant", args->unknown_tenant,
                    "default mode: a job whose tenant has no weight is an error, or gets "
                    "default-weight (1)")
        ->capture_default_str();
    sub->add_flag("--no-block", args->no_block,
                  "on a failed job, try the tenant's next job instead of blocking its queue");
    sub->add_option("--seed", args->seed, "random seed (random job order)")->capture_default_str();
    sub->add_option("--out", args->out, "output directory")->capture_default_str();
    sub->add_flag("--json", args->json, "print the summary as JSON instead of a table");
    sub->add_flag("--quiet", args->quiet, "no progress output on stderr");
    return [args] { return run_simulate(*args); };
}

}  // namespace astraeus::cli
