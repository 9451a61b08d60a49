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
    for (int u : w.share_order) sum += w.tenants[u].weight;
    if (!(sum > 0)) return fail("tenant weights must sum to a positive number");
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

Result<SimResult> simulate(const Workload& workload, const SimConfig& config,
                           const ProgressFn& progress) {
    const AstraeaOptions& o = config.options;
    if (config.cluster.total_gpus() <= 0) return fail("the cluster has no GPUs");
    if (o.lease_s <= 0 || o.bucket_s <= 0 || o.window_buckets < 1 || o.tick_s <= 0)
        return fail("lease, bucket, window and tick must be positive");
    if (o.checkpoint_s < 0 || o.restore_s < 0) return fail("checkpoint and restore costs must be >= 0");
    if (o.mode == Mode::Compat && o.backfill)
        return fail("backfill is a default-mode feature (the reference simulator has none)");
    if (o.mode == Mode::Default && o.lease_s <= o.checkpoint_s + o.restore_s)
        return fail("the lease (" + std::to_string(o.lease_s) +
                    " s) must be longer than checkpoint + restore (" +
                    std::to_string(o.checkpoint_s + o.restore_s) + " s), or no job progresses");
    for (const Job& j : workload.jobs)
        if (j.gpus <= 0 || j.duration_s < 0 || j.submit_s < 0)
            return fail("job " + std::to_string(j.id) +
                        ": needs gpus > 0, duration >= 0 and submit >= 0");
    auto quotas = tenant_quotas(workload, config.cluster.total_gpus(), o.mode);
    if (!quotas) return std::unexpected(quotas.error());
    auto placer = make_placer(config.placement);
    if (!placer) return std::unexpected(placer.error());
    auto policy = make_policy(o);
    if (!policy) return std::unexpected(policy.error());
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
