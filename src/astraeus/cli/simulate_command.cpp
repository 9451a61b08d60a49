#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "astraeus/trace/simulable.hpp"
#include "astraeus/cli/commands.hpp"
#include "astraeus/cli/run_setup.hpp"
#include "astraeus/config/cluster_config.hpp"
#include "astraeus/sched/policies.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/sim/goodput_recorder.hpp"
#include "astraeus/sim/metrics.hpp"
#include "astraeus/sim/report.hpp"

namespace astraeus::cli {
namespace {

struct SimulateArgs {
    RunArgs run;
    std::string policy = "astraea", out = "out/simulate";
    bool json = false;
    // Goodput (docs/goodput-simulation.md).
    bool goodput = false;
    std::string goodput_by = "workspace", lifecycle = "calibrated";
    int goodput_weeks = 0;
    LifecycleConfig model;               ///< the flags below, applied over --lifecycle
    std::vector<CLI::Option*> model_flags;
};

/// --lifecycle, then every model flag given on the command line over it.
Result<LifecycleConfig> lifecycle_of(const SimulateArgs& a) {
    auto base = LifecycleConfig::named(a.lifecycle);
    if (!base) return base;
    LifecycleConfig c = *base;
    const LifecycleConfig& f = a.model;
    for (CLI::Option* o : a.model_flags) {
        if (o->count() == 0) continue;
        const std::string n = o->get_name();
        if (n == "--startup") c.startup_s = f.startup_s;
        else if (n == "--startup-per-doubling") c.startup_per_doubling_s = f.startup_per_doubling_s;
        else if (n == "--early-failure") c.early_failure_p = f.early_failure_p;
        else if (n == "--failure-rate") c.failure_rate_gpu_hour = f.failure_rate_gpu_hour;
        else if (n == "--failure-rate-job") c.failure_rate_job_hour = f.failure_rate_job_hour;
        else if (n == "--failure-hold") c.failure_hold_s = f.failure_hold_s;
        else if (n == "--job-checkpoint") c.job_checkpoint_s = f.job_checkpoint_s;
        else if (n == "--machine-loss-rate") c.machine_loss_rate_day = f.machine_loss_rate_day;
        else if (n == "--repair-time") c.repair_s = f.repair_s;
        else if (n == "--stall-rate") c.stall_rate_job_hour = f.stall_rate_job_hour;
        else if (n == "--stall-timeout") c.stall_timeout_s = f.stall_timeout_s;
        else if (n == "--straggler-p") c.straggler_p = f.straggler_p;
        else if (n == "--util-segment") c.util_segment_s = f.util_segment_s;
        else if (n == "--max-attempts") c.max_attempts = f.max_attempts;
    }
    if (auto ok = check_lifecycle(c); !ok) return std::unexpected(ok.error());
    return c;
}

int run_simulate(const SimulateArgs& a) {
    auto prepared = prepare_run(a.run);
    if (!prepared) return usage_error("simulate", prepared.error());
    if (auto ok = check_simulable(prepared->workload, a.run.trace, a.run.format); !ok)
        return usage_error("simulate", ok.error());
    PreparedRun& p = *prepared;
    auto options = policy_options(a.policy, p.config.options);
    if (!options) return usage_error("simulate", options.error());
    p.config.options = *options;
    bool model_given = a.lifecycle != "calibrated";
    for (CLI::Option* o : a.model_flags) model_given = model_given || o->count() > 0;
    if (!a.goodput && (model_given || a.goodput_by != "workspace" || a.goodput_weeks != 0))
        return usage_error("simulate", Error{"--goodput-by, --goodput-weeks, --lifecycle and the "
                                             "lifecycle model flags need --goodput"});
    auto by = goodput::parse_by(a.goodput_by);
    if (!by) return usage_error("simulate", Error{"--goodput-by: " + by.error().message});
    if (a.goodput_weeks < 0 || a.goodput_weeks > 56)
        return usage_error("simulate", Error{"--goodput-weeks: expected a number of weeks from 0 "
                                             "to 56, got " + std::to_string(a.goodput_weeks)});
    if (a.goodput) {
        if (p.config.options.mode == Mode::Compat)
            return usage_error("simulate", Error{"--goodput needs --mode default (the compat "
                                                 "engine has no worker lifecycles)"});
        auto model = lifecycle_of(a);
        if (!model) return usage_error("simulate", model.error());
        p.config.goodput = *model;
        // Weeks of a trace without dates are 1970's (the tables said "Week 1969-W51"): say so.
        if (a.goodput_weeks > 0 && p.workload.epoch_unix_s == 0)
            std::cerr << "astraeus simulate: note: " << a.run.trace
                      << " has no calendar dates (epoch 0): --goodput-weeks counts its time from "
                         "1970-01-01 (Thursday of 1970-W01)\n";
    }

    // A bad --out is found now, not after the simulation.
    const auto made_out = check_output_dir(a.out);
    if (!made_out) return usage_error("simulate", made_out.error());
    auto result = simulate(p.workload, p.config, progress_printer(a.run.quiet, ""));
    if (!result) {
        // No partial output: not even the empty folder the check above made.
        std::error_code ec;
        if (*made_out) std::filesystem::remove(a.out, ec);
        return usage_error("simulate", result.error());
    }

    const Summary summary = summarize(p.workload, *result, p.config.cluster.total_gpus());
    auto manifest = manifest_json(p.config, p.inputs, a.policy);
    if (!manifest) return usage_error("simulate", manifest.error());
    const nlohmann::json sj = summary_json(p.workload, *result, summary);
    const std::string summary_text = sj.dump(2) + "\n", manifest_text = manifest->dump(2) + "\n";
    auto text = [](const std::string& t) -> FileWriter {
        return [&t](std::ostream& out) { out << t; };
    };
    std::vector<std::pair<std::string, FileWriter>> files{
        {"jobs.csv", [&](std::ostream& out) { write_jobs_csv(out, p.workload, *result); }},
        {"tenants.csv", [&](std::ostream& out) { out << tenants_csv(p.workload, *result); }},
        {"summary.json", text(summary_text)},
        {"manifest.json", text(manifest_text)}};
    std::string goodput_table, goodput_text_json;
    if (result->goodput) {
        goodput_text_json = goodput_json(*result->goodput, *by, a.goodput_weeks).dump(2) + "\n";
        files.push_back({"goodput.json", text(goodput_text_json)});
        goodput_table = goodput_text(*result->goodput, *by, a.goodput_weeks);
    }
    auto written = write_files(a.out, files);
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
    if (result->goodput) {
        const GoodputEvents& e = result->goodput->events;
        std::cout << fmt::format("\nGoodput (lifecycle {}: {} placements, {} failures, {} machine "
                                 "losses, {} stalls, {} stragglers, {} preemptions, {} job{} "
                                 "failed for good)\n",
                                 result->goodput->lifecycle.name, e.placements, e.failures,
                                 e.machine_losses, e.stalls, e.stragglers, e.preemptions,
                                 e.failed_for_good, e.failed_for_good == 1 ? "" : "s")
                  << goodput_table << "\n";
    }
    std::cout << fmt::format("  outputs in {}/ (jobs.csv, tenants.csv, summary.json, "
                             "manifest.json{})\n", a.out, result->goodput ? ", goodput.json" : "");
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
    // Goodput accounting (docs/goodput-simulation.md).
    sub->add_flag("--goodput", args->goodput,
                  "goodput accounting: simulate worker lifecycles (start-up, failures, machine "
                  "losses, stalls, stragglers, GPU utilization), print the goodput table after "
                  "the summary and write goodput.json (default mode only; with the lifecycle "
                  "models on, failures, start-ups and losses change the schedule)");
    sub->add_option("--goodput-by", args->goodput_by,
                    "rows of the goodput table and goodput.json: workspace (= tenant), run (= "
                    "job), machine or pool (= the cluster)")
        ->capture_default_str();
    sub->add_option("--goodput-weeks", args->goodput_weeks,
                    "also one goodput table per ISO week: the last N complete weeks before the "
                    "end of the simulation and the week of the end (0..56; 0 = none)")
        ->capture_default_str();
    sub->add_option("--lifecycle", args->lifecycle,
                    "lifecycle models: calibrated (defaults fitted to Philly, see "
                    "docs/goodput-simulation.md) or none (start-up 0, no failures, losses, stalls "
                    "or stragglers, every running minute 100 % busy)")
        ->capture_default_str();
    LifecycleConfig& m = args->model;
    auto& f = args->model_flags;
    f.push_back(sub->add_option("--startup", m.startup_s,
                                "start-up seconds of every placement (image, drives)")
                    ->capture_default_str());
    f.push_back(sub->add_option("--startup-per-doubling", m.startup_per_doubling_s,
                                "gang barrier: extra start-up seconds per doubling of the "
                                "machines a gang spans")
                    ->capture_default_str());
    f.push_back(sub->add_option("--early-failure", m.early_failure_p,
                                "probability that a job fails in its first 10 minutes of running")
                    ->capture_default_str());
    f.push_back(sub->add_option("--failure-rate", m.failure_rate_gpu_hour,
                                "failures per GPU-hour of running (any time)")
                    ->capture_default_str());
    f.push_back(sub->add_option("--failure-rate-job", m.failure_rate_job_hour,
                                "failures per job-hour of running (any time)")
                    ->capture_default_str());
    f.push_back(sub->add_option("--failure-hold", m.failure_hold_s,
                                "seconds a failed job keeps its GPUs before it releases them and "
                                "waits to be placed again (losing the work since its last "
                                "checkpoint)")
                    ->capture_default_str());
    f.push_back(sub->add_option("--job-checkpoint", m.job_checkpoint_s,
                                "seconds of work between a job's own checkpoints (0: only the "
                                "scheduler's, at lease ends); a failure loses the work since "
                                "the last one")
                    ->capture_default_str());
    f.push_back(sub->add_option("--machine-loss-rate", m.machine_loss_rate_day,
                                "machine losses per machine-day (the jobs on it fail)")
                    ->capture_default_str());
    f.push_back(sub->add_option("--repair-time", m.repair_s,
                                "seconds a lost machine stays out of use")
                    ->capture_default_str());
    f.push_back(sub->add_option("--stall-rate", m.stall_rate_job_hour,
                                "stalls per job-hour of running (no progress; detected after the "
                                "stall timeout, then the run is stopped and placed again)")
                    ->capture_default_str());
    f.push_back(sub->add_option("--stall-timeout", m.stall_timeout_s,
                                "seconds without progress before a stall is detected")
                    ->capture_default_str());
    f.push_back(sub->add_option("--straggler-p", m.straggler_p,
                                "probability per placement that a straggler halves the gang's "
                                "utilization from a random time on")
                    ->capture_default_str());
    f.push_back(sub->add_option("--util-segment", m.util_segment_s,
                                "mean seconds between utilization level changes of a running "
                                "job (levels drawn from Philly's GPU utilization CDF)")
                    ->capture_default_str());
    f.push_back(sub->add_option("--max-attempts", m.max_attempts,
                                "attempts per job (1..100): an attempt ends at a failure, "
                                "machine loss or stall (not at a lease end); a job whose last "
                                "attempt fails holds its GPUs for the holding time, then fails for "
                                "good (never placed again; jobs.csv: pending, no end). Bounds "
                                "every simulation whatever the rates")
                    ->capture_default_str());
    return [args] { return run_simulate(*args); };
}

}  // namespace astraeus::cli
