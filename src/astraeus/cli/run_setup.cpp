#include "astraeus/cli/run_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <iostream>

#include "astraeus/cli/number_checks.hpp"
#include "astraeus/config/cluster_config.hpp"
#include "astraeus/config/tenant_config.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/trace/read_trace.hpp"

namespace astraeus::cli {


void add_run_options(CLI::App* sub, RunArgs& a, SweepLists* sweeps) {
    sub->add_option("--trace", a.trace, "job trace (may be .gz); see docs/formats/")->required();
    sub->add_option("--format", a.format,
                    "trace format: auto (detect), reference, philly-joblog, helios, rfold, "
                    "rfold-philly, native")
        ->capture_default_str();
    sub->add_option("--tenants", a.tenants,
                    "tenant weights: CSV (name,share) or JSON ({\"tenants\": [{\"name\", "
                    "\"weight\" or \"quota_gpus\"}]}); default: every tenant of the trace, "
                    "equal weights. See docs/tenants.md");
    sub->add_option("--names", a.names,
                    "tenant order, one name a line (default: the order of --tenants)");
    sub->add_option("--cluster", a.cluster,
                    "MACHINESxGPUS (e.g. 40x8), a preset (philly: 552 machines, 2490 GPUs; "
                    "reference-1120: 140x8) or a machine-list CSV")
        ->capture_default_str();
    sub->add_option("--placement", a.placement,
                    "gang placement: consolidate (spreads when it must) or pack (never spreads)")
        ->capture_default_str();
    sub->add_option("--mode", a.mode,
                    "default (the product) or compat (the reference simulator, quirks kept; "
                    "see docs/modes.md)")
        ->capture_default_str();
    sub->add_option("--job-order", a.job_order, "job order inside a tenant: " + job_order_names())
        ->capture_default_str();
    sub->add_option("--quota", a.quota, "quota mode: fair (water filling) or static")
        ->capture_default_str();
    // The sweepable options: one integer for simulate, a list for compare.
    auto seconds = [sub, sweeps](const std::string& flag, Seconds& value, const std::string& help,
                                 SecondsBounds bounds) {
        if (sweeps != nullptr) {
            sub->add_option(flag, (*sweeps)[flag],
                            help + "; a comma-separated list runs each value (a sweep)")
                ->default_str(std::to_string(value));
            return;
        }
        sub->add_option(flag, value, help)
            ->capture_default_str()
            ->check(CLI::Validator(
                [](std::string& s) {
                    return s.find(',') == std::string::npos
                               ? std::string()
                               : "takes one value here; a list (a sweep) is for `astraeus compare`";
                },
                "", "single value"))
            ->check(whole_number(bounds.lo, bounds.hi, "SECONDS"));
    };
    seconds("--lease", a.lease_s, "lease term L, seconds", kLeaseBounds);
    seconds("--starvation", a.starvation_s,
            "starvation threshold T_starve, seconds pending since the last start", kStarvationBounds);
    seconds("--delay", a.delay_s,
            "delay threshold T_delay: a job restarted less than this ago may be preempted by a "
            "new job of its tenant, seconds",
            kDelayBounds);
    seconds("--checkpoint-cost", a.checkpoint_s,
            "default mode: seconds a lease end spends writing a checkpoint", kCheckpointCostBounds);
    seconds("--restore-cost", a.restore_s, "default mode: seconds a resumed job spends restoring",
            kRestoreCostBounds);
    sub->add_option("--window", a.window, "tenant fairness window, in buckets")
        ->capture_default_str();
    sub->add_option("--bucket", a.bucket_s, "tenant fairness bucket, seconds")
        ->capture_default_str();
    sub->add_option("--unknown-tenant", a.unknown_tenant,
                    "default mode: a job whose tenant has no weight is an error, or gets "
                    "default-weight (1)")
        ->capture_default_str();
    sub->add_flag("--backfill", a.backfill,
                  "default mode: give GPUs left idle by budgets or blocked queues to jobs "
                  "behind a blocked head when no head can be delayed (EASY-style; docs/modes.md)");
    const std::string better = "astraea's changes to the published algorithm (docs/policies.md)";
    sub->add_flag("--no-reservation", a.no_reservation,
                  "astraea: hold no GPUs for starving jobs or the neediest tenant's blocked gang")
        ->group(better);
    sub->add_flag("--config-order-ties", a.config_order_ties,
                  "astraea: settle tenant ties by the tenants file's order (as published), not "
                  "by the long-term index then the name")
        ->group(better);
    sub->add_option("--index-half-life", a.index_half_life_s,
                    "astraea: half-life of the usage behind the scheduling index, seconds; 0: the "
                    "hard-edged window (as published)")
        ->capture_default_str()
        ->check(whole_number(0, kMaxTraceTime, "SECONDS"))
        ->group(better);
    sub->add_option("--index-tolerance", a.index_tolerance,
                    "astraea: indexes closer than this are a tie settled by the instantaneous "
                    "share (GPUs held / quota); 0: the lower index takes every free GPU (as "
                    "published)")
        ->capture_default_str()
        ->check(real_number(0.0, 1.0, ""))
        ->group(better);
    sub->add_option("--gang-weight", a.gang_weight,
                    "fairness job order: rank by F_j * g_j^W (smaller gangs first among equally "
                    "served jobs); 0: F_j (as published)")
        ->capture_default_str()
        ->check(real_number(0.0, 4.0, ""))
        ->group(better);
    sub->add_flag("--no-own-hold", a.no_own_hold,
                  "astraea: hold no GPUs for the starving gang of a tenant over its share (its "
                  "own running jobs' GPUs)")
        ->group(better);
    sub->add_flag("--due-first", a.due_first,
                  "astraea: in the fairness order the jobs below their due (F_j < 1) go first, "
                  "each group by F_j * g_j^W")
        ->group(better);
    sub->add_flag("--keep-reservation", a.keep_reservation,
                  "astraea: the head gang a round held GPUs for keeps the hold while it waits (and "
                  "a gang its tenant's queue blocked at, GPUs left idle, gets one)")
        ->group(better);
    sub->add_flag("--any-delay-victim", a.any_victim,
                  "astraea: a new job may preempt any delay job of its tenant (as published), "
                  "not only over-served ones (F_j > 1)")
        ->group(better);
    sub->add_flag("--placed-victims-only,!--no-placed-victims-only", a.placed_victims_only,
                  "astraea: a new job's preemptions are undone when it then does not start "
                  "(on by default; --no-placed-victims-only: as published; docs/policies.md)")
        ->group(better);
    sub->add_flag("--free-before-victims,!--no-free-before-victims", a.free_before_victims,
                  "astraea: a new job over its budget whose gang fits the free GPUs starts there "
                  "without preempting (on by default; --no-free-before-victims: as published)")
        ->group(better);
    sub->add_option("--victim-margin", a.victim_margin,
                    "astraea: a run whose lease ends keeps its GPUs unless a waiting tenant's "
                    "long-term index is behind its tenant's by more than this (or a waiting job "
                    "nears T_starve); < 0: off (docs/policies.md, \"Two gangs\")")
        ->capture_default_str()
        ->check(real_number(-1.0, 1000.0, ""))
        ->group(better);
    sub->add_option("--preempt-horizon", a.preempt_horizon_s,
                    "astraea: a run whose lease ends and that is expected to finish within this "
                    "many seconds keeps its GPUs (unless a waiting job nears T_starve); 0: off")
        ->capture_default_str()
        ->check(whole_number(0, kMaxTraceTime, "SECONDS"))
        ->group(better);
    sub->add_option("--arrival-headroom", a.arrival_headroom,
                    "astraea: the last N free GPUs go to no job waiting to resume (only to new jobs "
                    "and runs whose lease ends now), so an arrival at a full cluster starts there "
                    "instead of preempting; 0: off; -1 (default): "
                    "floor(--arrival-headroom-fraction x the pool's GPUs) (docs/policies.md, "
                    "\"Arrival headroom\")")
        ->capture_default_str()
        ->check(whole_number(-1, 1000000, "GPUS"))
        ->group(better);
    sub->add_option("--arrival-headroom-fraction", a.arrival_headroom_fraction,
                    "astraea: the arrival headroom as a share of the pool's GPUs, used when "
                    "--arrival-headroom is -1 (0.003: 3 GPUs of 1,120, none below 334)")
        ->capture_default_str()
        ->check(real_number(0.0, 0.5, ""))
        ->group(better);
    sub->add_flag("--reclaim-within-quota,!--no-reclaim-within-quota", a.reclaim_within_quota,
                  "astraea: the reserved head job (never ran) of a tenant within its quota may "
                  "preempt over-served delay jobs of tenants over their quota and share to start "
                  "now (on by default; docs/policies.md, \"Arrival headroom\")")
        ->group(better);
    sub->add_flag("--move-renewals", a.move_renewals,
                  "astraea: runs renewed at their lease end may be moved to other GPUs when a "
                  "start took theirs first (as published)")
        ->group(better);
    sub->add_flag("--rounded-entitlement", a.rounded_entitlement,
                  "astraea: entitlement from the rounded quota (as published), not the exact "
                  "weight share")
        ->group(better);
    sub->add_flag("--no-block", a.no_block,
                  "on a failed job, try the tenant's next job instead of blocking its queue");
    sub->add_option("--seed", a.seed, "random seed (random job order)")
        ->check(unsigned_digits("UINT"))
        ->capture_default_str();
    sub->add_flag("--quiet", a.quiet, "no progress output on stderr");
    const std::string baselines = "Baseline policies (docs/policies.md)";
    sub->add_option("--tiresias-thresholds", a.tiresias_thresholds,
                    "tiresias: queue thresholds on attained service g x E, GPU-seconds, "
                    "comma-separated and ascending")
        ->capture_default_str()
        ->group(baselines);
    sub->add_option("--tiresias-promote", a.tiresias_promote,
                    "tiresias: starvation knob P; a job that waited >= P x its last run time "
                    "ranks in the top queue (0 = off)")
        ->capture_default_str()
        ->group(baselines);
    sub->add_option("--themis-f", a.themis_f,
                    "themis: fairness knob f; the (1 - f) share of waiting jobs with the worst "
                    "rho bid first")
        ->capture_default_str()
        ->group(baselines);
    sub->add_option("--themis-lease", a.themis_lease_s,
                    "themis: its lease term (auction clock), seconds")
        ->capture_default_str()
        ->group(baselines);
    sub->add_option("--gandiva-quantum", a.gandiva_quantum_s,
                    "gandiva-fair: time quantum (its lease term), seconds; 0 = --lease")
        ->capture_default_str()
        ->group(baselines);
    sub->add_option("--yarn-max-share", a.yarn_max_share,
                    "yarn-cs-elastic: maximum capacity of a tenant, as a share of the cluster")
        ->capture_default_str()
        ->group(baselines);
}

/// "3250,10000" -> {3250, 10000}: positive GPU-seconds in ascending order.
Result<std::vector<GpuSeconds>> parse_thresholds(const std::string& list) {
    std::vector<GpuSeconds> out;
    std::size_t pos = 0;
    while (pos <= list.size()) {
        const std::size_t comma = std::min(list.find(',', pos), list.size());
        const std::string item = list.substr(pos, comma - pos);
        GpuSeconds v = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v <= 0 ||
            (!out.empty() && v <= out.back()))
            return fail("--tiresias-thresholds: '" + item + "': give positive GPU-seconds in "
                        "ascending order, comma-separated (e.g. 3250 or 3250,32500)");
        out.push_back(v);
        pos = comma + 1;
    }
    return out;
}

const std::vector<SweepOption>& sweep_options() {
    static const std::vector<SweepOption> kOptions = {
        {"--lease", "lease_s", &RunArgs::lease_s, &AstraeaOptions::lease_s},
        {"--starvation", "starvation_s", &RunArgs::starvation_s, &AstraeaOptions::starvation_s},
        {"--delay", "delay_s", &RunArgs::delay_s, &AstraeaOptions::delay_s},
        {"--checkpoint-cost", "checkpoint_s", &RunArgs::checkpoint_s, &AstraeaOptions::checkpoint_s},
        {"--restore-cost", "restore_s", &RunArgs::restore_s, &AstraeaOptions::restore_s},
    };
    return kOptions;
}

Result<std::vector<Seconds>> parse_sweep(const std::string& flag, const std::string& list) {
    std::vector<Seconds> out;
    std::size_t pos = 0;
    while (true) {
        const std::size_t comma = std::min(list.find(',', pos), list.size());
        const std::string item = list.substr(pos, comma - pos);
        Seconds v = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v < 0)
            return fail(flag + ": '" + item + "' is not a whole number of seconds >= 0 (give "
                        "one value or a comma-separated list, e.g. 300,900,1800)");
        if (std::find(out.begin(), out.end(), v) != out.end())
            return fail(flag + ": " + item + " is given twice");
        out.push_back(v);
        if (comma == list.size()) break;
        pos = comma + 1;
    }
    return out;
}

Result<PreparedRun> prepare_run(const RunArgs& a) {
    PreparedRun p;
    SimConfig& config = p.config;
    auto cluster = resolve_cluster(a.cluster);
    if (!cluster) return std::unexpected(cluster.error());
    config.cluster = *cluster;
    config.cluster_name = a.cluster;
    config.placement = a.placement;
    auto mode = parse_mode(a.mode);
    if (!mode) return std::unexpected(mode.error());
    auto order = parse_job_order(a.job_order);
    if (!order) return std::unexpected(order.error());
    auto quota = parse_quota_mode(a.quota);
    if (!quota) return std::unexpected(quota.error());
    AstraeaOptions& o = config.options;
    o.mode = *mode;
    o.job_order = *order;
    o.improve.reserve = !a.no_reservation;
    o.improve.history_ties = !a.config_order_ties;
    o.improve.index_half_life_s = a.index_half_life_s;
    o.improve.exact_entitlement = !a.rounded_entitlement;
    o.improve.index_tolerance = a.index_tolerance;
    o.improve.overserved_victims = !a.any_victim;
    o.improve.reserve_own = !a.no_own_hold;
    o.improve.due_first = a.due_first;
    o.improve.keep_reservation = a.keep_reservation;
    o.improve.placed_victims_only = a.placed_victims_only;
    o.improve.keep_renewals = !a.move_renewals;
    o.improve.free_before_victims = a.free_before_victims;
    o.improve.gang_weight = a.gang_weight;
    o.improve.victim_margin = a.victim_margin;
    o.improve.preempt_horizon_s = a.preempt_horizon_s;
    o.improve.arrival_headroom = a.arrival_headroom;
    o.improve.arrival_headroom_fraction = a.arrival_headroom_fraction;
    o.improve.reclaim_within_quota = a.reclaim_within_quota;
    o.quota_mode = *quota;
    o.lease_s = a.lease_s;
    o.starvation_s = a.starvation_s;
    o.delay_s = a.delay_s;
    o.block_scheduling = !a.no_block;
    o.backfill = a.backfill;
    o.seed = a.seed;
    o.checkpoint_s = a.checkpoint_s;
    o.restore_s = a.restore_s;
    o.window_buckets = a.window;
    o.bucket_s = a.bucket_s;
    auto thresholds = parse_thresholds(a.tiresias_thresholds);
    if (!thresholds) return std::unexpected(thresholds.error());
    o.params.tiresias_thresholds_gpu_s = std::move(*thresholds);
    o.params.tiresias_promote_knob = a.tiresias_promote;
    o.params.themis_fairness_knob = a.themis_f;
    o.params.themis_lease_s = a.themis_lease_s;
    o.params.gandiva_quantum_s = a.gandiva_quantum_s;
    o.params.yarn_max_share = a.yarn_max_share;
    if (o.mode == Mode::Compat) o.checkpoint_s = o.restore_s = 0;  // quirk 5: not charged
    UnknownTenant unknown = UnknownTenant::Error;
    if (o.mode == Mode::Compat) {
        unknown = UnknownTenant::Drop;  // quirk 2
    } else if (a.unknown_tenant == "default-weight") {
        unknown = UnknownTenant::DefaultWeight;
    } else if (a.unknown_tenant != "error") {
        return fail("--unknown-tenant '" + a.unknown_tenant + "': valid: error, default-weight");
    }

    SkipCounts skips;
    auto trace = read_trace(a.trace, a.format, &skips);
    if (!trace) return std::unexpected(trace.error());
    if (trace->jobs.empty())  // an empty workload has no tenants either: say what is missing
        return fail(a.trace + ": no jobs to simulate (" +
                    (skips.total() > 0 ? "every row was left out: " + skips.summary()
                                       : std::string("no job rows after the header")) +
                    ")");
    p.skipped = skips.summary();
    p.inputs.push_back({"trace", a.trace});
    if (a.tenants.empty()) {
        if (!a.names.empty()) return fail("--names needs --tenants");
        p.workload = std::move(*trace);  // the trace's tenants, equal weights
    } else {
        auto tenants = read_tenant_config(a.tenants, a.names);
        if (!tenants) return std::unexpected(tenants.error());
        auto w = apply_tenants(std::move(*trace), *tenants, unknown, a.trace, a.tenants);
        if (!w) return std::unexpected(w.error());
        p.workload = std::move(*w);
        p.inputs.push_back({"tenants", a.tenants});
        if (!a.names.empty()) p.inputs.push_back({"names", a.names});
    }
    if (p.workload.jobs.empty())  // compat mode drops the jobs of tenants missing from the file
        return fail(a.trace + ": no jobs to simulate: every job's tenant is missing from " +
                    a.tenants);
    if (p.workload.tenants.empty())
        return fail(a.trace + ": the trace has no tenants; give it some with `astraeus trace "
                    "assign-tenants`, or use a trace with tenants");
    // All weights 0: name the file (the engine's refusal named none).
    if (std::none_of(p.workload.tenants.begin(), p.workload.tenants.end(),
                     [](const Tenant& t) { return t.weight > 0; }))
        return fail((a.tenants.empty() ? a.trace : a.tenants) +
                    ": every tenant's weight (or quota_gpus) is 0: give at least one tenant a "
                    "positive one");
    return p;
}

ProgressFn progress_printer(bool quiet, const std::string& label) {
    if (quiet) return {};
    const auto started = std::chrono::steady_clock::now();
    return [started, label](const Progress& p) {
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (wall < 2.0) return;
        std::cerr << fmt::format("  {}simulated {:.1f} days, {} / {} jobs done, {:.0f} jobs/s\n",
                                 label, static_cast<double>(p.now_s) / 86400.0, p.jobs_done,
                                 p.jobs_total, static_cast<double>(p.jobs_done) / wall);
    };
}

int usage_error(const std::string& command, const Error& e) {
    std::cerr << "astraeus " << command << ": error: " << e.message << "\n";
    return 2;
}

}  // namespace astraeus::cli
