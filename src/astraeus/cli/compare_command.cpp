#include <fmt/format.h>

#include <future>
#include <iostream>
#include <sstream>

#include "astraeus/cli/commands.hpp"
#include "astraeus/cli/run_setup.hpp"
#include "astraeus/config/cluster_config.hpp"
#include "astraeus/sched/policies.hpp"
#include "astraeus/sim/metrics.hpp"
#include "astraeus/sim/report.hpp"

namespace astraeus::cli {
namespace {

struct CompareArgs {
    RunArgs run;
    std::string policies = "astraea,yarn-cs-emu", out = "out/compare";
    bool json = false;
};

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

struct Row {
    std::string policy;
    SimConfig config;
    Summary summary;
    nlohmann::json json;
};

std::string table(const std::vector<Row>& rows) {
    std::string out = fmt::format("  {:<12} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9} {:>6} {:>7}\n",
                                  "policy", "avg JCT", "p50", "p95", "p99", "avg wait",
                                  "makespan", "util", "preempt");
    for (const Row& r : rows) {
        const Summary& s = r.summary;
        out += fmt::format("  {:<12} {:>9.0f} {:>8.0f} {:>8.0f} {:>8.0f} {:>9.0f} {:>9} {:>5.1f}% "
                           "{:>7}\n",
                           r.policy, s.jct_s.mean, s.jct_s.p50, s.jct_s.p95, s.jct_s.p99,
                           s.queueing_delay_s.mean, s.makespan_s, 100 * s.gpu_utilization,
                           s.preemptions);
    }
    out += fmt::format("\n  {:<12} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} | {:>9} {:>8} {:>6} {:>9}\n",
                       "policy", "fair", "loss", "benefit", "min F_j", "p5 F_j", "Jain",
                       "max|F_u-1|", "max/min", "Jain", "spread x");
    const double base = rows.empty() ? 0 : rows.front().summary.fu_max_dev;
    for (const Row& r : rows) {
        const Summary& s = r.summary;
        const std::string ratio =
            base > 0 ? fmt::format("{:.2f}", s.fu_max_dev / base) : std::string("-");
        out += fmt::format("  {:<12} {:>6.1f}% {:>6.1f}% {:>6.1f}% {:>7.3f} {:>7.3f} {:>6.3f} | "
                           "{:>10.3f} {:>8.3f} {:>6.3f} {:>9}\n",
                           r.policy, 100 * s.share_fair, 100 * s.share_loss,
                           100 * s.share_benefit, s.fj_min, s.fj_p5, s.fj_jain, s.fu_max_dev,
                           s.fu_max_over_min, s.fu_jain, ratio);
    }
    out += fmt::format("  job fairness: share of jobs with F_j in [0.95, 1/0.95] (fair), below "
                       "(loss), above (benefit).\n  tenant fairness: F_u = GPU-time received / deserved over the run; "
                       "'spread x' = max|F_u - 1| of the policy / that of {}.\n",
                       rows.empty() ? "" : rows.front().policy);
    return out;
}

int run_compare(const CompareArgs& a) {
    auto prepared = prepare_run(a.run);
    if (!prepared) return usage_error("compare", prepared.error());
    const PreparedRun& p = *prepared;
    std::vector<Row> rows;
    for (const std::string& name : split_commas(a.policies)) {
        auto options = policy_options(name, p.config.options);
        if (!options) return usage_error("compare", options.error());
        Row r{name, p.config, {}, {}};
        r.config.options = *options;
        rows.push_back(std::move(r));
    }
    if (rows.empty()) return usage_error("compare", {"--policies: give at least one policy"});

    // Each policy runs on its own thread; simulate() is pure, so results equal sequential runs.
    std::vector<std::future<Result<SimResult>>> runs;
    for (const Row& r : rows)
        runs.push_back(std::async(std::launch::async, [&p, &r, &a] {
            return simulate(p.workload, r.config, progress_printer(a.run.quiet, r.policy + ": "));
        }));
    nlohmann::json all = nlohmann::json::object();
    std::vector<std::pair<std::string, std::string>> files;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        auto result = runs[i].get();
        if (!result) return usage_error("compare", result.error());
        rows[i].summary = summarize(p.workload, *result, rows[i].config.cluster.total_gpus());
        rows[i].json = summary_json(p.workload, *result, rows[i].summary);
        auto manifest = manifest_json(rows[i].config, p.inputs, rows[i].policy);
        if (!manifest) return usage_error("compare", manifest.error());
        all[rows[i].policy] = {{"summary", rows[i].json}, {"manifest", *manifest}};
        files.push_back({rows[i].policy + ".jobs.csv", jobs_csv(p.workload, *result)});
        files.push_back({rows[i].policy + ".tenants.csv", tenants_csv(p.workload, *result)});
    }
    const std::string text = table(rows);
    files.push_back({"compare.json", all.dump(2) + "\n"});
    files.push_back({"compare.txt", text});
    auto written = write_files(a.out, files);
    if (!written) {
        std::cerr << "astraeus compare: error: " << written.error().message << "\n";
        return 1;
    }
    if (a.json) {
        std::cout << all.dump(2) << "\n";
        return 0;
    }
    std::cout << fmt::format("{} jobs, {} tenants on {} ({}), {} mode:\n", p.workload.jobs.size(),
                             p.workload.tenants.size(), a.run.cluster,
                             describe_cluster(p.config.cluster), a.run.mode)
              << text << fmt::format("  outputs in {}/\n", a.out);
    return 0;
}

}  // namespace

std::function<int()> add_compare(CLI::App& app) {
    auto args = std::make_shared<CompareArgs>();
    CLI::App* sub = app.add_subcommand(
        "compare",
        "Run several policies on the same input (in parallel) and print one table: JCT,\n"
        "queueing delay, makespan, utilization, preemptions, job and tenant fairness.\n"
        "Writes compare.json, compare.txt and each policy's jobs/tenants CSV to --out.");
    add_run_options(sub, args->run);
    sub->add_option("--policies", args->policies,
                    "comma-separated policies, the first is the reference row: " + policy_names())
        ->capture_default_str();
    sub->add_option("--out", args->out, "output directory")->capture_default_str();
    sub->add_flag("--json", args->json, "print JSON instead of the table");
    return [args] { return run_compare(*args); };
}

}  // namespace astraeus::cli
