#include "astraeus/sched/astraea_round.hpp"

#include <algorithm>
#include <cassert>
#include <deque>
#include <limits>

#include "astraeus/sched/job_order.hpp"

namespace astraeus {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

/// Phase 1: per-tenant GPU budgets by water filling on projected U/W (GPU counts only).
std::vector<double> phase1_budgets(const RoundInput& in,
                                   const std::vector<std::vector<int>>& candidates,
                                   const AstraeaOptions& opt) {
    const std::size_t n = in.tenants.size();
    std::vector<double> budget(n);
    for (std::size_t u = 0; u < n; ++u)
        budget[u] = opt.quota_mode == QuotaMode::Static ? in.tenants[u].quota : in.tenants[u].used;
    if (opt.quota_mode == QuotaMode::Static) return budget;

    int free = in.cluster->free_gpus();
    std::vector<double> utilized(n), entitled(n), index(n), ratio(n);
    std::vector<char> active(n, 1);
    std::vector<std::size_t> next(n, 0);
    std::size_t active_count = n;
    for (std::size_t u = 0; u < n; ++u) {
        const TenantQueue& t = in.tenants[u];
        utilized[u] = static_cast<double>(t.utilized);
        entitled[u] = static_cast<double>(t.entitled + GpuSeconds{t.quota} * opt.lease_s);
        // A zero quota (legal in default mode) only borrows: never the 20 % guarantee, and
        // served after every tenant with a quota.
        index[u] = t.quota > 0 ? t.index : kNever;
        ratio[u] = t.quota > 0 ? budget[u] / t.quota : 1.0;
    }
    auto argmin = [&](const std::vector<double>& v, auto&& order) {
        std::size_t best = n;
        for (std::size_t k = 0; k < n; ++k) {
            std::size_t u = order(k);
            if (active[u] && (best == n || v[u] < v[best])) best = u;
        }
        return best;
    };
    while (free > 0 && in.pending_jobs > 0 && active_count > 0) {
        std::size_t u = argmin(ratio, [](std::size_t k) { return k; });
        if (!(ratio[u] < 0.2))
            u = argmin(index, [&](std::size_t k) { return std::size_t(in.share_order[k]); });
        const std::vector<int>& list = candidates[u];
        while (next[u] < list.size()) {
            const int g = in.jobs[list[next[u]++]].gpus;
            if (free < g) continue;  // dropped for this round
            budget[u] += g;
            free -= g;
            utilized[u] += static_cast<double>(GpuSeconds{g} * opt.lease_s);
            if (in.tenants[u].quota > 0) {
                index[u] = utilized[u] / entitled[u];
                ratio[u] = budget[u] / in.tenants[u].quota;
            }
            break;
        }
        if (next[u] == list.size()) {
            active[u] = 0;
            --active_count;
        }
    }
    return budget;
}

}  // namespace

std::vector<Action> astraea_round(RoundInput& in, const AstraeaOptions& opt, const Placer& placer,
                                  Rng& rng) {
    const std::size_t n = in.tenants.size();
    // Candidate lists: starving jobs (by submit), then the others in job order.
    std::vector<std::vector<int>> candidates(n);
    std::vector<std::deque<int>> victims(n);
    for (std::size_t u = 0; u < n; ++u) {
        TenantQueue& t = in.tenants[u];
        std::vector<int> starving_ids = t.starving;
        std::sort(starving_ids.begin(), starving_ids.end());
        std::vector<int> ordered;
        ordered.reserve(t.pending.size());
        for (int j : t.pending)
            if (!std::binary_search(starving_ids.begin(), starving_ids.end(), j))
                ordered.push_back(j);
        std::vector<int> delay = t.delay;
        order_candidates(opt.job_order, in.jobs, in.runs, ordered, delay, in.themis_rho, rng);
        candidates[u] = t.starving;
        candidates[u].insert(candidates[u].end(), ordered.begin(), ordered.end());
        victims[u].assign(delay.begin(), delay.end());
    }

    const std::vector<double> budget = phase1_budgets(in, candidates, opt);

    // Phase 2: place jobs inside each tenant's budget.
    ClusterState cluster = *in.cluster;
    std::vector<Action> actions;
    for (std::size_t u = 0; u < n; ++u) {
        int used = in.tenants[u].used;
        std::size_t starving_left = in.tenants[u].starving.size();
        auto fits_budget = [&](int g) { return !(budget[u] < used + g); };
        for (int j : candidates[u]) {
            const int g = in.jobs[j].gpus;
            const RunState& r = in.runs[j];
            const bool is_new = r.executed_s == 0 && r.preemptions == 0;
            if (opt.quota_mode == QuotaMode::Fair && is_new) {
                while (!fits_budget(g) && !victims[u].empty()) {
                    const int victim = victims[u].front();
                    victims[u].pop_front();
                    cluster.give(in.runs[victim].placement);
                    used -= in.jobs[victim].gpus;
                    actions.push_back({Action::Kind::Preempt, victim, {}});
                }
            }
            const bool blocks = starving_left > 0 || opt.block_scheduling;
            if (!fits_budget(g)) {
                if (blocks) break;
                continue;
            }
            std::optional<Placement> placed = placer.place(cluster, g);
            if (!placed) {
                if (blocks) break;
                continue;
            }
            if (starving_left > 0) --starving_left;
            used += g;
            actions.push_back({Action::Kind::Start, j, std::move(*placed)});
        }
    }
    return actions;
}

}  // namespace astraeus
