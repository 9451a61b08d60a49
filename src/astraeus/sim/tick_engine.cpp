#include "astraeus/sim/tick_engine.hpp"

#include <algorithm>

#include "astraeus/accounting/job_fairness.hpp"
#include "astraeus/sim/engine_base.hpp"

namespace astraeus::detail {
namespace {

class TickEngine : EngineBase {
public:
    TickEngine(const Workload& w, const SimConfig& c, std::vector<int> quotas,
               std::unique_ptr<Placer> placer)
        : EngineBase(w, c, std::move(quotas), std::move(placer), false) {}

    SimResult execute(const ProgressFn& progress) {
        const Seconds tick = opt_.tick_s;
        Seconds t = 0;
        while (next_arrival_ < w_.jobs.size() || !pending_.empty(0) || !running_.empty(0)) {
            if (t % opt_.bucket_s == 0) close_buckets(t);
            // The reference's passes (advance the pending jobs' clocks, then the running ones',
            // then every job's deserved service, then the tenants'), fused into one pass over
            // each list: a job's updates read only its own fields and per-tenant values that
            // these passes do not change, so the results are the same, bit for bit.
            // The running pass also ends leases and jobs and finds the delay jobs, as the
            // reference's later passes over the running list do (its skip included); the tenant
            // ledgers accrue before it, on the GPUs held before any end, as in the reference.
            tenant_shares();
            advance_pending(t, tick);
            accrue_tenant_ledgers(tick);
            advance_running(t, tick);
            admit_arrivals(t);
            schedule(t);
            res_.busy_gpu_s += GpuSeconds{cluster_.total_gpus() - cluster_.free_gpus()} * tick;
            ++res_.rounds;
            if (progress && res_.rounds % 8192 == 0) progress({t, done_, w_.jobs.size()});
            t += tick;
        }
        return finish_result();
    }

private:
    std::vector<TenantServiceSums> sums_;  ///< window_sums()'s, reused every tick
    std::vector<double> share_;            ///< per tenant: a job's fair share this tick
    std::vector<int> pending_gpus_;        ///< per tenant: GPUs of its pending jobs this tick

    const std::vector<TenantServiceSums>& window_sums() {
        sums_.resize(tenants());
        for (std::size_t u = 0; u < tenants(); ++u) sums_[u] = ledgers_[u].window();
        return sums_;
    }

    void close_buckets(Seconds t) {
        for (std::size_t u = 0; u < tenants(); ++u) {
            ledgers_[u].close_bucket();
            sample_tenant(t, u, ledgers_[u].window());
        }
    }

    // Each tenant's per-job fair share this tick (job_fair_share(1, n, n, Q_u): the same
    // expression per job as before, computed once per tenant) and its pending GPUs (summed by
    // advance_pending).
    void tenant_shares() {
        const std::size_t n = tenants();
        share_.resize(n);
        pending_gpus_.assign(n, 0);
        for (std::size_t u = 0; u < n; ++u) {
            const int active = static_cast<int>(t_pending_.size(u) + t_running_.size(u));
            share_[u] = active > 0 ? job_fair_share(1.0, active, active, quota(static_cast<int>(u)))
                                   : 0.0;
        }
    }

    void advance_pending(Seconds t, Seconds dt_accrue) {
        clear_starving();
        for (int j : pending_.live(0)) {
            RunState& r = run(j);
            const Seconds dt = t - r.last_check_s;
            r.total_pending_s += dt;
            r.waiting_since_start_s += dt;
            r.life_s += dt;
            r.last_check_s = t;
            if (r.waiting_since_start_s >= opt_.starvation_s) add_starving(j);
            const int u = tenant(j);
            const int g = gpus(j);
            pending_gpus_[u] += g;
            accrue_deserved(r, g, share_[u], dt_accrue);
            refresh_fairness(r);
        }
        sort_starving();
    }

    void advance_running(Seconds t, Seconds dt_accrue) {
        for (auto& d : delay_) d.clear();
        const std::vector<int>& running = running_.stored(0);  // erased from as it is walked
        std::size_t i = 0;
        while (i < running.size()) {
            const int j = running[i];
            advance_run(j, t, dt_accrue);
            if (end_lease_or_job(j, t)) {
                // The reference's end pass removed j and stepped on: the job that moved into
                // j's place is not looked at for an end until the next tick.
                if (i < running.size()) {
                    advance_run(running[i], t, dt_accrue);
                    note_delay_job(running[i]);
                    ++i;
                }
                continue;
            }
            note_delay_job(j);
            ++i;
        }
    }

    void advance_run(int j, Seconds t, Seconds dt_accrue) {
        RunState& r = run(j);
        const Seconds dt = t - r.last_check_s;
        r.executed_s += dt;
        r.life_s += dt;
        r.last_check_s = t;
        r.lease_run_s += dt;
        const int g = gpus(j);
        accrue_deserved(r, g, share_[tenant(j)], dt_accrue);
        r.utilized_gpu_s = static_cast<double>(GpuSeconds{g} * r.executed_s);
        refresh_fairness(r);
    }

    void accrue_tenant_ledgers(Seconds dt) {
        for (std::size_t u = 0; u < tenants(); ++u) {
            const int demand = used_[u] + pending_gpus_[u];
            ledgers_[u].accrue(quota(static_cast<int>(u)), demand, used_[u], dt);
        }
    }

    // Ends j's job or lease if due; true if j left the running list. The reference walks its
    // running list while removing from it, so the job after each removed one is looked at only
    // in the next tick (kept in compat: advance_running).
    bool end_lease_or_job(int j, Seconds t) {
        RunState& r = run(j);
        if (r.executed_s >= w_.jobs[j].duration_s) {
            finish(j, t);
            return true;
        }
        if (r.lease_run_s >= opt_.lease_s) {
            expire_lease(j, t);
            return true;
        }
        return false;
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

    bool is_delay_job(const RunState& r) const {
        if (r.lease_expiries > 0) return r.lease_run_s < opt_.delay_s;
        return r.lease_run_s >= 120 && r.lease_run_s < opt_.delay_s;
    }

    // A running job still in the list after the end checks, in list order (the reference's
    // pass after its end pass).
    void note_delay_job(int j) {
        RunState& r = run(j);
        if (!is_delay_job(r)) return;
        // Judged without the current lease's work, which a preemption would lose.
        r.utilized_gpu_s = static_cast<double>(GpuSeconds{gpus(j)} * (r.executed_s - r.lease_run_s));
        refresh_fairness(r);
        delay_[tenant(j)].push_back(j);
    }

    void admit_arrivals(Seconds t) {
        while (next_arrival_ < w_.jobs.size() && w_.jobs[next_arrival_].submit_s <= t) {
            const int j = static_cast<int>(next_arrival_++);
            RunState& r = run(j);
            if (tenant(j) < 0 || gpus(j) > quota(tenant(j))) {  // quirk 2: dropped silently
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
        for (Action& a : run_round(window_sums(), t)) {
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
        to_pending(j);
    }

    void launch(int j, Placement p, Seconds t) {
        RunState& r = run(j);
        r.last_check_s = t;
        r.lease_run_s = 0;
        r.longest_wait_s = std::max(r.longest_wait_s, r.waiting_since_start_s);
        r.waiting_since_start_s = 0;
        if (r.lease_expiries > 0 && r.last_checkpoint_s != t) r.resume_pending = true;
        if (r.first_start_s < 0) r.first_start_s = t;
        mark_running(j, std::move(p));
    }
};

}  // namespace

SimResult run_tick_engine(const Workload& w, const SimConfig& c, std::vector<int> quotas,
                          std::unique_ptr<Placer> placer, const ProgressFn& progress) {
    TickEngine e(w, c, std::move(quotas), std::move(placer));
    return e.execute(progress);
}

}  // namespace astraeus::detail
