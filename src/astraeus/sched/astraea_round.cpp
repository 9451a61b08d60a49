#include "astraeus/sched/astraea_round.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <tuple>

#include "astraeus/sched/gang_placement.hpp"
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
    double rate;       ///< entitlement rate (GPUs): exact share or Q_u
    std::size_t next;  ///< next candidate to look at
    bool active;
};

/// The changes of the default astraea in effect (none in compat mode).
AstraeaImprovements improvements(const AstraeaOptions& opt) {
    if (opt.mode == Mode::Compat)
        return {false, false, 0, false, 0, false, false, 0, false, false, false, false, false,
                -1, 0, 0, 0.0, false};
    return opt.improve;
}

/// Tenant ranks by name (the stable id that settles ties last; history_ties).
const std::vector<int>& name_ranks(const RoundInput& in) {
    if (in.name_rank.size() == in.tenants.size()) return in.name_rank;
    thread_local std::vector<int> rank;
    const std::size_t n = in.tenants.size();
    if (in.tenant_info.size() >= n) rank = tenant_name_ranks(in.tenant_info.first(n));
    else {
        rank.resize(n);
        for (std::size_t u = 0; u < n; ++u) rank[u] = static_cast<int>(u);
    }
    return rank;
}

/// A job that has never run (no work, never preempted): the only kind that preempts.
bool never_ran(const RunState& r) { return r.executed_s == 0 && r.preemptions == 0; }

/// A job that has run, waits, and whose lease did not end at this instant (arrival_headroom).
bool waits_to_resume(const RoundInput& in, int j) {
    const RunState& r = in.runs[j];
    return !never_ran(r) && r.last_checkpoint_s != in.now;
}

/// Jobs the round started before phase 1 (reservations): skipped by phases 1 and 2.
bool started_early(const std::vector<int>& early, int j) {
    return std::find(early.begin(), early.end(), j) != early.end();
}

/// Tenant u's queues, filled and ranked on first use.
TenantQueue& queue(RoundInput& in, std::size_t u, const AstraeaOptions& opt, Rng& rng) {
    TenantQueue& t = in.tenants[u];
    if (!t.prepared) {
        in.prepare(u, t);
        const double gamma = improvements(opt).gang_weight;
        const bool due = improvements(opt).due_first;
        rank_pending(opt.job_order, in.jobs, in.runs, t.pending, t.ranked, in.themis_rho, rng,
                     gamma, due);
        order_victims(opt.job_order, in.jobs, in.runs, t.delay, in.themis_rho, gamma, due);
        t.prepared = true;
    }
    return t;
}

/// Phase 1: per-tenant GPU budgets by water filling on projected U/W (GPU counts only).
void phase1_budgets(RoundInput& in, const ClusterState& cluster, const AstraeaOptions& opt,
                    Rng& rng, const std::vector<int>& early, std::vector<Fill>& fill) {
    const AstraeaImprovements imp = improvements(opt);
    const std::vector<int>* rank = imp.history_ties ? &name_ranks(in) : nullptr;
    const std::size_t n = in.tenants.size();
    fill.resize(n);
    for (std::size_t u = 0; u < n; ++u) {
        const TenantQueue& t = in.tenants[u];
        Fill& f = fill[u];
        f.budget = opt.quota_mode == QuotaMode::Static ? t.quota : t.used;
        f.utilized = static_cast<double>(t.utilized);
        const double rate = t.entitlement_rate >= 0 ? t.entitlement_rate : t.quota;
        f.rate = rate > 0 ? rate : 1.0;
        f.entitled = static_cast<double>(t.entitled) + rate * static_cast<double>(opt.lease_s);
        // A zero quota (legal in default mode) only borrows: never the 20 % guarantee, and
        // served after every tenant with a quota.
        f.index = t.quota > 0 ? t.index : kNever;
        f.ratio = t.quota > 0 ? f.budget / t.quota : 1.0;
        f.next = 0;
        f.active = true;
    }
    if (opt.quota_mode == QuotaMode::Static) return;

    // The scans below read only these (one cache line for every 8 tenants, not one a tenant;
    // local references: no thread_local access in the loops).
    thread_local std::vector<double> ratio_tl, index_tl;
    thread_local std::vector<char> active_tl;
    std::vector<double>& ratio_of = ratio_tl;
    std::vector<double>& index_of = index_tl;
    std::vector<char>& active_of = active_tl;
    ratio_of.resize(n);
    index_of.resize(n);
    active_of.assign(n, 1);
    for (std::size_t u = 0; u < n; ++u) {
        ratio_of[u] = fill[u].ratio;
        index_of[u] = fill[u].index;
    }
    int free = cluster.free_gpus();
    std::size_t active = n;
    // arrival_headroom: the last `headroom` free GPUs (by default a share of the pool's) go to
    // no job waiting to resume (new jobs and renewals at this lease end may take them), while
    // some GPU is in use (its lease end or completion brings the next round: nothing waits for
    // good).
    int in_use = 0;
    for (std::size_t u = 0; u < n; ++u) in_use += in.tenants[u].used;
    const int headroom = in_use > 0 ? imp.headroom_gpus(cluster.total_gpus()) : 0;
    while (free > 0 && in.pending_jobs > 0 && active > 0) {
        // Least ratio first (ties: tenant order); under 20 % of quota it wins outright, else
        // the least projected U/W (ties: the order the weights were declared).
        std::size_t u = n;
        if (rank != nullptr) {
            // history_ties: under the guarantee the least ratio, else the least index; ties go
            // to the lower index, then the name (never the tenants file's order).
            auto before = [&](std::size_t a, std::size_t b) {
                const bool ga = fill[a].ratio < 0.2, gb = fill[b].ratio < 0.2;
                if (ga != gb) return ga;
                if (ga && fill[a].ratio != fill[b].ratio) return fill[a].ratio < fill[b].ratio;
                // Indexes within the tolerance are a tie: the lower ratio (instantaneous
                // share) first, so near-equal tenants split the GPUs instead of the lower index
                // taking every one.
                if (std::abs(fill[a].index - fill[b].index) <= imp.index_tolerance) {
                    const double sa = fill[a].budget / fill[a].rate,
                                 sb = fill[b].budget / fill[b].rate;
                    if (sa != sb) return sa < sb;
                }
                if (fill[a].index != fill[b].index) return fill[a].index < fill[b].index;
                return (*rank)[a] < (*rank)[b];
            };
            for (std::size_t k = 0; k < n; ++k)
                if (fill[k].active && (u == n || before(k, u))) u = k;
        } else {
            for (std::size_t k = 0; k < n; ++k)
                if (active_of[k] && (u == n || ratio_of[k] < ratio_of[u])) u = k;
            if (!(ratio_of[u] < 0.2)) {
                u = n;
                for (int k : in.share_order)
                    if (active_of[k] && (u == n || index_of[k] < index_of[u])) u = k;
            }
        }
        Fill& f = fill[u];
        if (in.tenants[u].min_gpus > free) {  // every candidate would be dropped
            f.active = false;
            active_of[u] = 0;
            --active;
            continue;
        }
        const Candidates list{&queue(in, u, opt, rng)};
        while (f.next < list.size()) {
            const int j = list[f.next++];
            if (!early.empty() && started_early(early, j)) continue;
            const int g = in.jobs[j].gpus;
            if (free < g) continue;  // dropped for this round
            if (free - g < headroom && waits_to_resume(in, j)) continue;  // kept for arrivals
            f.budget += g;
            free -= g;
            const int quota = in.tenants[u].quota;
            if (quota > 0) {
                f.utilized += static_cast<double>(GpuSeconds{g} * opt.lease_s);
                f.index = f.utilized / f.entitled;
                f.ratio = f.budget / quota;
                index_of[u] = f.index;
                ratio_of[u] = f.ratio;
            }
            break;
        }
        if (f.next == list.size()) {
            f.active = false;
            active_of[u] = 0;
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
            std::optional<Placement> placed = place_gang(placer, cluster, in.jobs[j]);
            if (placed) actions.push_back({Action::Kind::Start, j, std::move(*placed)});
        }
    }
}

/// GPUs held for reserved jobs (improvements.reserve): `gpus` must be free at `start`, the
/// earliest time at which the free GPUs and the leases ending by then cover them; `spare` GPUs of
/// those may go to jobs with a full lease.
struct Hold {
    bool active = false;
    int gpus = 0;
    Seconds start = 0;
    int spare = 0;
    Seconds min_lease = 0;  ///< the shortest lease worth starting on held GPUs
    /// GPUs of `gpus` held for over-served tenants' starving gangs (reserve_own): a job of a
    /// tenant under its share (index < 1) may still take them.
    int own = 0;
};

/// reclaim_within_quota: frees GPUs for `j` (new, of tenant u within its quota) by preempting
/// delay jobs of tenants over their quota and share (used > Q_u, index >= 1) that are over-served
/// (F_j > 1): the most over-served tenant first (ties: name), each tenant's in its victim order,
/// until j is placed. Returns j's placement, with the Preempt actions and the victims' tenants'
/// `used` applied; nullopt (and nothing changed) when even every such victim does not place it.
std::optional<Placement> reclaim_for(RoundInput& in, ClusterState& cluster,
                                     const AstraeaOptions& opt, const Placer& placer, Rng& rng,
                                     int j, std::vector<int>& reclaimed,
                                     std::vector<Action>& actions) {
    const std::size_t n = in.tenants.size();
    const std::size_t u = static_cast<std::size_t>(in.jobs[j].tenant);
    if (u >= n || !never_ran(in.runs[j])) return std::nullopt;
    const TenantQueue& own = in.tenants[u];
    if (own.quota <= 0 || own.index >= 1.0 || own.used + in.jobs[j].gpus > own.quota)
        return std::nullopt;
    const std::vector<int>& rank = name_ranks(in);
    thread_local std::vector<std::size_t> donors;
    donors.clear();
    for (std::size_t v = 0; v < n; ++v) {
        const TenantQueue& t = in.tenants[v];
        if (v != u && t.quota > 0 && t.used > t.quota && t.index >= 1.0 && t.delay_jobs != 0)
            donors.push_back(v);
    }
    std::sort(donors.begin(), donors.end(), [&](std::size_t a, std::size_t b) {
        const double ia = in.tenants[a].index, ib = in.tenants[b].index;
        return ia != ib ? ia > ib : rank[a] < rank[b];
    });
    const std::size_t first = reclaimed.size();
    std::optional<Placement> placed;
    for (std::size_t v : donors) {
        TenantQueue& t = queue(in, v, opt, rng);
        for (int victim : t.delay) {
            if (!(in.runs[victim].fairness > 1.0)) break;  // victims come most over-served first
            // A donor gives no more than it holds over its quota.
            if (t.used - in.jobs[victim].gpus < t.quota) continue;
            cluster.give(in.runs[victim].placement);
            t.used -= in.jobs[victim].gpus;
            reclaimed.push_back(victim);
            if ((placed = place_job(in, cluster, placer, j))) break;
        }
        if (placed) break;
    }
    if (!placed) {  // undo: nobody is preempted for a job that does not start
        for (std::size_t k = first; k < reclaimed.size(); ++k) {
            const int victim = reclaimed[k];
            for (const auto& part : in.runs[victim].placement.parts)
                cluster.take(part.machine, part.gpus);
            in.tenants[static_cast<std::size_t>(in.jobs[victim].tenant)].used +=
                in.jobs[victim].gpus;
        }
        reclaimed.resize(first);
        return std::nullopt;
    }
    for (std::size_t k = first; k < reclaimed.size(); ++k)
        actions.push_back({Action::Kind::Preempt, reclaimed[k], {}});
    return placed;
}

/// Reservations: starving jobs of tenants under their share (longest waiting first), then the
/// head of the tenant phase 1 serves first (when its index is below 1 and its gang does not fit
/// the free GPUs), then (reserve_own) the first starving gang of each tenant over its share
/// that its own running jobs could free (longest waiting first), as many as
/// the cluster holds. Those that fit now start at once (in that order, stopping at the first
/// that does not: it must not be overtaken); GPUs are held for the rest until `hold.start`.
void reserve(RoundInput& in, ClusterState& cluster, const AstraeaOptions& opt,
             const Placer& placer, Rng& rng, std::vector<int>& early, Hold& hold,
             std::vector<int>& reclaimed, std::vector<Action>& actions) {
    hold = Hold{};
    thread_local std::vector<std::pair<Seconds, int>> wanted, own;
    wanted.clear();
    own.clear();
    const bool own_gpus = improvements(opt).reserve_own;
    const std::size_t n = in.tenants.size();
    // A tenant's starving jobs qualify while it is under-served over the long term (index < 1)
    // or within its quota now: a tenant that asks for more than its share for good cannot
    // have every job served within T_starve, and must not take the others' GPUs for it.
    thread_local std::vector<int> claimed;
    claimed.assign(n, 0);
    for (std::size_t u = 0; u < n; ++u) {
        if (in.tenants[u].starving_jobs == 0) continue;
        TenantQueue& q = queue(in, u, opt, rng);
        for (int j : q.starving) {
            const int g = in.jobs[j].gpus;
            if (q.index < 1.0 || q.used + claimed[u] + g <= q.quota) {
                claimed[u] += g;
                wanted.push_back({in.wait_begin_s[j], j});
            } else if (own_gpus && claimed[u] == 0 && g > 1 && g <= q.used) {
                // Over its share: its first starving gang still gets GPUs held, as many as its
                // own running jobs hold (its queue blocks there, so their lease ends free them),
                // after every reservation above and never before a tenant under its share. A
                // 1-GPU job needs no GPUs free together: phase 1 serves it as published.
                claimed[u] += g;
                own.push_back({in.wait_begin_s[j], j});
            }
        }
    }
    std::sort(wanted.begin(), wanted.end());
    std::sort(own.begin(), own.end());
    // The tenant phase 1 would serve first (history ties), if under-served.
    const std::vector<int>& rank = name_ranks(in);
    std::size_t best = n;
    auto ratio = [&](std::size_t u) {
        return static_cast<double>(in.tenants[u].used) / in.tenants[u].quota;
    };
    for (std::size_t u = 0; u < n; ++u) {
        const TenantQueue& t = in.tenants[u];
        if (t.quota <= 0 || t.min_gpus == std::numeric_limits<int>::max()) continue;
        if (best == n) {
            best = u;
            continue;
        }
        const bool gu = ratio(u) < 0.2, gb = ratio(best) < 0.2;
        const TenantQueue& b = in.tenants[best];
        bool before;
        if (gu != gb) before = gu;
        else if (gu && ratio(u) != ratio(best)) before = ratio(u) < ratio(best);
        else if (t.index != b.index) before = t.index < b.index;
        else before = rank[u] < rank[best];
        if (before) best = u;
    }
    // The head gang held for by the last round keeps its hold while it waits and its tenant
    // stays under its share and no tenant with a lower index waits (improvements.
    // keep_reservation); else the head of the tenant served first. Without the last condition a
    // busy tenant's gang kept the one hold while a nearly idle tenant's 8-GPU arrival waited for
    // GPUs to free up by chance (docs/policies.md, "Gangs inside a tenant").
    int head = -1;
    const int kept = improvements(opt).keep_reservation ? in.reserved : -1;
    in.reserved = -1;
    if (kept >= 0 &&
        static_cast<std::size_t>(kept) < in.runs.size() &&
        in.runs[kept].status == RunStatus::Pending) {
        const std::size_t u = static_cast<std::size_t>(in.jobs[kept].tenant);
        const bool needier = u < n && best != n && best != u &&
                             in.tenants[best].index < in.tenants[u].index;
        if (u < n && in.tenants[u].index < 1.0 && !needier) head = kept;
    }
    if (head < 0 && best != n && in.tenants[best].index < 1.0) {
        TenantQueue& q = queue(in, best, opt, rng);
        const Candidates list{&q};
        if (list.size() > 0) head = list[0];
    }
    if (head >= 0) {
        const bool listed = std::any_of(wanted.begin(), wanted.end(),
                                        [&](auto& w) { return w.second == head; });
        // A kept reservation starts first when it fits now (its GPUs were held for it).
        if (!listed && (head == kept || in.jobs[head].gpus > cluster.free_gpus()))
            wanted.push_back({in.wait_begin_s[head], head});
    }
    const std::size_t due_count = wanted.size();
    wanted.insert(wanted.end(), own.begin(), own.end());
    if (wanted.empty()) return;
    // As many as the cluster holds, in order; those that fit now start now.
    const int total = cluster.total_gpus();
    int need = 0, need_own = 0;
    bool blocked = false;
    for (std::size_t k = 0; k < wanted.size(); ++k) {
        const int j = wanted[k].second;
        if (!early.empty() && started_early(early, j)) continue;  // kept at its lease end
        const int g = in.jobs[j].gpus;
        if (need + g > total) break;
        if (!blocked) {
            std::optional<Placement> placed = place_job(in, cluster, placer, j);
            if (!placed && j == head && improvements(opt).reclaim_within_quota)
                placed = reclaim_for(in, cluster, opt, placer, rng, j, reclaimed, actions);
            if (placed) {
                TenantQueue& t = in.tenants[in.jobs[j].tenant];
                t.used += g;
                --in.pending_jobs;
                early.push_back(j);
                actions.push_back({Action::Kind::Start, j, std::move(*placed)});
                continue;
            }
            blocked = true;
        }
        need += g;
        if (k >= due_count) need_own += g;
        if (j == head && improvements(opt).keep_reservation) in.reserved = j;
    }
    if (need == 0) return;
    // The reserved start: the free GPUs, then the running jobs' lease ends in the order they
    // began (leases of one term end in that order; a shorter one ends earlier, so the time is
    // an upper bound). Completions are not known to the policy and count only when they happen.
    int available = cluster.free_gpus();
    Seconds start = in.now;
    if (available < need) {
        for (int j : in.running_all) {
            if (j < 0 || static_cast<std::size_t>(j) >= in.lease_end_s.size()) continue;
            available += in.jobs[j].gpus;
            start = std::max(start, in.lease_end_s[j]);
            if (available >= need) break;
        }
    }
    if (available < need) {  // GPUs out of service (lost machines): nothing to hold
        in.reserved = -1;
        return;
    }
    hold.active = true;
    hold.gpus = need;
    hold.start = start;
    hold.spare = std::max(0, available - need);
    hold.min_lease = std::max<Seconds>(60, 4 * (opt.checkpoint_s + opt.restore_s));
    hold.own = need_own;
}

/// Whether job j (g GPUs, not reserved) may start now under `hold`: within the spare GPUs, or
/// with a lease that ends by the reserved start (recorded in in.lease_until). `commit` applies it.
bool may_start(RoundInput& in, Hold& hold, const AstraeaOptions& opt, int j, int g, bool commit) {
    if (!hold.active) return true;
    if (in.now + opt.lease_s <= hold.start) return true;  // its whole lease ends in time
    if (g <= hold.spare) {
        if (commit) hold.spare -= g;
        return true;
    }
    // GPUs held for over-served tenants' gangs stay open to the tenants under their share.
    if (hold.own > 0 && in.tenants[in.jobs[j].tenant].index < 1.0 && g <= hold.spare + hold.own) {
        if (commit) {
            hold.own -= g - hold.spare;
            hold.spare = 0;
        }
        return true;
    }
    if (hold.start - in.now >= hold.min_lease) {
        if (commit) in.lease_until.push_back({j, hold.start});
        return true;
    }
    return false;
}

/// keep_renewals: when a start took the GPUs of a run re-selected at its lease end (so that
/// run moved), the round's starts are placed again: renewals on their own GPUs first, then the
/// others in the round's order by the placer, then any renewal whose GPUs are still taken. If
/// that leaves a start unplaced, the round's placements stand. When anything moved, preemptions
/// go first in `actions` (their GPUs may now serve any start).
void keep_renewal_gpus(const RoundInput& in, ClusterState& cluster, const Placer& placer,
                       std::vector<Action>& actions) {
    auto moved = [&](const Action& a) {
        const RunState& r = in.runs[a.job];
        return a.kind == Action::Kind::Start && r.last_checkpoint_s == in.now &&
               !(a.placement.parts == r.last_placement.parts);
    };
    if (std::none_of(actions.begin(), actions.end(), moved)) return;
    thread_local std::vector<std::optional<Placement>> again;
    again.assign(actions.size(), std::nullopt);
    for (const Action& a : actions)
        if (a.kind == Action::Kind::Start) cluster.give(a.placement);
    auto renewal = [&](const Action& a) {
        return a.kind == Action::Kind::Start && in.runs[a.job].last_checkpoint_s == in.now &&
               !in.runs[a.job].last_placement.parts.empty();
    };
    bool ok = true;
    for (std::size_t i = 0; i < actions.size(); ++i)
        if (renewal(actions[i]))
            again[i] = take_if_free(cluster, in.runs[actions[i].job].last_placement);
    for (int pass = 0; pass < 2 && ok; ++pass)
        for (std::size_t i = 0; i < actions.size() && ok; ++i) {
            const Action& a = actions[i];
            if (a.kind != Action::Kind::Start || again[i] || renewal(a) != (pass == 1)) continue;
            again[i] = place_gang(placer, cluster, in.jobs[a.job]);
            ok = again[i].has_value();
        }
    if (!ok) {  // keep the round's placements
        for (const auto& p : again)
            if (p) cluster.give(*p);
        for (const Action& a : actions)
            if (a.kind == Action::Kind::Start)
                for (const auto& part : a.placement.parts) cluster.take(part.machine, part.gpus);
        return;
    }
    for (std::size_t i = 0; i < actions.size(); ++i)
        if (actions[i].kind == Action::Kind::Start) actions[i].placement = std::move(*again[i]);
    std::stable_partition(actions.begin(), actions.end(),
                          [](const Action& a) { return a.kind == Action::Kind::Preempt; });
}

/// keep_reservation: a tenant's queue blocked at gang j (head-of-line blocking) leaves the GPUs
/// behind it idle; they are held for j from the next round on (RoundInput::reserved), or a job
/// re-selected at its lease end takes them back and they were idle for nothing. The first
/// blocked gang of a tenant under its share that leaves GPUs idle, when no job holds a
/// reservation yet.
void hold_for_blocked_head(RoundInput& in, const ClusterState& cluster,
                           const AstraeaImprovements& imp, std::size_t u, int j) {
    if (!imp.keep_reservation || !imp.reserve || in.reserved >= 0) return;
    if (in.jobs[j].gpus > 1 && cluster.free_gpus() > 0 && in.tenants[u].index < 1.0)
        in.reserved = j;
}

/// Lease ends (victim_margin, preempt_horizon_s; docs/policies.md "Two gangs"): the runs whose
/// lease ended at this instant that keep their GPUs whatever the round would decide, renewed on
/// their own GPUs before the reservations and phase 1 (as `early` starts). A run is kept when no
/// waiting job would reach T_starve within the next lease and either it is expected to finish
/// within the horizon or no waiting tenant's long-term index is behind its tenant's by more than
/// the margin. One pass over the pending list, then one over the tenants per renewal.
void keep_lease_ends(RoundInput& in, ClusterState& cluster, const AstraeaOptions& opt,
                     const AstraeaImprovements& imp, std::vector<int>& early,
                     std::vector<Action>& actions) {
    const bool margin = imp.victim_margin >= 0, horizon = imp.preempt_horizon_s > 0;
    if (!margin && !horizon) return;
    thread_local std::vector<int> renewals;
    thread_local std::vector<char> waiting;
    renewals.clear();
    const std::size_t n = in.tenants.size();
    waiting.assign(n, 0);
    for (int j : in.pending_all) {
        if (j < 0 || static_cast<std::size_t>(j) >= in.runs.size()) continue;
        const RunState& r = in.runs[j];
        if (r.status != RunStatus::Pending) continue;
        if (r.last_checkpoint_s == in.now && !r.last_placement.parts.empty()) {
            renewals.push_back(j);
            continue;
        }
        // A waiting job that would reach T_starve by the next lease end: no run is kept (the
        // reservations must be free to serve it).
        if (in.now - in.wait_begin_s[j] + opt.lease_s >= opt.starvation_s) return;
        const std::size_t u = static_cast<std::size_t>(in.jobs[j].tenant);
        if (u < n) waiting[u] = 1;
    }
    for (int j : renewals) {
        const Job& job = in.jobs[j];
        const std::size_t v = static_cast<std::size_t>(job.tenant);
        bool keep = false;
        if (horizon && job.duration_s > 0)
            keep = job.duration_s - in.runs[j].executed_s <= imp.preempt_horizon_s;
        if (!keep && margin) {
            keep = true;
            for (std::size_t u = 0; u < n && keep; ++u)
                if (waiting[u] && u != v &&
                    in.tenants[v].index - in.tenants[u].index > imp.victim_margin)
                    keep = false;
        }
        if (!keep) continue;
        std::optional<Placement> placed = take_if_free(cluster, in.runs[j].last_placement);
        if (!placed) continue;
        in.tenants[v].used += job.gpus;
        --in.pending_jobs;
        early.push_back(j);
        actions.push_back({Action::Kind::Start, j, std::move(*placed)});
    }
}

}  // namespace

void astraea_round(RoundInput& in, ClusterState& cluster, const AstraeaOptions& opt,
                   const Placer& placer, Rng& rng, std::vector<Action>& actions) {
    actions.clear();
    in.lease_until.clear();
    // Only the random order (it draws from rng) and themis (its cached rho) depend on a queue
    // being ranked when the round does not read it; every other order ranks from the runs'
    // state, which the round does not change, so ranking on first read is the same.
    if (in.eager && (opt.job_order == JobOrder::Random || opt.job_order == JobOrder::Themis))
        for (std::size_t u = 0; u < in.tenants.size(); ++u) queue(in, u, opt, rng);
    const AstraeaImprovements imp = improvements(opt);
    thread_local std::vector<int> early, reclaimed;
    early.clear();
    reclaimed.clear();
    Hold hold;
    keep_lease_ends(in, cluster, opt, imp, early, actions);
    if (imp.reserve && opt.quota_mode == QuotaMode::Fair)
        reserve(in, cluster, opt, placer, rng, early, hold, reclaimed, actions);
    thread_local std::vector<Fill> fill;
    phase1_budgets(in, cluster, opt, rng, early, fill);

    // Phase 2: place jobs inside each tenant's budget, tenants in tenant order (history_ties:
    // by long-term index, then name). head[u]: the first candidate that did not start because
    // the tenant's queue blocked there.
    thread_local std::vector<std::size_t> head;
    head.assign(in.tenants.size(), kNoHead);
    thread_local std::vector<std::size_t> visit;
    visit.resize(in.tenants.size());
    for (std::size_t u = 0; u < visit.size(); ++u) visit[u] = u;
    if (imp.history_ties) {
        const std::vector<int>& rank = name_ranks(in);
        std::sort(visit.begin(), visit.end(), [&](std::size_t a, std::size_t b) {
            const double ia = in.tenants[a].index, ib = in.tenants[b].index;
            return ia != ib ? ia < ib : rank[a] < rank[b];
        });
    }
    for (const std::size_t u : visit) {
        const double budget = fill[u].budget;
        {
            // No candidate fits the budget, and only a new job could make room (by preempting
            // delay jobs, if the tenant has any): nothing can happen for this tenant.
            const TenantQueue& peek = in.tenants[u];
            const bool may_preempt = opt.quota_mode == QuotaMode::Fair && peek.new_jobs > 0 &&
                                     peek.delay_jobs != 0;
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
            if (!early.empty() && started_early(early, j)) {
                if (k < t.starving.size() && starving_left > 0) --starving_left;
                continue;
            }
            const int g = in.jobs[j].gpus;
            const RunState& r = in.runs[j];
            const bool is_new = never_ran(r);
            // placed_victims_only: the preemptions j makes, undone if j does not start.
            const std::size_t actions_before = actions.size(), victims_before = next_victim;
            const int used_before = used;
            auto keep_victims = [&] {
                if (!imp.placed_victims_only || next_victim == victims_before) return;
                for (std::size_t v = victims_before; v < next_victim; ++v)
                    if (reclaimed.empty() || !started_early(reclaimed, t.delay[v]))
                        for (const auto& part : in.runs[t.delay[v]].placement.parts)
                            cluster.take(part.machine, part.gpus);
                actions.resize(actions_before);
                next_victim = victims_before;
                used = used_before;
            };
            // free_before_victims: a new job over its tenant's budget whose gang fits the free
            // GPUs starts there, past the budget, and preempts no one (its victims' GPUs would
            // not be the ones it takes).
            bool over_budget_ok = false;
            if (imp.free_before_victims && opt.quota_mode == QuotaMode::Fair && is_new &&
                !fits_budget(g) && next_victim < t.delay.size()) {
                if (std::optional<Placement> probe = place_gang(placer, cluster, in.jobs[j])) {
                    cluster.give(*probe);
                    over_budget_ok = true;
                }
            }
            if (opt.quota_mode == QuotaMode::Fair && is_new && !over_budget_ok) {
                while (!fits_budget(g) && next_victim < t.delay.size()) {
                    const int victim = t.delay[next_victim];
                    if (!reclaimed.empty() && started_early(reclaimed, victim)) {
                        ++next_victim;  // preempted already (reclaim_within_quota)
                        continue;
                    }
                    // overserved_victims: only a job that has received more than it deserved
                    // (F_j > 1, victims come most over-served first) loses its lease's work.
                    if (imp.overserved_victims && !(in.runs[victim].fairness > 1.0)) break;
                    ++next_victim;
                    cluster.give(in.runs[victim].placement);
                    used -= in.jobs[victim].gpus;
                    actions.push_back({Action::Kind::Preempt, victim, {}});
                }
            }
            const bool blocks = starving_left > 0 || opt.block_scheduling;
            if (!fits_budget(g) && !over_budget_ok) {
                keep_victims();
                if (blocks) {
                    head[u] = k;
                    hold_for_blocked_head(in, cluster, imp, u, j);
                    break;
                }
                continue;
            }
            std::optional<Placement> placed;
            if (may_start(in, hold, opt, j, g, false)) {
                if (in.sticky_renewals && r.last_checkpoint_s == in.now)
                    placed = take_if_free(cluster, r.last_placement);
                if (!placed) placed = place_gang(placer, cluster, in.jobs[j]);
                if (placed) may_start(in, hold, opt, j, g, true);
            }
            if (!placed) {
                keep_victims();
                if (blocks) {
                    head[u] = k;
                    hold_for_blocked_head(in, cluster, imp, u, j);
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
    if (imp.keep_renewals && in.sticky_renewals) keep_renewal_gpus(in, cluster, placer, actions);
}

std::vector<int> tenant_name_ranks(std::span<const Tenant> tenants) {
    const std::size_t n = tenants.size();
    std::vector<int> order(n), rank(n);
    for (std::size_t u = 0; u < n; ++u) order[u] = static_cast<int>(u);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
        return tenants[a].name != tenants[b].name ? tenants[a].name < tenants[b].name : a < b;
    });
    for (std::size_t k = 0; k < n; ++k) rank[order[k]] = static_cast<int>(k);
    return rank;
}

}  // namespace astraeus
