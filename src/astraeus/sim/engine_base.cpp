#include "astraeus/sim/engine_base.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "astraeus/base/huge_pages.hpp"

namespace astraeus::detail {
namespace {

JobLists per_tenant(const Workload& w, bool tombstones) {
    return JobLists(w.tenants.size(), w.jobs.size(), tombstones);
}

}  // namespace

EngineBase::EngineBase(const Workload& w, const SimConfig& c, std::vector<int> quotas,
                       std::unique_ptr<Placer> placer, bool tombstone_lists)
    : w_(w), c_(c), opt_(c.options), cluster_(c.cluster), placer_(std::move(placer)),
      rng_(c.options.seed), pending_(1, w.jobs.size(), tombstone_lists),
      running_(1, w.jobs.size(), tombstone_lists),
      t_pending_(per_tenant(w, tombstone_lists)), t_running_(per_tenant(w, tombstone_lists)) {
    const std::size_t n = w.tenants.size();
    res_.quotas = std::move(quotas);
    reserve_huge(res_.runs, w.jobs.size());  // 184 bytes a job, filled at once
    res_.runs.resize(w.jobs.size());
    // Only the themis job order reads and writes it (sched/job_order.cpp).
    if (c.options.job_order == JobOrder::Themis) themis_rho_.assign(w.jobs.size(), 1.0);
    starving_mark_.assign(w.jobs.size(), 0);
    pend_seq_.assign(w.jobs.size(), 0);
    pending_gangs_.resize(n);
    new_pending_.assign(n, 0);
    ledgers_.assign(n, TenantLedger(opt_.window_buckets));
    starving_.resize(n);
    delay_.resize(n);
    used_.assign(n, 0);
    if (opt_.mode == Mode::Default) improve_ = opt_.improve;
    else improve_ = {false, false, 0, false, 0, false};
    double weights = 0;
    for (const Tenant& t : w.tenants) weights += t.weight;
    exact_share_.assign(n, 0.0);
    for (std::size_t u = 0; u < n; ++u)
        if (weights > 0)
            exact_share_[u] = c.cluster.total_gpus() * w.tenants[u].weight / weights;
    decayed_used_.assign(n, 0.0);
    decayed_entitled_.assign(n, 0.0);
}

void EngineBase::decay(Seconds dt) {
    const Seconds half = improve_.index_half_life_s;
    if (half <= 0 || dt <= 0) return;
    // Over dt at a constant rate r: S <- S * 2^(-dt/h) + r * (h / ln 2) * (1 - 2^(-dt/h)).
    if (dt != decay_dt_) {
        decay_dt_ = dt;
        decay_keep_ = std::exp2(-static_cast<double>(dt) / static_cast<double>(half));
        decay_gain_ = static_cast<double>(half) / std::log(2.0) * (1.0 - decay_keep_);
    }
    const double keep = decay_keep_, gain = decay_gain_;
    for (std::size_t u = 0; u < tenants(); ++u) {
        const double rate = improve_.exact_entitlement ? exact_share_[u] : quota(int(u));
        decayed_used_[u] = decayed_used_[u] * keep + used_[u] * gain;
        decayed_entitled_[u] = decayed_entitled_[u] * keep + rate * gain;
    }
}

void EngineBase::to_pending(int j) {
    RunState& r = run(j);
    r.status = RunStatus::Pending;
    pending_.push(0, j);
    const int u = tenant(j);
    t_pending_.push(static_cast<std::size_t>(u), j);
    pend_seq_[j] = ++next_pend_seq_;
    auto& gangs = pending_gangs_[u];
    auto it = std::find_if(gangs.begin(), gangs.end(), [&](auto& p) { return p.first == gpus(j); });
    if (it == gangs.end()) gangs.push_back({gpus(j), 1});
    else ++it->second;
    if (is_new(r)) ++new_pending_[u];
}

int EngineBase::min_pending_gpus(std::size_t u) const {
    int m = std::numeric_limits<int>::max();
    for (auto [g, count] : pending_gangs_[u])
        if (count > 0) m = std::min(m, g);
    return m;
}

void EngineBase::release(int j) {
    RunState& r = run(j);
    cluster_.give(r.placement);
    r.last_placement = std::move(r.placement);
    r.placement = {};
    running_.remove(0, j);
    t_running_.remove(static_cast<std::size_t>(tenant(j)), j);
    used_[tenant(j)] -= gpus(j);
}

void EngineBase::mark_running(int j, Placement p) {
    RunState& r = run(j);
    for (const auto& part : p.parts) cluster_.take(part.machine, part.gpus);
    r.placement = std::move(p);
    const int u = tenant(j);
    pending_.remove(0, j);
    t_pending_.remove(static_cast<std::size_t>(u), j);
    if (starving_mark_[j]) {
        // Starving lists are in (submit, pending-list order): found by binary search.
        auto& st = starving_[u];
        auto it = std::lower_bound(st.begin(), st.end(), j, starving_before());
        if (it == st.end() || *it != j) it = std::find(st.begin(), st.end(), j);
        assert(it != st.end());
        st.erase(it);
        starving_mark_[j] = 0;
    }
    for (auto& [g, count] : pending_gangs_[u])
        if (g == gpus(j)) --count;
    if (is_new(r)) --new_pending_[u];
    r.status = RunStatus::Running;
    running_.push(0, j);
    t_running_.push(static_cast<std::size_t>(tenant(j)), j);
    used_[tenant(j)] += gpus(j);
}

void EngineBase::count_resume(RunState& r) {
    if (r.resume_pending) ++r.resumes;
    r.resume_pending = false;
}

void EngineBase::sample_tenant(Seconds t, std::size_t u, const TenantServiceSums& s) {
    int pending_gpus = 0;
    for (int j : t_pending_.live(u)) pending_gpus += gpus(j);
    res_.tenant_series.push_back({t, static_cast<int>(u), TenantLedger::fairness(s),
                                  TenantLedger::scheduling_index(s), used_[u], pending_gpus});
}

std::vector<Action>& EngineBase::run_round(const std::vector<TenantServiceSums>& sums,
                                           Seconds now) {
    prepare_astraea_round(sums, now);
    cluster_.begin_trial();  // the round's placements are tried on cluster_, then undone
    astraea_round(round_in_, cluster_, opt_, *placer_, rng_, actions_);
    cluster_.rollback();
    return actions_;
}

void EngineBase::prepare_astraea_round(const std::vector<TenantServiceSums>& sums, Seconds now) {
    RoundInput& in = round_in_;
    in.now = now;
    in.sticky_renewals = opt_.mode == Mode::Default;
    in.eager = opt_.mode == Mode::Compat;
    in.jobs = w_.jobs;
    in.runs = res_.runs;
    in.themis_rho = themis_rho_;
    in.share_order = w_.share_order;
    in.pending_jobs = static_cast<int>(pending_.size(0));
    // The lease-end rules read every pending job (astraea_round.cpp, keep_lease_ends).
    if (opt_.mode == Mode::Default &&
        (opt_.improve.victim_margin >= 0 || opt_.improve.preempt_horizon_s > 0))
        in.pending_all = pending_.live(0);
    in.tenants.resize(tenants());
    for (std::size_t u = 0; u < tenants(); ++u) {
        TenantQueue& q = in.tenants[u];
        q.quota = quota(static_cast<int>(u));
        q.used = used_[u];
        q.index = TenantLedger::scheduling_index(sums[u]);
        q.utilized = sums[u].utilized;
        q.entitled = sums[u].entitled;
        q.entitlement_rate = -1;
        if (improve_.exact_entitlement) {
            // The window's entitlement at the exact rate (the quota is constant over it).
            q.entitlement_rate = exact_share_[u];
            if (q.quota > 0) {
                const double exact =
                    static_cast<double>(q.entitled) * exact_share_[u] / q.quota;
                q.entitled = static_cast<GpuSeconds>(std::llround(exact));
                q.index = exact > 0 ? static_cast<double>(q.utilized) / exact : 1.0;
            }
        }
        if (improve_.index_half_life_s > 0) {
            q.utilized = static_cast<GpuSeconds>(std::llround(decayed_used_[u]));
            q.entitled = static_cast<GpuSeconds>(std::llround(decayed_entitled_[u]));
            q.index = decayed_entitled_[u] > 0 ? decayed_used_[u] / decayed_entitled_[u] : 1.0;
        }
        q.min_gpus = min_pending_gpus(u);
        q.new_jobs = new_pending_[u];
        q.starving_jobs = starving_[u].size();
        // compat fills delay_ before the round; default mode finds delay jobs in prepare.
        q.delay_jobs = opt_.mode == Mode::Compat ? delay_[u].size() : TenantQueue::kUnknown;
        q.prepared = false;
    }
    if (!in.prepare) in.prepare = [this](std::size_t u, TenantQueue& q) { prepare_tenant(u, q); };
}

void EngineBase::prepare_tenant(std::size_t u, TenantQueue& q) {
    q.pending.clear();
    for (int j : t_pending_.live(u))
        if (!starving_mark_[j]) q.pending.push_back(j);
    q.starving = starving_[u];
    q.delay = delay_[u];
}

void EngineBase::insert_starving(int j) {
    auto& s = starving_[tenant(j)];
    s.insert(std::upper_bound(s.begin(), s.end(), j, starving_before()), j);
    starving_mark_[j] = 1;
}

void EngineBase::clear_starving() {
    for (auto& s : starving_) {
        for (int j : s) starving_mark_[j] = 0;
        s.clear();
    }
}

void EngineBase::add_starving(int j) {
    starving_[tenant(j)].push_back(j);
    starving_mark_[j] = 1;
}

void EngineBase::sort_starving() {
    for (auto& s : starving_)
        if (s.size() > 1)
            std::stable_sort(s.begin(), s.end(), [&](int a, int b) {
                return w_.jobs[a].submit_s < w_.jobs[b].submit_s;
            });
}

SimResult EngineBase::finish_result() {
    res_.tenant_fairness.resize(tenants());
    for (std::size_t u = 0; u < tenants(); ++u) {
        const TenantServiceSums life = ledgers_[u].lifetime();
        // A tenant that deserved nothing (weight 0) has no F_u, as a job that deserved nothing
        // has no F_j: NaN, written null (summary.json) and left out of the F_u statistics
        // (default mode; compat keeps the reference's 1).
        const bool none = life.deserved == 0 && opt_.mode != Mode::Compat;
        res_.tenant_fairness[u] = none ? std::numeric_limits<double>::quiet_NaN()
                                       : TenantLedger::fairness(life);
    }
    return std::move(res_);
}

}  // namespace astraeus::detail
