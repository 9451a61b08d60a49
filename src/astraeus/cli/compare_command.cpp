#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "astraeus/base/count_text.hpp"
#include "astraeus/trace/simulable.hpp"
#include "astraeus/cli/commands.hpp"
#include "astraeus/cli/number_checks.hpp"
#include "astraeus/cli/run_setup.hpp"
#include "astraeus/config/cluster_config.hpp"
#include "astraeus/sched/policies.hpp"
#include "astraeus/sim/html_report.hpp"
#include "astraeus/sim/metrics.hpp"
#include "astraeus/sim/report.hpp"

namespace astraeus::cli {
namespace {

struct CompareArgs {
    RunArgs run;
    SweepLists sweeps;
    std::string policies = "astraea,yarn-cs-emu", out = "out/compare";
    bool json = false;
    int threads = 0;
};

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

using SweepValues = std::vector<std::pair<std::string, Seconds>>;  // (option key, value)

struct Row {
    std::string policy;
    SweepValues sweep;  // empty without a sweep
    std::vector<std::string> overridden;  // swept keys the policy sets itself
    SimConfig config;
    Summary summary;
    nlohmann::json json;
};

/// "astraea", or "astraea.lease_s=300" in a sweep: the row's name in compare.json and its files.
std::string row_key(const Row& r) {
    std::string out = r.policy;
    for (const auto& [key, value] : r.sweep) out += fmt::format(".{}={}", key, value);
    return out;
}

std::string table(const std::vector<Row>& rows, const std::vector<std::string>& keys) {
    auto sweep_cells = [&](const Row* r) {
        std::string out;
        for (const std::string& k : keys) {
            std::string v = k;
            if (r != nullptr)
                for (const auto& [key, value] : r->sweep)
                    if (key == k)
                        v = fmt::format("{}{}", value,
                                        std::find(r->overridden.begin(), r->overridden.end(), k) !=
                                                r->overridden.end()
                                            ? "*"
                                            : "");
            out += fmt::format(" {:>{}}", v, std::max<std::size_t>(k.size(), 7));
        }
        return out;
    };
    // A run that finished fewer jobs than the trace has (dropped: too big for the cluster, or
    // over a static quota) has figures over fewer jobs: the "done" column says so.
    const bool some_not_done = std::any_of(rows.begin(), rows.end(), [](const Row& r) {
        return r.summary.jobs_done < r.summary.jobs_total;
    });
    // The policy column fits the longest name (yarn-cs-elastic, 15 characters, pushed its rows
    // two columns right of the header).
    std::size_t w = 13;
    for (const Row& r : rows) w = std::max(w, r.policy.size());
    std::string out = fmt::format(
        "  {:<{}}{} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9} {:>6} {:>7}{}\n", "policy", w,
        sweep_cells(nullptr), "avg JCT", "p50", "p95", "p99", "avg wait", "max wait", "makespan",
        "util", "preempt", some_not_done ? fmt::format(" {:>13}", "done") : "");
    for (const Row& r : rows) {
        const Summary& s = r.summary;
        out += fmt::format("  {:<{}}{} {:>9.0f} {:>8.0f} {:>8.0f} {:>8.0f} {:>9.0f} {:>9.0f} {:>9} "
                           "{:>5.1f}% {:>7}{}\n",
                           r.policy, w, sweep_cells(&r), s.jct_s.mean, s.jct_s.p50, s.jct_s.p95,
                           s.jct_s.p99, s.queueing_delay_s.mean, s.longest_wait_s.max,
                           s.makespan_s, 100 * s.gpu_utilization, s.preemptions,
                           some_not_done
                               ? fmt::format(" {:>13}", fmt::format("{}/{}", s.jobs_done, s.jobs_total))
                               : "");
    }
    if (some_not_done)
        out += "  done = jobs finished of the trace's; the others were dropped (a gang larger than "
               "the cluster,\n  or over its tenant's static quota: `astraeus simulate` names them) "
               "and are in no figure.\n";
    out += fmt::format("\n  {:<{}}{} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} | {:>10} {:>8} {:>6} "
                       "{:>9} {:>10}\n",
                       "policy", w, sweep_cells(nullptr), "fair", "loss", "benefit", "min F_j",
                       "p5 F_j", "Jain", "min F_u", "max/min", "Jain", "shortfall", "F_u(t) min");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        const Summary& s = r.summary;
        out += fmt::format("  {:<{}}{} {:>6.1f}% {:>6.1f}% {:>6.1f}% {:>7.3f} {:>7.3f} {:>6.3f} | "
                           "{:>10.3f} {:>8.3f} {:>6.3f} {:>9.4f} {:>10.3f}\n",
                           r.policy, w, sweep_cells(&r), 100 * s.share_fair, 100 * s.share_loss,
                           100 * s.share_benefit, s.fj_min, s.fj_p5, s.fj_jain, s.fu_min,
                           s.fu_max_over_min, s.fu_jain, s.fu_max_shortfall,
                           s.fu_worst_over_time);
    }
    out += "  job fairness: share of jobs with F_j in [0.95, 1/0.95] (fair), below (loss), above "
           "(benefit).\n  tenant fairness: F_u = GPU-time received / deserved over the run (F_u > "
           "1: it borrowed idle GPUs);\n  shortfall = max(0, 1 - min F_u); F_u(t) min = the worst "
           "tenant's F_u over the sliding window at\n  any hourly sample. avg wait = the mean queueing "
           "delay (submit to first start, s);\n  max wait = the longest stretch any job spent "
           "pending (before its first start or after a lease end,\n  a preemption or a failure, "
           "s).\n";
    for (const Row& r : rows)
        if (!r.overridden.empty()) {
            out += "  * the policy sets this option itself (see its manifest): the swept value "
                   "has no effect on that row.\n";
            break;
        }
    return out;
}

/// The options as the report's title block states them (before any policy's own settings).
std::string options_text(const AstraeaOptions& o, const RunArgs& a) {
    return fmt::format(
        "mode {}, job order {}, quotas {}, lease {} s, starvation {} s, delay {} s, checkpoint "
        "{} s, restore {} s, window {} x {} s, {}blocking, seed {} (a policy may override "
        "some: see each run's manifest in compare.json)",
        to_string(o.mode), to_string(o.job_order), to_string(o.quota_mode), o.lease_s,
        o.starvation_s, o.delay_s, o.checkpoint_s, o.restore_s, o.window_buckets, o.bucket_s,
        a.no_block ? "no " : "", o.seed);
}

int run_compare(const CompareArgs& a) {
    // Sweeps: each flag given a list of more than one value is an axis of the grid.
    RunArgs run = a.run;
    std::vector<std::pair<const SweepOption*, std::vector<Seconds>>> axes;
    for (const SweepOption& opt : sweep_options()) {
        auto given = a.sweeps.find(opt.flag);
        if (given == a.sweeps.end() || given->second.empty()) continue;
        auto values = parse_sweep(opt.flag, given->second);
        if (!values) return usage_error("compare", values.error());
        run.*opt.arg = values->front();
        if (values->size() > 1) axes.push_back({&opt, std::move(*values)});
    }
    auto prepared = prepare_run(run);
    if (!prepared) return usage_error("compare", prepared.error());
    if (auto ok = check_simulable(prepared->workload, run.trace, run.format); !ok)
        return usage_error("compare", ok.error());
    const PreparedRun& p = *prepared;
    for (const auto& [opt, values] : axes)
        if (p.config.options.mode == Mode::Compat &&
            (opt->key == "checkpoint_s" || opt->key == "restore_s"))
            return usage_error("compare", {opt->flag + ": compat mode charges no checkpoint or "
                                                       "restore cost, so sweeping it changes "
                                                       "nothing"});
    const std::vector<std::string> policies = split_commas(a.policies);
    if (policies.empty()) return usage_error("compare", {"--policies: give at least one policy"});
    if (a.policies.front() == ',' || a.policies.back() == ',' ||
        a.policies.find(",,") != std::string::npos)
        return usage_error("compare", {"--policies: an empty entry in '" + a.policies + "'"});

    // The grid: sweep combinations (first axis outermost), then policies in the order given.
    std::vector<Row> rows;
    std::vector<std::size_t> at(axes.size(), 0);
    while (true) {
        SweepValues sweep;
        AstraeaOptions base = p.config.options;
        for (std::size_t k = 0; k < axes.size(); ++k) {
            const Seconds v = axes[k].second[at[k]];
            base.*(axes[k].first->option) = v;
            sweep.push_back({axes[k].first->key, v});
        }
        for (const std::string& name : policies) {
            auto options = policy_options(name, base);
            if (!options) return usage_error("compare", options.error());
            Row r{name, sweep, {}, p.config, {}, {}};
            r.config.options = *options;
            for (const auto& [opt, values] : axes)
                if (r.config.options.*(opt->option) != base.*(opt->option))
                    r.overridden.push_back(opt->key);
            rows.push_back(std::move(r));
        }
        std::size_t k = axes.size();
        while (k > 0 && ++at[k - 1] == axes[k - 1].second.size()) at[--k] = 0;
        if (k == 0) break;
    }
    for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (row_key(rows[k]) == row_key(rows[i]))
                return usage_error("compare", {"--policies: " + rows[i].policy + " is given twice"});

    // A bad --out is found now, not after the simulations.
    const auto made_out = check_output_dir(a.out);
    if (!made_out) return usage_error("compare", made_out.error());

    // Runs on a pool of threads, each taking the next row; simulate() is pure, so the results
    // (and every output byte) equal those of sequential runs (--threads 1).
    std::vector<std::optional<Result<SimResult>>> results(rows.size());
    {
        std::atomic<std::size_t> next{0};
        auto work = [&] {
            for (std::size_t i; (i = next.fetch_add(1)) < rows.size();) {
                const std::string label = rows[i].sweep.empty() ? rows[i].policy : row_key(rows[i]);
                results[i] = simulate(p.workload, rows[i].config,
                                      progress_printer(a.run.quiet, label + ": "));
            }
        };
        const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
        const std::size_t n = std::min(rows.size(), a.threads > 0 ? static_cast<std::size_t>(a.threads) : cores);
        if (n <= 1) {
            work();
        } else {
            std::vector<std::jthread> pool;
            for (std::size_t t = 0; t < n; ++t) pool.emplace_back(work);
        }
    }

    std::vector<std::string> keys;
    for (const auto& [opt, values] : axes) keys.push_back(opt->key);
    nlohmann::json all = nlohmann::json::object();
    std::vector<std::pair<std::string, std::string>> files;
    std::vector<ReportRun> report_runs;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Result<SimResult>& result = *results[i];
        if (!result) {
            // No partial output: not even the empty folder check_output_dir made.
            std::error_code ec;
            if (*made_out) std::filesystem::remove(a.out, ec);
            return usage_error("compare", result.error());
        }
        Row& r = rows[i];
        r.summary = summarize(p.workload, *result, r.config.cluster.total_gpus());
        r.json = summary_json(p.workload, *result, r.summary);
        auto manifest = manifest_json(r.config, p.inputs, r.policy);
        if (!manifest) return usage_error("compare", manifest.error());
        const std::string key = row_key(r);
        nlohmann::json entry = {{"summary", r.json}, {"manifest", *manifest}};
        if (!r.sweep.empty()) {
            entry["sweep"] = nlohmann::json::object();
            for (const auto& [k, v] : r.sweep) entry["sweep"][k] = v;
        }
        all[key] = std::move(entry);
        files.push_back({key + ".jobs.csv", jobs_csv(p.workload, *result)});
        files.push_back({key + ".tenants.csv", tenants_csv(p.workload, *result)});
        report_runs.push_back({r.policy, r.sweep, r.overridden, &*result, r.summary});
    }
    const std::string text = table(rows, keys);

    ReportHeader header;
    const std::string trace_name = std::filesystem::path(a.run.trace).filename().string();
    header.title = trace_name + " on " + a.run.cluster;
    std::size_t tenants_with_jobs = 0;
    {
        std::vector<char> seen(p.workload.tenants.size(), 0);
        for (const Job& j : p.workload.jobs)
            if (j.tenant >= 0) seen[static_cast<std::size_t>(j.tenant)] = 1;
        tenants_with_jobs = static_cast<std::size_t>(std::count(seen.begin(), seen.end(), 1));
    }
    header.details.push_back(
        {"trace", fmt::format("{} ({} jobs{})", a.run.trace, p.workload.jobs.size(),
                              p.skipped != "0" ? ", rows left out: " + p.skipped : "")});
    header.details.push_back(
        {"tenants", fmt::format("{} ({} tenants, {} with jobs)",
                                a.run.tenants.empty() ? "the trace's, equal weights" : a.run.tenants,
                                p.workload.tenants.size(), tenants_with_jobs)});
    header.details.push_back({"cluster", fmt::format("{}: {}, {} placement", a.run.cluster,
                                                     describe_cluster(p.config.cluster),
                                                     p.config.placement)});
    header.details.push_back({"policies", a.policies});
    header.details.push_back({"options", options_text(p.config.options, run)});
    for (const auto& [opt, values] : axes)
        header.details.push_back({"swept", fmt::format("{} ({}) = {}", opt->key, opt->flag,
                                                       fmt::join(values, ", "))});
    header.sweep_keys = keys;
    const std::string html =
        html_report(p.workload, p.config.cluster.total_gpus(), header, report_runs);

    files.push_back({"compare.json", all.dump(2) + "\n"});
    files.push_back({"compare.txt", text});
    files.push_back({"report.html", html});
    auto written = write_files(a.out, files);
    if (!written) {
        std::cerr << "astraeus compare: error: " << written.error().message << "\n";
        return 1;
    }
    if (a.json) {
        std::cout << all.dump(2) << "\n";
        return 0;
    }
    std::cout << fmt::format("{}, {} on {} ({}), {} mode, {}:\n",
                             count_text(std::ssize(p.workload.jobs), "job"),
                             count_text(std::ssize(p.workload.tenants), "tenant"), a.run.cluster,
                             describe_cluster(p.config.cluster), a.run.mode, count_text(std::ssize(rows), "run"))
              << text
              << fmt::format("  report: {}/report.html ({:.1f} kB)\n  outputs in {}/\n", a.out,
                             static_cast<double>(html.size()) / 1000.0, a.out);
    return 0;
}

}  // namespace

std::function<int()> add_compare(CLI::App& app) {
    auto args = std::make_shared<CompareArgs>();
    CLI::App* sub = app.add_subcommand(
        "compare",
        "Run several policies on the same input (in parallel) and print one table: JCT,\n"
        "queueing delay, makespan, utilization, preemptions, job and tenant fairness.\n"
        "A comma-separated list for --lease, --starvation, --delay, --checkpoint-cost or\n"
        "--restore-cost runs every policy at every value (a sweep; lists of several options\n"
        "make a grid) and adds a column per swept option.\n"
        "Writes compare.json, compare.txt, report.html (a self-contained page with charts) and\n"
        "each run's jobs/tenants CSV to --out. Same input and seed: byte-identical files.");
    add_run_options(sub, args->run, &args->sweeps);
    sub->add_option("--policies", args->policies,
                    "comma-separated policies, the first is the reference row: " + policy_names())
        ->capture_default_str();
    sub->add_option("--out", args->out, "output directory")->capture_default_str();
    sub->add_option("--threads", args->threads,
                    "simulations run at once (0: one per core); results do not depend on it")
        ->capture_default_str()
        ->check(whole_number(0, 999999999, "UINT"));
    sub->add_flag("--json", args->json, "print JSON instead of the table");
    return [args] { return run_compare(*args); };
}

}  // namespace astraeus::cli
