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

LazyRanking& YarnCsPolicy::ranked(const RoundInput& in, std::size_t u) {
    if (!built_[u]) {
        LazyRanking& r = ranked_[u];
        r.clear();
        for (int j : in.tenant_pending[u])
            r.add({static_cast<double>(in.jobs[j].submit_s), 0, 0, j, j});
        built_[u] = 1;
    }
    return ranked_[u];
}

void YarnCsPolicy::round_elastic(RoundInput& in, ClusterState& cluster, const Placer& placer,
                                 std::vector<Action>& actions) {
    const std::size_t n = in.quotas.size();
    ranked_.resize(n);
    built_.assign(n, 0);
    used_.assign(in.used.begin(), in.used.end());
    mark_.resize(in.jobs.size(), 0);

    // Phase A: guaranteed capacity, reclaimed from borrowers when needed.
    for (std::size_t u = 0; u < n; ++u) {
        const int quota = in.quotas[u];
        if (used_[u] >= quota || in.tenant_pending[u].empty()) continue;
        LazyRanking& list = ranked(in, u);
        for (std::size_t k = 0; k < list.size() && used_[u] < quota; ++k) {
            const int j = list[k];
            const int g = in.jobs[j].gpus;
            if (used_[u] + g > quota) continue;
            tentative_ = used_;
            spent_.assign(n, 0);
            auto next_victim = [&]() -> int {
                // The tenant most over its quota, then its youngest lease.
                while (true) {
                    int best = -1;
                    for (std::size_t v = 0; v < n; ++v) {
                        if (v == u || spent_[v] || tentative_[v] <= in.quotas[v]) continue;
                        if (best < 0 || tentative_[v] - in.quotas[v] >
                                            tentative_[best] - in.quotas[best])
                            best = static_cast<int>(v);
                    }
                    if (best < 0) return -1;
                    const int victim =
                        policy_detail::youngest_unmarked(in, in.tenant_running[best], mark_);
                    if (victim < 0) {  // what it holds started in this round
                        spent_[best] = 1;
                        continue;
                    }
                    mark_[victim] = 1;
                    tentative_[best] -= in.jobs[victim].gpus;
                    return victim;
                }
            };
            if (policy_detail::try_start(in, cluster, placer, j, actions) ||
                policy_detail::start_preempting(in, cluster, placer, j, next_victim, taken_,
                                                actions)) {
                used_ = tentative_;
                used_[u] += g;
                mark_[j] = 1;
            } else {
                for (int v : taken_) mark_[v] = 0;
            }
        }
    }

    // Phase B: idle GPUs to tenants below their maximum capacity, least used/quota first.
    const int cap = max_capacity(in);
    std::vector<std::size_t>& next = next_scratch_;
    next.assign(n, 0);
    while (cluster.free_gpus() > 0) {
        std::size_t u = n;
        double best = 0;
        for (std::size_t v = 0; v < n; ++v) {
            if (in.tenant_pending[v].empty() || next[v] == std::numeric_limits<std::size_t>::max())
                continue;
            const double ratio = in.quotas[v] > 0 ? double(used_[v]) / in.quotas[v]
                                                  : std::numeric_limits<double>::infinity();
            if (u == n || ratio < best) {
                u = v;
                best = ratio;
            }
        }
        if (u == n) break;
        LazyRanking& list = ranked(in, u);
        bool started = false;
        for (std::size_t& k = next[u]; k < list.size(); ++k) {
            const int j = list[k];
            const int g = in.jobs[j].gpus;
            if (mark_[j] || g > cluster.free_gpus() || used_[u] + g > cap) continue;
            if (policy_detail::try_start(in, cluster, placer, j, actions)) {
                used_[u] += g;
                mark_[j] = 1;
                ++k;
                started = true;
                break;
            }
        }
        if (!started) next[u] = std::numeric_limits<std::size_t>::max();
    }
    for (const Action& a : actions) mark_[a.job] = 0;
}

}  // namespace astraeus
