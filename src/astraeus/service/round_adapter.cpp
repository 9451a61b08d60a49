#include "astraeus/service/round_adapter.hpp"

#include <algorithm>
#include <cassert>
#include <limits>

#include "astraeus/accounting/job_fairness.hpp"
#include "astraeus/base/count_text.hpp"
#include "astraeus/placement/registry.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/sched/gang_placement.hpp"

namespace astraeus::service {
namespace {

void erase_value(std::vector<int>& v, int j) {
    auto it = std::find(v.begin(), v.end(), j);
    if (it != v.end()) v.erase(it);
}

std::string gang_text(int workers, int gpus_per_worker) {
    std::string s = std::to_string(workers);
    s += " x ";
    s += std::to_string(gpus_per_worker);
    s += " GPUs";
    return s;
}

}  // namespace

Result<std::unique_ptr<RoundAdapter>> RoundAdapter::make(ClusterSpec spec, AstraeaOptions options,
                                                         const std::string& placer) {
    auto pl = make_placer(placer);
    if (!pl) return std::unexpected(pl.error());
    auto po = make_policy(options);
    if (!po) return std::unexpected(po.error());
    return std::unique_ptr<RoundAdapter>(
        new RoundAdapter(std::move(spec), std::move(options), std::move(*po), std::move(*pl), placer));
}

std::unique_ptr<RoundAdapter> RoundAdapter::fork() const {
    std::unique_ptr<RoundAdapter> c(new RoundAdapter(*this));
    std::unique_ptr<Policy> po = policy_->clone();
    if (!po) po = std::move(*make_policy(opt_));  // made once by make(): cannot fail
    c->policy_.p = std::move(po);
    c->placer_.p = std::move(*make_placer(placer_name_));
    RoundAdapter* self = c.get();
    c->in_.prepare = [self](std::size_t u, TenantQueue& q) { self->prepare_tenant(u, q); };
    c->bind_input(c->now_);
    return c;
}

std::vector<int> RoundAdapter::winding_down_jobs() const {
    std::vector<int> out;
    for (std::size_t j = 0; j < leaving_.size(); ++j)
        if (leaving_[j] && !leaving_held_[j].parts.empty()) out.push_back(static_cast<int>(j));
    return out;
}

RoundAdapter::RoundAdapter(ClusterSpec spec, AstraeaOptions options, std::unique_ptr<Policy> policy,
                           std::unique_ptr<Placer> placer, std::string placer_name)
    : spec_(std::move(spec)), opt_(std::move(options)), policy_(std::move(policy)),
      placer_(std::move(placer)), placer_name_(std::move(placer_name)), astraea_(policy_->astraea_lists()), cluster_(spec_),
      scratch_(spec_), rng_(opt_.seed), down_(spec_.machine_gpus.size(), 0),
      withheld_(spec_.machine_gpus.size(), 0), foreign_want_(spec_.machine_gpus.size(), 0),
      foreign_taken_(spec_.machine_gpus.size(), 0) {
    in_.prepare = [this](std::size_t u, TenantQueue& q) { prepare_tenant(u, q); };
}

void RoundAdapter::set_tenants(const std::vector<Tenant>& tenants) {
    for (const Tenant& t : tenants) {
        const int u = tenant_index(t.name);
        if (u >= 0) {
            tenants_[u].weight = t.weight;
            continue;
        }
        tenants_.push_back(t);
        share_order_.push_back(static_cast<int>(tenants_.size()) - 1);
        used_.push_back(0);
        leaving_gpus_.push_back(0);
        active_.push_back(0);
        demand_.push_back(0);
        ledgers_.emplace_back(opt_.window_buckets);
        t_running_.emplace_back();
        pending_.add_tenant();
    }
    // Quotas: the pool's GPUs split by weight, largest remainder (ties: tenant order).
    const int total = spec_.total_gpus();
    double sum = 0;
    for (const Tenant& t : tenants_) sum += t.weight;
    quotas_.assign(tenants_.size(), 0);
    if (sum <= 0) return;
    std::vector<std::pair<double, int>> rest;
    int given = 0;
    for (std::size_t u = 0; u < tenants_.size(); ++u) {
        const double exact = total * tenants_[u].weight / sum;
        quotas_[u] = static_cast<int>(exact);
        given += quotas_[u];
        rest.push_back({exact - quotas_[u], static_cast<int>(u)});
    }
    std::stable_sort(rest.begin(), rest.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (std::size_t k = 0; given < total && k < rest.size(); ++k, ++given) ++quotas_[rest[k].second];
}

int RoundAdapter::tenant_index(const std::string& name) const {
    for (std::size_t u = 0; u < tenants_.size(); ++u)
        if (tenants_[u].name == name) return static_cast<int>(u);
    return -1;
}

Result<int> RoundAdapter::submit(int u, int gpus, Seconds submit_s, Seconds duration_s,
                                 int gpus_per_worker) {
    // The pool's sizes from the cluster's counts (summing the machines is O(machines)).
    if (gpus > cluster_.total_gpus()) {
        std::string m = "no placement for ";
        m += std::to_string(gpus);
        m += " GPUs: the pool has ";
        m += std::to_string(cluster_.total_gpus());
        return fail(m);
    }
    if (gpus_per_worker > 0) {
        const int workers = gpus / gpus_per_worker;
        auto [at, added] = workers_fit_.try_emplace(gpus_per_worker, 0);
        if (added) at->second = workers_that_fit(spec_.machine_gpus, gpus_per_worker);
        const int fit = at->second;
        if (gpus % gpus_per_worker != 0 || fit < workers) {
            std::string m = "no placement for " + gang_text(workers, gpus_per_worker);
            m += ": each worker's GPUs must be on one machine and the pool's machines (";
            for (std::size_t k = 0; k < spec_.machine_gpus.size(); ++k) {
                if (k > 0) m += ", ";
                m += std::to_string(spec_.machine_gpus[k]);
            }
            m += " GPUs) hold at most " + std::to_string(fit) + " workers of " +
                 std::to_string(gpus_per_worker) + " GPUs";
            return fail(m);
        }
    }
    const int j = static_cast<int>(jobs_.size());
    Job job;
    job.id = j;
    job.tenant = u;
    job.gpus = gpus;
    job.submit_s = submit_s;
    job.duration_s = duration_s > 0 ? duration_s : kMaxTraceTime;
    job.gpus_per_worker = gpus_per_worker;
    jobs_.push_back(job);
    runs_.emplace_back();
    pending_.add_job(u, gpus, submit_s);
    lease_start_.push_back(0);
    wait_begin_.push_back(submit_s);
    e0_.push_back(0);
    themis_rho_.push_back(1.0);
    restored_.push_back(0);
    leaving_.push_back(0);
    leaving_held_.emplace_back();
    ledger_.job.push_back(0.0);
    bind_input(std::max(now_, submit_s));
    if (!policy_->admits(in_, j)) {
        runs_[j].status = RunStatus::Dropped;
        std::string m = "the gang of ";
        m += std::to_string(gpus);
        m += " GPUs is larger than the workspace's quota of ";
        m += std::to_string(quotas_[u]);
        m += " GPUs in this pool (policy ";
        m += opt_.policy;
        m += ")";
        return fail(m);
    }
    ++active_[u];
    demand_[u] += gpus;
    policy_->on_admit(in_, j, ledger_);
    runs_[j].first_seen_s = submit_s;
    to_pending(j, submit_s);
    return j;
}

void RoundAdapter::restore_job(int j, Seconds executed_s, int preemptions) {
    runs_[j].executed_s = executed_s;
    runs_[j].preemptions = preemptions;
    e0_[j] = executed_s;
    pending_.set_fresh(j, executed_s == 0 && preemptions == 0);
}

void RoundAdapter::restore_running(int j, const Placement& p, Seconds lease_start_s,
                                   Seconds executed_s) {
    leave_pending(j);
    runs_[j].executed_s = executed_s;
    e0_[j] = executed_s;
    to_running(j, p, lease_start_s);
    restored_[j] = 1;
}

void RoundAdapter::replay_history(const std::vector<PastRun>& past, Seconds from_s, Seconds to_s) {
    if (to_s <= from_s) return;
    const Seconds bucket = opt_.bucket_s;
    std::vector<Seconds> cuts{from_s, to_s};
    auto cut = [&](Seconds t) {
        if (t > from_s && t < to_s) cuts.push_back(t);
    };
    for (const PastRun& p : past) {
        cut(p.submit_s);
        cut(p.end_s);
        for (const auto& [a, b] : p.held) {
            cut(a);
            cut(b);
        }
    }
    for (Seconds b = (from_s / bucket + 1) * bucket; b < to_s; b += bucket) cuts.push_back(b);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    const std::size_t n = tenants_.size();
    std::vector<int> demand(n), used(n), active(n);
    auto within = [](Seconds t, Seconds from, Seconds to) { return from <= t && (to < 0 || t < to); };
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
        const Seconds a = cuts[k], dt = cuts[k + 1] - a;
        std::fill(demand.begin(), demand.end(), 0);
        std::fill(used.begin(), used.end(), 0);
        std::fill(active.begin(), active.end(), 0);
        for (const PastRun& p : past) {
            if (p.tenant < 0 || p.tenant >= static_cast<int>(n) || !within(a, p.submit_s, p.end_s)) continue;
            const auto u = static_cast<std::size_t>(p.tenant);
            demand[u] += p.gpus;
            ++active[u];
            for (const auto& [from, to] : p.held)
                if (within(a, from, to)) {
                    used[u] += p.gpus;
                    break;
                }
        }
        for (std::size_t u = 0; u < n; ++u) ledgers_[u].accrue(quotas_[u], demand[u], used[u], dt);
        for (const PastRun& p : past) {
            if (p.job < 0 || p.tenant < 0 || p.tenant >= static_cast<int>(n) ||
                !within(a, p.submit_s, p.end_s))
                continue;
            const auto u = static_cast<std::size_t>(p.tenant);
            const double share = job_fair_share(1.0, active[u], active[u], quotas_[u]);
            accrue_deserved(runs_[p.job], p.gpus, share, dt);
        }
        if (cuts[k + 1] % bucket == 0)
            for (auto& l : ledgers_) l.close_bucket();
    }
    clock_s_ = to_s;
    now_ = std::max(now_, to_s);
}

void RoundAdapter::to_pending(int j, Seconds t) {
    RunState& r = runs_[j];
    r.status = RunStatus::Pending;
    wait_begin_[j] = t;
    pending_.join(j, t, r.executed_s == 0 && r.preemptions == 0);
}

void RoundAdapter::leave_pending(int j) {
    if (pending_.pending(j)) pending_.leave(j);
}

void RoundAdapter::to_running(int j, Placement p, Seconds t) {
    RunState& r = runs_[j];
    for (const auto& part : p.parts) cluster_.take(part.machine, part.gpus);
    r.placement = std::move(p);
    r.status = RunStatus::Running;
    if (r.first_start_s < 0) r.first_start_s = t;
    r.total_pending_s += t - wait_begin_[j];
    r.longest_wait_s = std::max(r.longest_wait_s, t - wait_begin_[j]);
    r.waiting_since_start_s = 0;
    lease_start_[j] = t;
    e0_[j] = r.executed_s;
    restored_[j] = 0;
    running_.push_back(j);
    t_running_[jobs_[j].tenant].push_back(j);
    used_[jobs_[j].tenant] += jobs_[j].gpus;
}

void RoundAdapter::give_back(const Placement& p) {
    cluster_.give(p);
    for (const auto& part : p.parts)
        if (down_[part.machine]) {  // a lost machine's GPUs stay out of the rounds
            cluster_.take(part.machine, part.gpus);
            withheld_[part.machine] += part.gpus;
        } else {
            settle_foreign(part.machine);  // jobs outside may take what this job gave back
        }
}

void RoundAdapter::set_foreign(int m, int gpus) {
    if (m < 0 || m >= static_cast<int>(foreign_want_.size())) return;
    foreign_want_[m] = std::clamp(gpus, 0, spec_.machine_gpus[m]);
    settle_foreign(m);
}

void RoundAdapter::settle_foreign(int m) {
    // A lost machine's free GPUs are all withheld: settled when it is back.
    if (down_[m]) return;
    int& taken = foreign_taken_[m];
    const int want = foreign_want_[m];
    if (taken > want) {
        Placement p;
        p.parts.push_back({m, taken - want});
        cluster_.give(p);
        taken = want;
    } else if (taken < want) {
        const int f = std::min(cluster_.free_on(m), want - taken);
        if (f > 0) cluster_.take(m, f);
        taken += std::max(0, f);
    }
}

bool RoundAdapter::fits_only_with(const Job& job, const std::vector<int>& machines,
                                  const std::vector<int>& held) const {
    ClusterState now = cluster_;
    if (place_gang(*placer_, now, job)) return false;
    ClusterState back = cluster_;
    for (int m : machines)
        if (held[m] > 0) {
            Placement p;
            p.parts.push_back({m, held[m]});
            back.give(p);
        }
    return place_gang(*placer_, back, job).has_value();
}

void RoundAdapter::leave_running(int j, bool give) {
    RunState& r = runs_[j];
    policy_->on_release(in_, j, now_ - lease_start_[j], ledger_);
    r.last_run_s = now_ - lease_start_[j];
    if (give) give_back(r.placement);
    else leaving_held_[j] = r.placement;
    r.last_placement = std::move(r.placement);
    r.placement = {};
    erase_value(running_, j);
    erase_value(t_running_[jobs_[j].tenant], j);
    used_[jobs_[j].tenant] -= jobs_[j].gpus;
}

void RoundAdapter::end_leaving(int j) {
    if (!leaving_held_[j].parts.empty()) leaving_gpus_[jobs_[j].tenant] -= jobs_[j].gpus;
    give_back(leaving_held_[j]);
    leaving_held_[j] = {};
    leaving_[j] = 0;
}

Seconds RoundAdapter::executed(int j, Seconds now) const {
    const RunState& r = runs_[j];
    return r.status == RunStatus::Running ? e0_[j] + (now - lease_start_[j]) : r.executed_s;
}

void RoundAdapter::advance(Seconds t) {
    if (clock_s_ < 0) clock_s_ = t;
    while (clock_s_ < t) {
        const Seconds boundary = (clock_s_ / opt_.bucket_s + 1) * opt_.bucket_s;
        const Seconds end = std::min(t, boundary);
        const Seconds dt = end - clock_s_;
        share_.resize(tenants_.size());
        for (std::size_t u = 0; u < tenants_.size(); ++u) {
            // Received: the GPUs its running jobs hold and those its winding-down jobs still
            // hold (a stop's grace, a failure's hold), as they count in its demand.
            ledgers_[u].accrue(quotas_[u], demand_[u], used_[u] + leaving_gpus_[u], dt);
            share_[u] = job_fair_share(1.0, active_[u], active_[u], quotas_[u]);
        }
        auto deserve = [&](int j) {
            accrue_deserved(runs_[j], jobs_[j].gpus, share_[jobs_[j].tenant], dt);
        };
        for (int j : pending_.all()) deserve(j);
        for (int j : running_) deserve(j);
        clock_s_ = end;
        if (end == boundary)
            for (auto& l : ledgers_) l.close_bucket();
    }
    now_ = std::max(now_, t);
}

std::vector<TenantView> RoundAdapter::tenant_views() const {
    std::vector<TenantView> out;
    const Seconds b = opt_.bucket_s;
    const double frac = clock_s_ < 0 ? 0.0
                                     : static_cast<double>(((clock_s_ % b) + b) % b) / static_cast<double>(b);
    for (std::size_t u = 0; u < tenants_.size(); ++u) {
        TenantView v;
        v.name = tenants_[u].name;
        v.weight = tenants_[u].weight;
        v.quota_gpus = quotas_[u];
        v.used_gpus = used_[u];
        v.demand_gpus = demand_[u];
        v.window = ledgers_[u].window(frac);
        v.buckets = ledgers_[u].closed_buckets();
        v.current = ledgers_[u].current();
        out.push_back(std::move(v));
    }
    return out;
}

void RoundAdapter::refresh_fairness_of(int j, Seconds executed_s) {
    RunState& r = runs_[j];
    r.utilized_gpu_s = static_cast<double>(GpuSeconds{jobs_[j].gpus} * executed_s);
    refresh_fairness(r);
}

void RoundAdapter::bind_input(Seconds now) {
    RoundInput& in = in_;
    in.jobs = jobs_;
    in.runs = runs_;
    in.tenant_info = tenants_;
    in.quotas = quotas_;
    in.used = used_;
    in.active = active_;
    in.tenant_pending = pending_.by_tenant();
    in.tenant_running = t_running_;
    in.pending_all = pending_.all();
    in.pend_seq = pending_.seq();
    in.running_all = running_;
    in.lease_start_s = lease_start_;
    in.wait_begin_s = wait_begin_;
    in.ledger = &ledger_;
    int active = 0;
    for (int a : active_) active += a;
    in.active_jobs = active;
    in.now = now;
    in.sticky_renewals = true;
    in.themis_rho = themis_rho_;
    in.share_order = share_order_;
    in.pending_jobs = static_cast<int>(pending_.all().size());
    in.eager = false;
    in.tenants.resize(tenants_.size());
}

void RoundAdapter::fill_queues(Seconds now) {
    if (!astraea_) return;
    // Starving: waited at least T_starve since it last began to wait.
    pending_.promote(now, opt_.starvation_s);
    const double frac =
        static_cast<double>(((now % opt_.bucket_s) + opt_.bucket_s) % opt_.bucket_s) /
        static_cast<double>(opt_.bucket_s);
    for (std::size_t u = 0; u < tenants_.size(); ++u) {
        const TenantServiceSums s = ledgers_[u].window(frac);
        TenantQueue& q = in_.tenants[u];
        q.quota = quotas_[u];
        q.used = used_[u];
        q.index = TenantLedger::scheduling_index(s);
        q.utilized = s.utilized;
        q.entitled = s.entitled;
        q.min_gpus = pending_.min_gpus(u);
        q.new_jobs = pending_.fresh(u);
        q.prepared = false;
        q.starving_jobs = pending_.starving_of(u).size();
    }
}

void RoundAdapter::prepare_tenant(std::size_t u, TenantQueue& q) {
    q.pending.clear();
    for (int j : pending_.by_tenant()[u]) {
        if (!pending_.starving(j)) q.pending.push_back(j);
        refresh_fairness_of(j, runs_[j].executed_s);
        runs_[j].life_s = now_ - jobs_[j].submit_s;
    }
    q.starving = pending_.starving_of(u);
    q.delay.clear();
    // Delay jobs are victims of the tenant's own new jobs, and with reclaim_within_quota of
    // another tenant's (as the simulator lists them: sim/event_engine.cpp).
    if (q.new_jobs == 0 && !opt_.improve.reclaim_within_quota) return;
    for (int j : t_running_[u]) {
        if (restored_[j]) continue;  // its lease began before the restart: see restore_running
        const Seconds in_lease = now_ - lease_start_[j];
        const bool delay = runs_[j].lease_expiries > 0 ? in_lease < opt_.delay_s
                                                       : in_lease >= 120 && in_lease < opt_.delay_s;
        if (!delay) continue;
        refresh_fairness_of(j, e0_[j]);
        q.delay.push_back(j);
    }
}

std::vector<Decision> RoundAdapter::round(Seconds now) {
    advance(now);
    bind_input(now);
    fill_queues(now);
    scratch_ = cluster_;
    policy_->round(in_, scratch_, *placer_, rng_, actions_);
    std::vector<Decision> out;
    started_.clear();
    for (Action& a : actions_) {
        const int j = a.job;
        if (a.kind == Action::Kind::Preempt) {
            RunState& r = runs_[j];
            leave_running(j);
            r.executed_s = e0_[j];
            ++r.preemptions;
            to_pending(j, now);
            out.push_back({Decision::Kind::Preempt, j, {}, false, kNoLeaseEnd});
            continue;
        }
        RunState& r = runs_[j];
        bool renewal = r.last_checkpoint_s == now &&
                       r.last_placement.parts.size() == a.placement.parts.size();
        if (renewal)
            for (std::size_t k = 0; k < a.placement.parts.size(); ++k)
                renewal = renewal && a.placement.parts[k].machine == r.last_placement.parts[k].machine &&
                          a.placement.parts[k].gpus == r.last_placement.parts[k].gpus;
        started_.push_back(j);  // leaves the pending lists with the round's other starts, below
        Placement p = a.placement;
        to_running(j, std::move(a.placement), now);
        bind_input(now);
        const Seconds lease = policy_->lease_s(in_, j, 0);
        const Seconds end = lease >= kNoLeaseEnd ? kNoLeaseEnd : now + lease;
        out.push_back({Decision::Kind::Start, j, std::move(p), renewal, end});
    }
    pending_.leave_all(started_);
    return out;
}

bool RoundAdapter::stop_running(int j, Seconds t) {
    RunState& r = runs_[j];
    if (r.status != RunStatus::Running) return false;
    r.executed_s = executed(j, t);
    bind_input(t);
    leave_running(j);
    return true;
}

void RoundAdapter::wind_down(int j, Seconds t) {
    // Before replay_history (a restart's restore) the clock does not move: the replay accrues.
    const bool restoring = clock_s_ < 0;
    if (restoring) now_ = std::max(now_, t);
    else advance(t);
    if (leaving_[j]) return;
    RunState& r = runs_[j];
    if (r.status == RunStatus::Running) {
        r.executed_s = restoring ? e0_[j] : executed(j, t);
        bind_input(t);
        leave_running(j, false);  // its GPUs stay taken until requeue() or remove()
        leaving_gpus_[jobs_[j].tenant] += jobs_[j].gpus;
    } else if (r.status == RunStatus::Pending) {
        leave_pending(j);
    } else {
        return;
    }
    leaving_[j] = 1;
    r.status = RunStatus::Done;  // in no list a round reads; remove() ends it for good
}

void RoundAdapter::lease_end(int j, Seconds t) {
    advance(t);
    if (!stop_running(j, t)) return;
    RunState& r = runs_[j];
    ++r.lease_expiries;
    ++r.checkpoints;
    r.last_checkpoint_s = t;
    to_pending(j, t);
}

void RoundAdapter::requeue(int j, Seconds t) {
    advance(t);
    if (leaving_[j]) {  // a failure winding down, retried: its GPUs are free again
        end_leaving(j);
        to_pending(j, t);
        return;
    }
    if (stop_running(j, t)) to_pending(j, t);
}

void RoundAdapter::remove(int j, Seconds t) {
    advance(t);
    RunState& r = runs_[j];
    if (leaving_[j]) {
        end_leaving(j);
    } else if (!stop_running(j, t)) {
        if (r.status != RunStatus::Pending) return;
        leave_pending(j);
    }
    const int u = jobs_[j].tenant;
    --active_[u];
    demand_[u] -= jobs_[j].gpus;
    r.status = RunStatus::Done;
    r.end_s = t;
}

void RoundAdapter::set_machine_up(int m, bool up) {
    if (m < 0 || m >= static_cast<int>(down_.size()) || !down_[m] == up) return;
    if (!up) {
        down_[m] = 1;
        const int f = cluster_.free_on(m);
        if (f > 0) cluster_.take(m, f);
        withheld_[m] += f;
        return;
    }
    down_[m] = 0;
    if (withheld_[m] > 0) {
        Placement p;
        p.parts.push_back({m, withheld_[m]});
        cluster_.give(p);
    }
    withheld_[m] = 0;
    settle_foreign(m);
}

Seconds RoundAdapter::lease_s(int j) {
    bind_input(now_);
    return policy_->lease_s(in_, j, 0);
}

Seconds RoundAdapter::next_wake_s() {
    if (pending_.all().empty()) return kNoWake;
    bind_input(now_);
    if (astraea_) {
        // ASTRAEA's wake-up is the same T_starve for every run (AstraeaPolicy::wake_after_s):
        // the first run not yet starving that will be after now. The starving ones began to
        // wait at or before the last round's now - T_starve, so they are never after now.
        const Seconds after = opt_.starvation_s;
        assert(policy_->wake_after_s(in_, pending_.all().front()) == after);
        const std::optional<Seconds> w = pending_.first_wait_after(now_ - after);
        return w ? *w + after : kNoWake;
    }
    Seconds best = kNoWake;
    for (int j : pending_.all()) {
        const Seconds after = policy_->wake_after_s(in_, j);
        if (after == kNoWake) continue;
        const Seconds at = wait_begin_[j] + after;
        if (at > now_) best = std::min(best, at);
    }
    return best;
}

int RoundAdapter::add_machine(int gpus) {
    spec_.machine_gpus.push_back(gpus);
    cluster_.add_machine(gpus);
    scratch_ = cluster_;
    workers_fit_.clear();
    down_.push_back(0);
    withheld_.push_back(0);
    foreign_want_.push_back(0);
    foreign_taken_.push_back(0);
    std::vector<Tenant> same = tenants_;
    set_tenants(same);  // quotas over the new total
    return spec_.machines() - 1;
}

std::string RoundAdapter::pending_reason(int j, int workers, int gpus_per_worker,
                                         const std::function<std::string(int)>& machine,
                                         const std::function<std::string(int)>& foreign,
                                         const std::function<std::string(int)>& run, const std::string& pool,
                                         const std::function<Seconds(int)>& lease_end) const {
    const Job& job = jobs_[j];
    const int g = job.gpus;
    const int u = job.tenant;
    std::vector<int> down;
    for (std::size_t m = 0; m < down_.size(); ++m)
        if (down_[m]) down.push_back(static_cast<int>(m));
    auto names = [&] {
        std::string s;
        for (std::size_t k = 0; k < down.size(); ++k) {
            if (k > 0) s += ", ";
            s += machine ? machine(down[k]) : "machine " + std::to_string(down[k]);
        }
        return s;
    };
    if (!down.empty()) {
        // Even on empty machines, the up ones cannot hold the gang: it fits no machine today.
        ClusterState up_only(spec_);
        for (int m : down) up_only.take(m, up_only.free_on(m));
        if (!place_gang(*placer_, up_only, job))
            return "no machine up fits " + gang_text(workers, gpus_per_worker) + " today (it needs " +
                   names() + ")";
        // It would fit now were the down machines' GPUs back.
        if (fits_only_with(job, down, withheld_)) return "waiting for GPUs of " + names();
    }
    {
        // It would fit now were the GPUs held by jobs outside the service free.
        std::vector<int> outside;
        for (std::size_t m = 0; m < foreign_taken_.size(); ++m)
            if (foreign_taken_[m] > 0 && !down_[m]) outside.push_back(static_cast<int>(m));
        if (!outside.empty() && fits_only_with(job, outside, foreign_taken_)) {
            std::string s;
            for (int m : outside) {
                if (!s.empty()) s += "; ";
                s += foreign ? foreign(m)
                             : std::to_string(foreign_taken_[m]) + " GPUs of " +
                                   (machine ? machine(m) : "machine " + std::to_string(m)) +
                                   " are held by jobs outside Astraeus";
            }
            return s;
        }
    }
    if (cluster_.free_gpus() >= g) {
        ClusterState copy = cluster_;
        if (place_gang(*placer_, copy, job)) {
            // It fits the free GPUs, yet the round did not start it: held for a gang the
            // rounds keep a reservation for (keep_reservation, any tenant's), for another
            // tenant's starving run (ASTRAEA's reservation), or its tenant's turn has not come.
            const int kept = in_.reserved;
            if (astraea_ && kept >= 0 && kept != j && static_cast<std::size_t>(kept) < jobs_.size() &&
                is_pending(kept)) {
                const Job& gang = jobs_[kept];
                return "GPUs held for the waiting gang " + (run ? run(kept) : "job " + std::to_string(kept)) +
                       " of " + tenants_[static_cast<std::size_t>(gang.tenant)].name + " (" +
                       std::to_string(gang.gpus) + " GPUs)";
            }
            if (astraea_ && !pending_.starving(j))
                for (std::size_t v = 0; v < tenants_.size(); ++v)
                    if (static_cast<int>(v) != u && !pending_.starving_of(v).empty())
                        return "GPUs held for a starving run of " + tenants_[v].name;
            return "waiting for quota";
        }
    }
    if (used_[u] + g > quotas_[u]) {
        // Past its quota: the cause only while another tenant holds or asks for GPUs here. Alone,
        // its quota is the whole pool and its own running jobs fill it: it waits for their GPUs.
        for (std::size_t v = 0; v < tenants_.size(); ++v)
            if (static_cast<int>(v) != u && (used_[v] > 0 || demand_[v] > 0 || leaving_gpus_[v] > 0))
                return "waiting for quota";
        int up = 0;
        for (int m = 0; m < spec_.machines(); ++m)
            if (!down_[m]) up += spec_.machine_gpus[static_cast<std::size_t>(m)];
        const int free = cluster_.free_gpus();
        const std::string of = pool.empty() ? " of the pool" : " of pool " + pool;
        std::string s = "waiting for GPUs: ";
        if (free == 0)
            s += (up == 1 ? "the 1 GPU" + of + " is" : "all " + std::to_string(up) + " GPUs" + of + " are") +
                 " in use (" + std::to_string(used_[u]) + " by this workspace)";
        else
            s += std::to_string(up - free) + " of " + count_text(up, "GPU") + of + (up - free == 1 ? " is" : " are") +
                 " in use (" + std::to_string(used_[u]) + " by this workspace), " + std::to_string(free) + " free";
        Seconds next = kNoLeaseEnd;
        if (lease_end)
            for (int k : running_) {
                const Seconds e = lease_end(k);
                if (e >= 0 && e < kNoLeaseEnd && e > now_) next = std::min(next, e);
            }
        if (next < kNoLeaseEnd) s += "; next lease end in " + std::to_string(next - now_) + " s";
        return s;
    }
    return "no placement for " + gang_text(workers, gpus_per_worker);
}

}  // namespace astraeus::service
