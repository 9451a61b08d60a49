#include "astraeus/sim/engine.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

#include "astraeus/placement/registry.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/sim/event_engine.hpp"
#include "astraeus/sim/tick_engine.hpp"

namespace astraeus {

Result<std::vector<int>> tenant_quotas(const Workload& w, int total_gpus, Mode mode) {
    const std::size_t n = w.tenants.size();
    std::vector<int> quota(n, 0);
    double sum = 0;
    for (int u : w.share_order) {
        const double s = w.tenants[u].weight;
        if (!(s >= 0 && s <= kMaxWeight))
            return fail("tenant '" + w.tenants[u].name + "': weight must be between 0 and 1e15, got " +
                        std::to_string(s));
        sum += s;
    }
    if (!(sum > 0)) return fail("the tenant weights sum to 0: give at least one tenant a positive weight");
    if (mode == Mode::Compat) {
        for (std::size_t u = 0; u < n; ++u) {
            const double ratio = 1.0 * w.tenants[u].weight / sum;
            quota[u] = static_cast<int>(total_gpus * ratio);
            if (quota[u] == 0)
                return fail("tenant '" + w.tenants[u].name +
                            "' gets a quota of 0 GPUs (weight " + std::to_string(w.tenants[u].weight) +
                            " of " + std::to_string(sum) + " on " + std::to_string(total_gpus) +
                            " GPUs); compat mode cannot run it (the reference divides by the "
                            "quota); use --mode default or raise its weight");
        }
        return quota;
    }
    // Largest remainder (Hamilton): floors, then +1 to the largest fractional parts; ties go
    // to the earlier tenant in declaration order.
    std::vector<std::pair<double, int>> rest;
    int given = 0;
    for (int u : w.share_order) {
        const double exact = total_gpus * (w.tenants[u].weight / sum);
        quota[u] = static_cast<int>(std::floor(exact));
        given += quota[u];
        rest.push_back({exact - quota[u], u});
    }
    std::stable_sort(rest.begin(), rest.end(),
                     [](auto& a, auto& b) { return a.first > b.first; });
    for (std::size_t k = 0; given < total_gpus && k < rest.size(); ++k, ++given)
        ++quota[rest[k].second];
    return quota;
}

std::optional<Error> check_options(const AstraeaOptions& o) {
    auto range = [](const char* what, std::int64_t v, std::int64_t lo,
                    std::int64_t hi) -> std::optional<Error> {
        if (v >= lo && v <= hi) return std::nullopt;
        return Error{std::string(what) + " must be between " + std::to_string(lo) + " and " +
                     std::to_string(hi) + ", got " + std::to_string(v)};
    };
    auto seconds = [&](const char* what, Seconds v, SecondsBounds b) { return range(what, v, b.lo, b.hi); };
    // Bounds keep every product of seconds and GPUs far from overflow, and sizes sane.
    if (auto e = seconds("the lease (s)", o.lease_s, kLeaseBounds)) return e;
    if (auto e = seconds("the starvation threshold (s)", o.starvation_s, kStarvationBounds)) return e;
    if (auto e = seconds("the delay threshold (s)", o.delay_s, kDelayBounds)) return e;
    if (auto e = seconds("the checkpoint cost (s)", o.checkpoint_s, kCheckpointCostBounds)) return e;
    if (auto e = seconds("the restore cost (s)", o.restore_s, kRestoreCostBounds)) return e;
    if (auto e = range("the fairness window (buckets)", o.window_buckets, 1, 10'000)) return e;
    if (auto e = range("the fairness bucket (s)", o.bucket_s, 1, 10'000'000)) return e;
    if (auto e = range("the tick (s)", o.tick_s, 1, 3600)) return e;
    if (o.mode == Mode::Compat && o.backfill)
        return Error{"backfill is a default-mode feature (the reference simulator has none)"};
    if (o.mode == Mode::Default && o.lease_s <= o.checkpoint_s + o.restore_s)
        return Error{"the lease (" + std::to_string(o.lease_s) +
                     " s) must be longer than checkpoint + restore (" +
                     std::to_string(o.checkpoint_s + o.restore_s) + " s), or no job progresses"};
    return std::nullopt;
}

Result<SimResult> simulate(const Workload& workload, const SimConfig& config,
                           const ProgressFn& progress) {
    const AstraeaOptions& o = config.options;
    if (config.cluster.total_gpus() <= 0) return fail("the cluster has no GPUs");
    if (auto bad = check_options(o)) return std::unexpected(*bad);
    for (const Job& j : workload.jobs) {
        if (j.gpus <= 0 || j.gpus > kMaxGang || j.duration_s < 0 || j.duration_s > kMaxTraceTime ||
            j.submit_s < 0 || j.submit_s > kMaxTraceTime)
            return fail("job " + std::to_string(j.id) + ": needs 1 <= gpus <= " +
                        std::to_string(kMaxGang) + " and 0 <= submit, duration <= " +
                        std::to_string(kMaxTraceTime) + " s (got gpus " + std::to_string(j.gpus) +
                        ", submit " + std::to_string(j.submit_s) + ", duration " +
                        std::to_string(j.duration_s) + ")");
    }
    auto quotas = tenant_quotas(workload, config.cluster.total_gpus(), o.mode);
    if (!quotas) return std::unexpected(quotas.error());
    auto placer = make_placer(config.placement);
    if (!placer) return std::unexpected(placer.error());
    auto policy = make_policy(o);
    if (!policy) return std::unexpected(policy.error());
    if (config.goodput) {
        if (o.mode == Mode::Compat)
            return fail("goodput accounting (--goodput) needs --mode default (the compat "
                        "engine reproduces the reference simulator, which has no lifecycles)");
        if (auto ok = check_lifecycle(*config.goodput); !ok) return std::unexpected(ok.error());
    }
    if (o.mode == Mode::Compat) {
        if (!(*policy)->astraea_lists())
            return fail("policy '" + o.policy + "' runs in default mode only (compat mode "
                        "reproduces the reference simulator, which has ASTRAEA's round only)");
        return detail::run_tick_engine(workload, config, std::move(*quotas), std::move(*placer),
                                       progress);
    }
    return detail::run_event_engine(workload, config, std::move(*quotas), std::move(*placer),
                                    std::move(*policy), progress);
}

}  // namespace astraeus
