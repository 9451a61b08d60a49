#include "astraeus/sched/astraea_round.hpp"

#include <algorithm>
#include <cassert>
#include <limits>

#include "astraeus/sched/job_order.hpp"

namespace astraeus {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr std::size_t kNoHead = std::numeric_limits<std::size_t>::max();

/// A tenant's candidates: its starving jobs, then the others in job order.
struct Candidates {
    TenantQueue* q;
    std::size_t size() const { return q->starving.size() + q->ranked.size(); }
    int operator[](std::size_t k) const {
        const std::size_t s = q->starving.size();
        return k < s ? q->starving[k] : q->ranked[k - s];
    }
};

/// Phase-1 state of one tenant.
struct Fill {
    double budget;     ///< GPUs the tenant may hold after this round
    double utilized;   ///< U'_u (projected)
    double entitled;   ///< W'_u = W_u + Q_u * L
    double index;      ///< U'/W' (R_u before the first grant)
    double ratio;      ///< budget / Q_u
    std::size_t next;  ///< next candidate to look at
    bool active;
};

/// Tenant u's queues, filled and ranked on first use.
TenantQueue& queue(RoundInput& in, std::size_t u, const AstraeaOptions& opt, Rng& rng) {
    TenantQueue& t = in.tenants[u];
    if (!t.prepared) {
        in.prepare(u, t);
        rank_pending(opt.job_order, in.jobs, in.runs, t.pending, t.ranked, in.themis_rho, rng);
        order_victims(opt.job_order, in.jobs, in.runs, t.delay, in.themis_rho);
        t.prepared = true;
    }
    return t;
}

/// Phase 1: per-tenant GPU budgets by water filling on projected U/W (GPU counts only).
void phase1_budgets(RoundInput& in, const ClusterState& cluster, const AstraeaOptions& opt,
                    Rng& rng, std::vector<Fill>& fill) {
    const std::size_t n = in.tenants.size();
    fill.resize(n);
    for (std::size_t u = 0; u < n; ++u) {
        const TenantQueue& t = in.tenants[u];
        Fill& f = fill[u];
        f.budget = opt.quota_mode == QuotaMode::Static ? t.quota : t.used;
        f.utilized = static_cast<double>(t.utilized);
        f.entitled = static_cast<double>(t.entitled + GpuSeconds{t.quota} * opt.lease_s);
        // A zero quota (legal in default mode) only borrows: never the 20 % guarantee, and
        // served after every tenant with a quota.
        f.index = t.quota > 0 ? t.index : kNever;
        f.ratio = t.quota > 0 ? f.budget / t.quota : 1.0;
        f.next = 0;
        f.active = true;
    }
    if (opt.quota_mode == QuotaMode::Static) return;

    int free = cluster.free_gpus();
    std::size_t active = n;
    while (free > 0 && in.pending_jobs > 0 && active > 0) {
        // Least ratio first (ties: tenant order); under 20 % of quota it wins outright, else
        // the least projected U/W (ties: the order the weights were declared).
        std::size_t u = n;
        for (std::size_t k = 0; k < n; ++k)
            if (fill[k].active && (u == n || fill[k].ratio < fill[u].ratio)) u = k;
        if (!(fill[u].ratio < 0.2)) {
            u = n;
            for (int k : in.share_order)
                if (fill[k].active && (u == n || fill[k].index < fill[u].index)) u = k;
        }
        Fill& f = fill[u];
        if (in.tenants[u].min_gpus > free) {  // every candidate would be dropped
            f.active = false;
            --active;
            continue;
        }
        const Candidates list{&queue(in, u, opt, rng)};
        while (f.next < list.size()) {
            const int g = in.jobs[list[f.next++]].gpus;
            if (free < g) continue;  // dropped for this round
            f.budget += g;
            free -= g;
            const int quota = in.tenants[u].quota;
            if (quota > 0) {
                f.utilized += static_cast<double>(GpuSeconds{g} * opt.lease_s);
                f.index = f.utilized / f.entitled;
                f.ratio = f.budget / quota;
            }
            break;
        }
        if (f.next == list.size()) {
            f.active = false;
            --active;
        }
    }
}

/// Takes exactly the GPUs of `p` if they are all free.
std::optional<Placement> take_if_free(ClusterState& cluster, const Placement& p) {
    for (const auto& part : p.parts)
        if (cluster.free_on(part.machine) < part.gpus) return std::nullopt;
    for (const auto& part : p.parts) cluster.take(part.machine, part.gpus);
    return p;
}

/// Phase 3 (default mode, --backfill): GPUs left idle by budgets and head-of-line blocking go
/// to jobs queued behind a blocked head (tenant order, then queue order, budgets ignored) when
/// that cannot delay any blocked head, EASY-style (Lifka, "The ANL/IBM SP scheduling system",
/// JSSPP 1995): either the free GPUs left still cover every head's gang, or the job finishes
/// (within its lease, by its run time from the trace) before the shadow time, the earliest time
/// the running jobs' completions and lease ends free enough GPUs for all the heads.
void backfill(RoundInput& in, ClusterState& cluster, const AstraeaOptions& opt,
              const Placer& placer, Rng& rng, const std::vector<std::size_t>& head,
              std::vector<Action>& actions) {
    int reserve = 0;
    for (std::size_t u = 0; u < in.tenants.size(); ++u) {
        if (head[u] == kNoHead) continue;
        const Candidates list{&queue(in, u, opt, rng)};
        if (head[u] < list.size()) reserve += in.jobs[list[head[u]]].gpus;
    }
    if (reserve == 0) return;
    Seconds shadow = std::numeric_limits<Seconds>::max();
    int available = cluster.free_gpus();
    if (available >= reserve) shadow = in.now;
    for (std::size_t i = 0; i < in.releases.size() && available < reserve; ++i) {
        available += in.releases[i].second;
        if (available >= reserve) shadow = in.releases[i].first;
    }
    for (std::size_t u = 0; u < in.tenants.size(); ++u) {
        if (head[u] == kNoHead) continue;
        const Candidates list{&queue(in, u, opt, rng)};
        for (std::size_t k = head[u] + 1; k < list.size(); ++k) {
            const int j = list[k];
            const int g = in.jobs[j].gpus;
            if (g > cluster.free_gpus()) continue;
            const RunState& r = in.runs[j];
            const Seconds restore = r.executed_s > 0 ? opt.restore_s : 0;
            const Seconds remaining = in.jobs[j].duration_s - r.executed_s;
            const bool leaves_room = cluster.free_gpus() - g >= reserve;
            const bool gone_by_shadow =
                remaining <= opt.lease_s - restore && in.now + restore + remaining <= shadow;
            if (!leaves_room && !gone_by_shadow) continue;
            std::optional<Placement> placed = placer.place(cluster, g);
            if (placed) actions.push_back({Action::Kind::Start, j, std::move(*placed)});
        }
    }
}

}  // namespace

void astraea_round(RoundInput& in, ClusterState& cluster, const AstraeaOptions& opt,
                   const Placer& placer, Rng& rng, std::vector<Action>& actions) {
    actions.clear();
    if (in.eager)
        for (std::size_t u = 0; u < in.tenants.size(); ++u) queue(in, u, opt, rng);
    thread_local std::vector<Fill> fill;
    phase1_budgets(in, cluster, opt, rng, fill);

    // Phase 2: place jobs inside each tenant's budget, tenants in tenant order. head[u]: the
    // first candidate that did not start because the tenant's queue blocked there.
    thread_local std::vector<std::size_t> head;
    head.assign(in.tenants.size(), kNoHead);
    for (std::size_t u = 0; u < in.tenants.size(); ++u) {
        const double budget = fill[u].budget;
        {
            // No candidate fits the budget, and only a new job could make room (by preempting
            // delay jobs): nothing can happen for this tenant.
            const TenantQueue& peek = in.tenants[u];
            const bool may_preempt = opt.quota_mode == QuotaMode::Fair && peek.new_jobs > 0;
            if (budget - peek.used < peek.min_gpus && !may_preempt) {
                head[u] = 0;
                continue;
            }
        }
        TenantQueue& t = queue(in, u, opt, rng);
        int used = t.used;
        std::size_t starving_left = t.starving.size();
        std::size_t next_victim = 0;
        auto fits_budget = [&](int g) { return !(budget < used + g); };
        const Candidates list{&t};
        for (std::size_t k = 0; k < list.size(); ++k) {
            const int j = list[k];
            const int g = in.jobs[j].gpus;
            const RunState& r = in.runs[j];
            const bool is_new = r.executed_s == 0 && r.preemptions == 0;
            if (opt.quota_mode == QuotaMode::Fair && is_new) {
                while (!fits_budget(g) && next_victim < t.delay.size()) {
                    const int victim = t.delay[next_victim++];
                    cluster.give(in.runs[victim].placement);
                    used -= in.jobs[victim].gpus;
                    actions.push_back({Action::Kind::Preempt, victim, {}});
                }
            }
            const bool blocks = starving_left > 0 || opt.block_scheduling;
            if (!fits_budget(g)) {
                if (blocks) {
                    head[u] = k;
                    break;
                }
                continue;
            }
            std::optional<Placement> placed;
            if (in.sticky_renewals && r.last_checkpoint_s == in.now)
                placed = take_if_free(cluster, r.last_placement);
            if (!placed) placed = placer.place(cluster, g);
            if (!placed) {
                if (blocks) {
                    head[u] = k;
                    break;
                }
                continue;
            }
            if (starving_left > 0) --starving_left;
            used += g;
            actions.push_back({Action::Kind::Start, j, std::move(*placed)});
        }
    }
    if (opt.backfill) backfill(in, cluster, opt, placer, rng, head, actions);
}

}  // namespace astraeus
