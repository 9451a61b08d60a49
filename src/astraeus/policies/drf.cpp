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
    ranked_.resize(n);
    next_.assign(n, 0);
    used_.assign(in.used.begin(), in.used.end());
    mark_.resize(in.jobs.size(), 0);
    for (std::size_t u = 0; u < n; ++u) {
        ranked_[u].clear();
        for (int j : in.tenant_pending[u])
            ranked_[u].add({static_cast<double>(in.jobs[j].submit_s), 0, 0, j, j});
    }
    auto weight = [&](std::size_t u) { return in.tenant_info[u].weight; };

    while (true) {
        std::size_t u = n;
        for (std::size_t v = 0; v < n; ++v) {
            if (next_[v] >= ranked_[v].size()) continue;
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
        const int j = ranked_[u][next_[u]++];
        const int g = in.jobs[j].gpus;
        const double after = weight(u) > 0 ? (used_[u] + g) / weight(u) : kInf;
        tentative_ = used_;
        spent_.assign(n, 0);
        auto next_victim = [&]() -> int {
            // The tenant with the largest x above u's share after the start, its youngest lease.
            while (true) {
                int best = -1;
                for (std::size_t v = 0; v < n; ++v) {
                    if (v == u || spent_[v] || tentative_[v] == 0) continue;
                    const double x = share(tentative_[v], weight(v));
                    if (!(x > after)) continue;
                    if (best < 0 || x > share(tentative_[best], weight(best))) best = int(v);
                }
                if (best < 0) return -1;
                const int victim = policy_detail::youngest_unmarked(in, in.tenant_running[best], mark_);
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
        } else {
            for (int v : taken_) mark_[v] = 0;
        }
    }
    for (const Action& a : actions) mark_[a.job] = 0;
}

}  // namespace astraeus
