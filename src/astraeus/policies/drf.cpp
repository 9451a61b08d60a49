#include "astraeus/policies/drf.hpp"

#include <limits>

#include "astraeus/policies/common.hpp"

namespace astraeus {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// x_u = GPUs / weight; a zero-weight tenant is served after everyone and always gives way.
double share(int gpus, double weight) {
    if (weight > 0) return gpus / weight;
    return gpus > 0 ? kInf : std::numeric_limits<double>::max();
}

}  // namespace

void DrfPolicy::round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng&,
                      std::vector<Action>& actions) {
    actions.clear();
    const std::size_t n = in.quotas.size();
    used_.assign(in.used.begin(), in.used.end());
    mark_.resize(in.jobs.size(), 0);
    // Each tenant's waiting jobs in submit order, by gang size (persistent index). cap_[u]: a
    // job of u that failed this round (no start, no preemption) bars u's gangs that large or
    // larger for the rest of the round.
    index_.update(
        in, n, [&](int j) { return RankKey{double(in.jobs[j].submit_s), 0, 0, j, j}; },
        [&](int j) { return in.jobs[j].tenant; });
    cap_.assign(n, std::numeric_limits<int>::max());
    auto weight = [&](std::size_t u) { return in.tenant_info[u].weight; };
    // Tenant u's next candidate (its bucket in bucket_[u]), or -1.
    auto candidate = [&](std::size_t u) -> int {
        const auto& buckets = index_.buckets(u);
        std::size_t best = buckets.size();
        for (std::size_t b = 0; b < buckets.size() && buckets[b].gpus < cap_[u]; ++b) {
            if (index_.top(in, u, b) < 0) continue;
            if (best == buckets.size() || index_.top_key(u, b) < index_.top_key(u, best)) best = b;
        }
        bucket_[u] = best;
        return best == buckets.size() ? -1 : index_.top_key(u, best).job;
    };
    bucket_.assign(n, 0);
    cand_.assign(n, -1);
    for (std::size_t u = 0; u < n; ++u) cand_[u] = candidate(u);

    while (true) {
        std::size_t u = n;
        for (std::size_t v = 0; v < n; ++v) {
            if (cand_[v] < 0) continue;
            if (u == n || share(used_[v], weight(v)) < share(used_[u], weight(u))) u = v;
        }
        if (u == n) break;
        if (cluster.free_gpus() == 0) {
            // Only a preemption could start anything, and it needs a tenant above x_u.
            bool above = false;
            for (std::size_t v = 0; v < n; ++v)
                if (v != u && share(used_[v], weight(v)) > share(used_[u], weight(u))) above = true;
            if (!above) break;
        }
        const int j = cand_[u];
        const int g = in.jobs[j].gpus;
        const double after = weight(u) > 0 ? (used_[u] + g) / weight(u) : kInf;
        // Victims: the tenant with the largest x above u's share after the start, its
        // youngest lease.
        auto excess = [&](std::size_t v, int held) -> std::optional<double> {
            if (held == 0) return std::nullopt;
            const double x = share(held, weight(v));
            if (!(x > after)) return std::nullopt;
            return x;
        };
        if (policy_detail::start_reclaiming(in, cluster, placer, j, u, excess, used_, mark_,
                                            reclaim_, actions)) {
            index_.pop(u, bucket_[u]);
        } else {
            cap_[u] = g;
        }
        cand_[u] = candidate(u);
    }
    for (const Action& a : actions) mark_[a.job] = 0;
}

}  // namespace astraeus
