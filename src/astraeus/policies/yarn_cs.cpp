#include "astraeus/policies/yarn_cs.hpp"

#include <cmath>
#include <limits>

#include "astraeus/policies/common.hpp"

namespace astraeus {

int YarnCsPolicy::max_capacity(const RoundInput& in) const {
    int total = 0;
    for (int q : in.quotas) total += q;  // default mode: the quotas sum to the cluster
    return static_cast<int>(std::floor(opt_.params.yarn_max_share * total));
}

bool YarnCsPolicy::admits(const RoundInput& in, int j) const {
    const Job& job = in.jobs[j];
    return elastic_ ? job.gpus <= max_capacity(in) : job.gpus <= in.quotas[job.tenant];
}

void YarnCsPolicy::round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng&,
                         std::vector<Action>& actions) {
    actions.clear();
    if (elastic_) {
        round_elastic(in, cluster, placer, actions);
    } else {
        round_static(in, cluster, placer, actions);
    }
}

void YarnCsPolicy::round_static(RoundInput& in, ClusterState& cluster, const Placer& placer,
                                std::vector<Action>& actions) {
    // Nothing is ever preempted or leased out: a tenant's pending list is in submit order.
    for (std::size_t u = 0; u < in.quotas.size() && cluster.free_gpus() > 0; ++u) {
        int free_quota = in.quotas[u] - in.used[u];
        for (int j : in.tenant_pending[u]) {
            if (free_quota <= 0 || cluster.free_gpus() == 0) break;
            const int g = in.jobs[j].gpus;
            if (g > free_quota) continue;  // skipped, not waited for
            if (policy_detail::try_start(in, cluster, placer, j, actions)) free_quota -= g;
        }
    }
}

int YarnCsPolicy::candidate(const RoundInput& in, std::size_t u, int max_gpus) {
    const auto& buckets = index_.buckets(u);
    std::size_t best = buckets.size();
    for (std::size_t b = 0; b < buckets.size(); ++b) {
        if (buckets[b].gpus > max_gpus || buckets[b].gpus >= cap_[u]) break;
        if (index_.top(in, u, b) < 0) continue;
        if (best == buckets.size() || index_.top_key(u, b) < index_.top_key(u, best)) best = b;
    }
    bucket_[u] = best;
    return best == buckets.size() ? -1 : index_.top_key(u, best).job;
}

void YarnCsPolicy::round_elastic(RoundInput& in, ClusterState& cluster, const Placer& placer,
                                 std::vector<Action>& actions) {
    const std::size_t n = in.quotas.size();
    used_.assign(in.used.begin(), in.used.end());
    mark_.resize(in.jobs.size(), 0);
    bucket_.assign(n, 0);
    // Each tenant's waiting jobs in submit order, by gang size (persistent index). cap_[u]: a
    // job of u that failed in a pass bars u's gangs that large or larger for that pass.
    index_.update(
        in, n, [&](int j) { return RankKey{double(in.jobs[j].submit_s), 0, 0, j, j}; },
        [&](int j) { return in.jobs[j].tenant; });

    // Phase A: guaranteed capacity, reclaimed from borrowers when needed.
    cap_.assign(n, std::numeric_limits<int>::max());
    for (std::size_t u = 0; u < n; ++u) {
        const int quota = in.quotas[u];
        for (int j = candidate(in, u, quota - used_[u]); j >= 0;
             j = candidate(in, u, quota - used_[u])) {
            const int g = in.jobs[j].gpus;
            // Victims: the tenant most over its quota, then its youngest lease.
            auto excess = [&](std::size_t v, int held) -> std::optional<double> {
                if (held <= in.quotas[v]) return std::nullopt;
                return held - in.quotas[v];
            };
            if (policy_detail::start_reclaiming(in, cluster, placer, j, u, excess, used_, mark_,
                                                reclaim_, actions)) {
                index_.pop(u, bucket_[u]);
            } else {
                cap_[u] = g;
            }
        }
    }

    // Phase B: idle GPUs to tenants below their maximum capacity, least used/quota first.
    const int max_cap = max_capacity(in);
    cap_.assign(n, std::numeric_limits<int>::max());
    auto room = [&](std::size_t u) { return std::min(cluster.free_gpus(), max_cap - used_[u]); };
    cand_.assign(n, -1);
    for (std::size_t u = 0; u < n; ++u) cand_[u] = candidate(in, u, room(u));
    while (cluster.free_gpus() > 0) {
        std::size_t u = n;
        double best = 0;
        for (std::size_t v = 0; v < n; ++v) {
            if (cand_[v] < 0) continue;
            const double ratio = in.quotas[v] > 0 ? double(used_[v]) / in.quotas[v]
                                                  : std::numeric_limits<double>::infinity();
            if (u == n || ratio < best) {
                u = v;
                best = ratio;
            }
        }
        if (u == n) break;
        const int j = cand_[u];
        if (policy_detail::try_start(in, cluster, placer, j, actions)) {
            used_[u] += in.jobs[j].gpus;
            index_.pop(u, bucket_[u]);
        } else {
            cap_[u] = in.jobs[j].gpus;
        }
        // The free GPUs shrank: every tenant's candidate may no longer fit.
        for (std::size_t v = 0; v < n; ++v)
            if (cand_[v] >= 0) cand_[v] = candidate(in, v, room(v));
    }
    for (const Action& a : actions) mark_[a.job] = 0;
}

}  // namespace astraeus
