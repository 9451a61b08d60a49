#include "astraeus/sim/engine.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

#include "astraeus/accounting/job_fairness.hpp"
#include "astraeus/accounting/tenant_ledger.hpp"
#include "astraeus/placement/consolidate.hpp"
#include "astraeus/sched/astraea_round.hpp"

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

namespace {

/// Python-list-like ordered set of job indexes: append at the end, remove keeps order.
void remove_from(std::vector<int>& v, int j) {
    auto it = std::find(v.begin(), v.end(), j);
    assert(it != v.end());
    v.erase(it);
}

class Engine {
public:
    Engine(const Workload& w, const SimConfig& c, std::vector<int> quotas)
        : w_(w), c_(c), opt_(c.options), cluster_(c.cluster), rng_(c.options.seed) {
        const std::size_t n = w.tenants.size();
        res_.quotas = std::move(quotas);
        res_.runs.resize(w.jobs.size());
        themis_rho_.assign(w.jobs.size(), 1.0);
        ledgers_.assign(n, TenantLedger(opt_.window_buckets));
        t_pending_.resize(n);
        t_running_.resize(n);
        starving_.resize(n);
        delay_.resize(n);
        used_.assign(n, 0);
    }

    SimResult run(const ProgressFn& progress) {
        const Seconds tick = opt_.tick_s;
        Seconds t = 0;
        while (next_arrival_ < w_.jobs.size() || !pending_.empty() || !running_.empty()) {
            if (t % opt_.bucket_s == 0) close_buckets(t);
            advance_pending(t);
            advance_running(t);
            accrue_job_ledgers(tick);
            accrue_tenant_ledgers(tick);
            end_leases_and_jobs(t);
            find_delay_jobs();
            admit_arrivals(t);
            schedule(t);
            res_.busy_gpu_s += GpuSeconds{cluster_.total_gpus() - cluster_.free_gpus()} * tick;
            ++res_.rounds;
            if (progress && res_.rounds % 8192 == 0) progress({t, done_, w_.jobs.size()});
            t += tick;
        }
        res_.tenant_fairness.resize(w_.tenants.size());
        for (std::size_t u = 0; u < w_.tenants.size(); ++u)
            res_.tenant_fairness[u] = TenantLedger::fairness(ledgers_[u].window());
        return std::move(res_);
    }

private:
    RunState& run(int j) { return res_.runs[j]; }
    int tenant(int j) const { return w_.jobs[j].tenant; }
    int gpus(int j) const { return w_.jobs[j].gpus; }

    void close_buckets(Seconds t) {
        for (std::size_t u = 0; u < ledgers_.size(); ++u) {
            ledgers_[u].close_bucket();
            const TenantServiceSums s = ledgers_[u].window();
            int pending_gpus = 0;
            for (int j : t_pending_[u]) pending_gpus += gpus(j);
            res_.tenant_series.push_back({t, static_cast<int>(u), TenantLedger::fairness(s),
                                          TenantLedger::scheduling_index(s), used_[u],
                                          pending_gpus});
        }
    }

    void advance_pending(Seconds t) {
        for (auto& s : starving_) s.clear();
        for (int j : pending_) {
            RunState& r = run(j);
            const Seconds dt = t - r.last_check_s;
            r.total_pending_s += dt;
            r.waiting_since_start_s += dt;
            r.life_s += dt;
            r.last_check_s = t;
            if (r.waiting_since_start_s >= opt_.starvation_s) starving_[tenant(j)].push_back(j);
        }
        for (auto& s : starving_)
            std::stable_sort(s.begin(), s.end(),
                             [&](int a, int b) { return w_.jobs[a].submit_s < w_.jobs[b].submit_s; });
    }

    void advance_running(Seconds t) {
        for (int j : running_) {
            RunState& r = run(j);
            const Seconds dt = t - r.last_check_s;
            r.executed_s += dt;
            r.life_s += dt;
            r.last_check_s = t;
            r.lease_run_s += dt;
        }
    }

    void accrue_job_ledgers(Seconds dt) {
        auto accrue = [&](int j, bool running) {
            RunState& r = run(j);
            const int u = tenant(j);
            const int active = static_cast<int>(t_pending_[u].size() + t_running_[u].size());
            const double share = job_fair_share(1.0, active, active, res_.quotas[u]);
            accrue_deserved(r, gpus(j), share, dt);
            if (running) r.utilized_gpu_s = static_cast<double>(GpuSeconds{gpus(j)} * r.executed_s);
            refresh_fairness(r);
        };
        for (int j : pending_) accrue(j, false);
        for (int j : running_) accrue(j, true);
    }

    void accrue_tenant_ledgers(Seconds dt) {
        for (std::size_t u = 0; u < ledgers_.size(); ++u) {
            int demand = used_gpus(u);
            const int used = demand;
            for (int j : t_pending_[u]) demand += gpus(j);
            ledgers_[u].accrue(res_.quotas[u], demand, used, dt);
        }
    }

    int used_gpus(std::size_t u) const {
        int g = 0;
        for (int j : t_running_[u]) g += gpus(j);
        return g;
    }

    // The reference walks its running list while removing from it, so the job after each
    // removed one is looked at only in the next tick. compat keeps that (quirk of section 6b).
    void end_leases_and_jobs(Seconds t) {
        for (std::size_t i = 0; i < running_.size(); ++i) {
            const int j = running_[i];
            RunState& r = run(j);
            if (r.executed_s >= w_.jobs[j].duration_s) {
                finish(j, t);
            } else if (r.lease_run_s >= opt_.lease_s) {
                expire_lease(j, t);
            }
        }
    }

    void count_resume(RunState& r) {
        if (r.resume_pending) ++r.resumes;
        r.resume_pending = false;
    }

    void finish(int j, Seconds t) {
        RunState& r = run(j);
        release(j);
        r.status = RunStatus::Done;
        r.utilized_gpu_s = static_cast<double>(GpuSeconds{gpus(j)} * r.executed_s);
        refresh_fairness(r);
        r.end_s = t + w_.jobs[j].duration_s - r.executed_s;
        r.executed_s = w_.jobs[j].duration_s;
        count_resume(r);
        res_.end_s = std::max(res_.end_s, r.end_s);
        ++done_;
    }

    void expire_lease(int j, Seconds t) {
        RunState& r = run(j);
        release(j);
        to_pending(j);
        ++r.lease_expiries;
        ++r.checkpoints;
        r.waiting_since_start_s = 0;
        r.last_checkpoint_s = t;
        count_resume(r);
    }

    void release(int j) {
        RunState& r = run(j);
        cluster_.give(r.placement);
        r.placement = {};
        remove_from(running_, j);
        remove_from(t_running_[tenant(j)], j);
    }

    void to_pending(int j) {
        run(j).status = RunStatus::Pending;
        pending_.push_back(j);
        t_pending_[tenant(j)].push_back(j);
    }

    bool is_delay_job(const RunState& r) const {
        if (r.lease_expiries > 0) return r.lease_run_s < opt_.delay_s;
        return r.lease_run_s >= 120 && r.lease_run_s < opt_.delay_s;
    }

    void find_delay_jobs() {
        for (auto& d : delay_) d.clear();
        for (int j : running_) {
            RunState& r = run(j);
            if (!is_delay_job(r)) continue;
            // Judged without the current lease's work, which a preemption would lose.
            r.utilized_gpu_s =
                static_cast<double>(GpuSeconds{gpus(j)} * (r.executed_s - r.lease_run_s));
            refresh_fairness(r);
            delay_[tenant(j)].push_back(j);
        }
        for (std::size_t u = 0; u < used_.size(); ++u) used_[u] = used_gpus(u);
    }

    void admit_arrivals(Seconds t) {
        while (next_arrival_ < w_.jobs.size() && w_.jobs[next_arrival_].submit_s <= t) {
            const int j = static_cast<int>(next_arrival_++);
            RunState& r = run(j);
            if (tenant(j) < 0 || gpus(j) > res_.quotas[tenant(j)]) {  // compat quirk 2
                r.status = RunStatus::Dropped;
                ++done_;
                continue;
            }
            to_pending(j);
            r.last_check_s = t;
            r.first_seen_s = t;
            r.total_pending_s = r.life_s = r.waiting_since_start_s = t - w_.jobs[j].submit_s;
            r.last_checkpoint_s = t;
        }
    }

    void schedule(Seconds t) {
        RoundInput in;
        in.jobs = w_.jobs;
        in.runs = res_.runs;
        in.themis_rho = themis_rho_;
        in.share_order = w_.share_order;
        in.pending_jobs = static_cast<int>(pending_.size());
        in.cluster = &cluster_;
        in.tenants.resize(w_.tenants.size());
        for (std::size_t u = 0; u < in.tenants.size(); ++u) {
            TenantQueue& q = in.tenants[u];
            const TenantServiceSums s = ledgers_[u].window();
            q.quota = res_.quotas[u];
            q.used = used_[u];
            q.index = TenantLedger::scheduling_index(s);
            q.utilized = s.utilized;
            q.entitled = s.entitled;
            q.pending = t_pending_[u];
            q.starving = starving_[u];
            q.delay = delay_[u];
        }
        for (Action& a : astraea_round(in, opt_, placer_, rng_)) {
            if (a.kind == Action::Kind::Preempt) {
                preempt(a.job);
            } else {
                launch(a.job, std::move(a.placement), t);
            }
        }
    }

    void preempt(int j) {
        RunState& r = run(j);
        release(j);
        r.executed_s -= r.lease_run_s;  // the lease's work was not checkpointed
        r.total_pending_s += r.lease_run_s;
        r.lease_run_s = 0;
        ++r.preemptions;
        r.resume_pending = false;
        used_[tenant(j)] -= gpus(j);
        to_pending(j);
    }

    void launch(int j, Placement p, Seconds t) {
        RunState& r = run(j);
        for (const auto& part : p.parts) cluster_.take(part.machine, part.gpus);
        r.placement = std::move(p);
        r.last_check_s = t;
        r.lease_run_s = 0;
        r.waiting_since_start_s = 0;
        if (r.lease_expiries > 0 && r.last_checkpoint_s != t) r.resume_pending = true;
        if (r.first_start_s < 0) r.first_start_s = t;
        remove_from(pending_, j);
        remove_from(t_pending_[tenant(j)], j);
        r.status = RunStatus::Running;
        running_.push_back(j);
        t_running_[tenant(j)].push_back(j);
        used_[tenant(j)] += gpus(j);
    }

    const Workload& w_;
    const SimConfig& c_;
    const AstraeaOptions& opt_;
    ClusterState cluster_;
    ConsolidatePlacer placer_;
    Rng rng_;
    SimResult res_;
    std::vector<double> themis_rho_;
    std::vector<TenantLedger> ledgers_;
    std::vector<int> pending_, running_;
    std::vector<std::vector<int>> t_pending_, t_running_, starving_, delay_;
    std::vector<int> used_;
    std::size_t next_arrival_ = 0;
    std::size_t done_ = 0;
};

}  // namespace

Result<SimResult> simulate(const Workload& workload, const SimConfig& config,
                           const ProgressFn& progress) {
    if (config.options.mode != Mode::Compat)
        return fail("default mode is not implemented yet; use --mode compat");
    auto quotas = tenant_quotas(workload, config.cluster.total_gpus(), config.options.mode);
    if (!quotas) return std::unexpected(quotas.error());
    Engine engine(workload, config, std::move(*quotas));
    return engine.run(progress);
}

}  // namespace astraeus
