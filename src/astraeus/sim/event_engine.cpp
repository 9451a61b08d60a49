#include "astraeus/sim/event_engine.hpp"

#include <algorithm>
#include <limits>
#include <queue>

#include "astraeus/accounting/job_fairness.hpp"
#include "astraeus/sched/job_order.hpp"
#include "astraeus/sched/policy.hpp"
#include "astraeus/sim/engine_base.hpp"

namespace astraeus::detail {
namespace {

constexpr Seconds kNoTime = std::numeric_limits<Seconds>::max();

/// A timed event: a running job's completion or lease end, or a pending job's wake-up (ASTRAEA:
/// its starvation threshold). Stale entries (the job changed state since) are skipped by their version.
struct Timer {
    Seconds time;
    std::uint64_t seq;
    int job;
    std::uint32_t version;
    bool operator>(const Timer& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

/// Timers in (time, seq) order. Most are pushed in time order (a lease of the same term begun
/// now ends after every lease begun earlier): those go to a FIFO, the others to a binary heap;
/// the next timer is the earlier of the two fronts.
class TimerQueue {
public:
    void push(const Timer& t) {
        if (fifo_head_ == fifo_.size() || fifo_.back().time <= t.time) {
            if (fifo_head_ == fifo_.size()) {
                fifo_.clear();
                fifo_head_ = 0;
            }
            fifo_.push_back(t);
        } else {
            heap_.push(t);
        }
    }
    Seconds next_time() const {
        const Seconds a = fifo_head_ < fifo_.size() ? fifo_[fifo_head_].time : kNoTime;
        const Seconds b = heap_.empty() ? kNoTime : heap_.top().time;
        return std::min(a, b);
    }
    /// Removes and returns the next timer; requires next_time() != kNoTime.
    Timer pop() {
        const bool from_fifo =
            fifo_head_ < fifo_.size() && (heap_.empty() || heap_.top() > fifo_[fifo_head_]);
        if (!from_fifo) {
            const Timer t = heap_.top();
            heap_.pop();
            return t;
        }
        const Timer t = fifo_[fifo_head_++];
        if (fifo_head_ > 4096 && fifo_head_ * 2 > fifo_.size()) {  // reclaim the consumed part
            fifo_.erase(fifo_.begin(), fifo_.begin() + static_cast<std::ptrdiff_t>(fifo_head_));
            fifo_head_ = 0;
        }
        return t;
    }

private:
    std::vector<Timer> fifo_;
    std::size_t fifo_head_ = 0;
    std::priority_queue<Timer, std::vector<Timer>, std::greater<>> heap_;
};

class EventEngine : EngineBase {
public:
    EventEngine(const Workload& w, const SimConfig& c, std::vector<int> quotas,
                std::unique_ptr<Placer> placer, std::unique_ptr<Policy> policy)
        : EngineBase(w, c, std::move(quotas), std::move(placer)), policy_(std::move(policy)),
          astraea_(policy_->astraea_lists()) {
        const std::size_t n = w.jobs.size();
        lease_start_.assign(n, 0);
        release_at_.assign(n, 0);
        e0_.assign(n, 0);
        restore_.assign(n, 0);
        wait_begin_.assign(n, 0);
        d_base_.assign(n, 0);
        gslot_.assign(n, 0);
        version_.assign(n, 0);
        completes_.assign(n, 0);
        integrals_.resize(tenants());
        active_.assign(tenants(), 0);
        demand_.assign(tenants(), 0);
        ledger_.job.assign(n, 0.0);
        // What every policy reads; these vectors keep their size for the whole run.
        RoundInput& in = round_in_;
        in.jobs = w_.jobs;
        in.runs = res_.runs;
        in.tenant_info = w_.tenants;
        in.quotas = res_.quotas;
        in.used = used_;
        in.active = active_;
        in.tenant_pending = t_pending_;
        in.tenant_running = t_running_;
        in.lease_start_s = lease_start_;
        in.wait_begin_s = wait_begin_;
        in.pend_seq = pend_seq_;
        in.ledger = &ledger_;
        in.sticky_renewals = true;
    }

    Result<SimResult> execute(const ProgressFn& progress) {
        if (!w_.jobs.empty()) last_t_ = w_.jobs.front().submit_s;
        while (next_arrival_ < w_.jobs.size() || !pending_.empty() || !running_.empty()) {
            const Seconds arrival =
                next_arrival_ < w_.jobs.size() ? w_.jobs[next_arrival_].submit_s : kNoTime;
            const Seconds t = std::min(arrival, timers_.next_time());
            if (t == kNoTime)
                return fail("simulation stalled: " + std::to_string(pending_.size()) +
                            " jobs pending with no event left (a bug; please report)");
            advance(t);
            expired_now_ = 0;
            round_in_.now = t;
            fire_timers(t);
            settle_lease_ends(t);
            admit_arrivals(t);
            if (!arrived_ && expired_now_ > 0 && expired_now_ == pending_.size()) {
                renew_in_place(t);
            } else if ((cluster_.free_gpus() > 0 && !pending_.empty()) || arrived_ ||
                       (woke_ && policy_->round_on_wake())) {
                schedule(t);
            }
            arrived_ = false;
            woke_ = false;
            arm_starvation_timers();
            ++res_.rounds;
            if (progress && res_.rounds % 65536 == 0) progress({t, done_, w_.jobs.size()});
        }
        return finish_result();
    }

private:
    // --- time and ledgers -------------------------------------------------------------------

    double fraction_of_bucket(Seconds t) const {
        return static_cast<double>(t % opt_.bucket_s) / static_cast<double>(opt_.bucket_s);
    }

    std::vector<TenantServiceSums> window_sums(Seconds t) const {
        std::vector<TenantServiceSums> s;
        s.reserve(tenants());
        for (const auto& l : ledgers_) s.push_back(l.window(fraction_of_bucket(t)));
        return s;
    }

    /// Moves the clock to t: tenant ledgers (split at bucket boundaries), the per-tenant
    /// deserved-service integrals, busy GPU-time.
    void advance(Seconds t) {
        while (last_t_ < t) {
            // An idle cluster over a long gap: jump to `window` buckets before t. The buckets
            // skipped would leave the window before t anyway (and hold only entitlement), so
            // the window stays exact; they get no samples (costs stay tied to events, not to
            // the span of time).
            const Seconds bucket = opt_.bucket_s;
            if (pending_.empty() && running_.empty() && last_t_ % bucket == 0) {
                const Seconds whole = (t - last_t_) / bucket;
                if (whole > opt_.window_buckets) last_t_ += (whole - opt_.window_buckets) * bucket;
            }
            const Seconds boundary = (last_t_ / opt_.bucket_s + 1) * opt_.bucket_s;
            const Seconds end = std::min(t, boundary);
            const Seconds dt = end - last_t_;
            for (std::size_t u = 0; u < tenants(); ++u) {
                ledgers_[u].accrue(quota(static_cast<int>(u)), demand_[u], used_[u], dt);
                if (active_[u] == 0) continue;
                const double share = job_fair_share(1.0, active_[u], active_[u], quota(int(u)));
                for (auto& [g, integral] : integrals_[u])
                    integral += std::min(static_cast<double>(g), share) * static_cast<double>(dt);
            }
            res_.busy_gpu_s += GpuSeconds{cluster_.total_gpus() - cluster_.free_gpus()} * dt;
            last_t_ = end;
            if (end == boundary) {
                for (std::size_t u = 0; u < tenants(); ++u) {
                    ledgers_[u].close_bucket();
                    sample_tenant(end, u, ledgers_[u].window());
                }
            }
        }
    }

    /// D_j now: the tenant's integral of min(g, share) since j was admitted.
    double deserved(int j) const {
        return integrals_[tenant(j)][gslot_[j]].second - d_base_[j];
    }

    void set_fairness(int j, Seconds executed_s) {
        RunState& r = run(j);
        r.deserved_gpu_s = deserved(j);
        r.utilized_gpu_s = static_cast<double>(GpuSeconds{gpus(j)} * executed_s);
        refresh_fairness(r);
    }

    void push_timer(Seconds time, int j) { timers_.push({time, seq_++, j, version_[j]}); }

    // --- events ------------------------------------------------------------------------------

    void fire_timers(Seconds t) {
        while (timers_.next_time() == t) {
            const Timer ev = timers_.pop();
            if (ev.version != version_[ev.job]) continue;
            const RunState& r = run(ev.job);
            if (r.status == RunStatus::Pending) {  // a wake-up: the job's rank rose
                if (astraea_) insert_starving(ev.job);  // its starvation threshold
                woke_ = true;
                continue;
            }
            if (r.status != RunStatus::Running) continue;
            if (completes_[ev.job]) {
                finish(ev.job, t);
            } else {
                end_lease(ev.job, t);
            }
        }
    }

    void admit_arrivals(Seconds t) {
        while (next_arrival_ < w_.jobs.size() && w_.jobs[next_arrival_].submit_s <= t) {
            const int j = static_cast<int>(next_arrival_++);
            RunState& r = run(j);
            // Jobs that could never start: larger than the cluster, or refused by the policy
            // (a gang larger than a static quota).
            const bool too_big = tenant(j) >= 0 && gpus(j) > cluster_.total_gpus();
            const bool over_static = tenant(j) >= 0 && !too_big && !policy_->admits(round_in_, j);
            if (tenant(j) < 0 || too_big || over_static) {
                r.status = RunStatus::Dropped;
                if (too_big) ++res_.dropped_too_big;
                else if (over_static) ++res_.dropped_over_static_quota;
                ++done_;
                continue;
            }
            const int u = tenant(j);
            auto& slots = integrals_[u];
            auto it = std::find_if(slots.begin(), slots.end(),
                                   [&](auto& s) { return s.first == gpus(j); });
            if (it == slots.end()) it = slots.insert(slots.end(), {gpus(j), 0.0});
            gslot_[j] = static_cast<int>(it - slots.begin());
            d_base_[j] = it->second;
            ++active_[u];
            ++round_in_.active_jobs;
            demand_[u] += gpus(j);
            policy_->on_admit(round_in_, j, ledger_);
            r.first_seen_s = t;
            r.last_checkpoint_s = -1;
            become_pending(j, w_.jobs[j].submit_s);
            arrived_ = true;
        }
    }

    void finish(int j, Seconds t) {
        RunState& r = run(j);
        held(j, t);
        release(j);
        ++version_[j];
        r.status = RunStatus::Done;
        r.end_s = t;
        r.executed_s = w_.jobs[j].duration_s;
        r.life_s = t - w_.jobs[j].submit_s;
        set_fairness(j, r.executed_s);
        count_resume(r);
        const int u = tenant(j);
        --active_[u];
        --round_in_.active_jobs;
        demand_[u] -= gpus(j);
        res_.end_s = std::max(res_.end_s, t);
        ++done_;
    }

    /// Job j stops holding its GPUs at t: its last run's length, the policy's ledger.
    void held(int j, Seconds t) {
        run(j).last_run_s = t - lease_start_[j];
        policy_->on_release(round_in_, j, t - lease_start_[j], ledger_);
    }

    void end_lease(int j, Seconds t) {
        checkpoint_at_lease_end(j, t);
        if (!astraea_) {
            expiring_.push_back(j);  // list moves deferred: see settle_lease_ends
            return;
        }
        release(j);
        become_pending(j, t);
        ++expired_now_;
    }

    /// Job j's lease ends at t: it has written a checkpoint (its counters and ledgers).
    void checkpoint_at_lease_end(int j, Seconds t) {
        RunState& r = run(j);
        held(j, t);
        ++version_[j];
        // The lease's last checkpoint_s seconds wrote the checkpoint.
        r.executed_s = e0_[j] + (t - lease_start_[j]) - restore_[j] - opt_.checkpoint_s;
        r.lease_run_s = t - lease_start_[j];
        res_.overhead_gpu_s += GpuSeconds{gpus(j)} * opt_.checkpoint_s;
        ++r.lease_expiries;
        ++r.checkpoints;
        r.last_checkpoint_s = t;
        count_resume(r);
    }

    /// Non-ASTRAEA policies: the leases that ended at t. When nobody else waits and nothing
    /// arrives, every policy renews them on the GPUs they hold (see renew_in_place): renew them
    /// without moving them through the pending lists (most lease ends of a lightly loaded
    /// cluster). Otherwise they join the pending lists now, in the order their leases ended.
    void settle_lease_ends(Seconds t) {
        if (expiring_.empty()) return;
        const bool arrival =
            next_arrival_ < w_.jobs.size() && w_.jobs[next_arrival_].submit_s <= t;
        if (pending_.empty() && !arrival) {
            for (int j : expiring_) renew_running(j, t);
        } else {
            for (int j : expiring_) {
                release(j);
                become_pending(j, t);
                ++expired_now_;
            }
        }
        expiring_.clear();
    }

    /// As launch() for a job re-selected at its lease end (no restore, not a resume), on the
    /// GPUs it still holds.
    void renew_running(int j, Seconds t) {
        RunState& r = run(j);
        restore_[j] = 0;
        wait_begin_[j] = t;
        r.waiting_since_start_s = 0;
        r.lease_run_s = 0;
        lease_start_[j] = t;
        e0_[j] = r.executed_s;
        arm_lease(j, t);
    }

    /// Every pending job's lease has just ended and nothing arrived: a round would re-select
    /// them all (their own GPUs are free and no one else waits; every policy is
    /// work-conserving) and, placements being sticky for renewals, on the same GPUs. Renew
    /// them directly: ASTRAEA in tenant order, each tenant's in its job order, as its round
    /// would; other policies in pending-list order (each job takes back its own GPUs).
    void renew_in_place(Seconds t) {
        if (!astraea_) {
            renew_list_ = pending_;
            for (int j : renew_list_) launch(j, run(j).last_placement, t);
            return;
        }
        for (std::size_t u = 0; u < tenants(); ++u) {
            if (t_pending_[u].empty()) continue;
            for (int j : t_pending_[u]) set_fairness(j, run(j).executed_s);
            rank_pending(opt_.job_order, w_.jobs, res_.runs, t_pending_[u], renewals_, themis_rho_,
                         rng_);
            for (std::size_t k = 0; k < renewals_.size(); ++k) {
                const int j = renewals_[k];
                launch(j, run(j).last_placement, t);
            }
        }
    }

    void become_pending(int j, Seconds t) {
        wait_begin_[j] = t;
        to_pending(j);
        new_waiters_.push_back(j);
    }

    /// Wake-up timers (ASTRAEA: starvation thresholds) for the jobs that began to wait at this
    /// instant and still wait (most jobs whose lease ends are re-selected at once and need
    /// none).
    void arm_starvation_timers() {
        for (int j : new_waiters_) {
            if (run(j).status != RunStatus::Pending) continue;
            const Seconds after = policy_->wake_after_s(round_in_, j);
            if (after != kNoWake) push_timer(wait_begin_[j] + after, j);
        }
        new_waiters_.clear();
    }

    // --- the round ---------------------------------------------------------------------------

    void schedule(Seconds t) {
        now_ = t;
        if (opt_.backfill) {
            auto& releases = round_in_.releases;
            releases.clear();
            for (int j : running_) releases.push_back({release_at_[j], gpus(j)});
            std::sort(releases.begin(), releases.end());
        }
        if (astraea_) {
            prepare_astraea_round(window_sums(t), t);
        } else {
            round_in_.pending_all = pending_;
            round_in_.running_all = running_;
        }
        scratch_cluster_ = cluster_;
        policy_->round(round_in_, scratch_cluster_, *placer_, rng_, actions_);
        for (Action& a : actions_) {
            if (a.kind == Action::Kind::Preempt) {
                preempt(a.job, t);
            } else {
                launch(a.job, std::move(a.placement), t);
            }
        }
    }

    /// A tenant's queues for the round at now_: pending jobs get their fairness (and life, for
    /// themis) brought up to now; delay jobs are looked for only if the tenant has a new job
    /// (the only kind that preempts).
    void prepare_tenant(std::size_t u, TenantQueue& q) override {
        EngineBase::prepare_tenant(u, q);
        const bool by_fairness = opt_.job_order == JobOrder::Fairness ||
                                 opt_.job_order == JobOrder::DiscFairness ||
                                 opt_.job_order == JobOrder::JobReward ||
                                 opt_.job_order == JobOrder::Themis;
        if (by_fairness) {
            for (int j : q.pending) {
                set_fairness(j, run(j).executed_s);
                run(j).life_s = now_ - w_.jobs[j].submit_s;
            }
        }
        q.delay.clear();
        if (new_pending_[u] == 0) return;
        for (int j : t_running_[u]) {
            const Seconds in_lease = now_ - lease_start_[j];
            const bool delay = run(j).lease_expiries > 0
                                   ? in_lease < opt_.delay_s
                                   : in_lease >= 120 && in_lease < opt_.delay_s;
            if (!delay) continue;
            set_fairness(j, e0_[j]);  // judged without the work a preemption would lose
            q.delay.push_back(j);
        }
    }

    void preempt(int j, Seconds t) {
        RunState& r = run(j);
        held(j, t);
        release(j);
        ++version_[j];
        r.executed_s = e0_[j];  // the lease's work was not checkpointed
        r.total_pending_s += t - lease_start_[j];
        r.lease_run_s = 0;
        ++r.preemptions;
        r.resume_pending = false;
        become_pending(j, t);
    }

    void launch(int j, Placement p, Seconds t) {
        RunState& r = run(j);
        const bool continuing = r.last_checkpoint_s == t;  // re-selected at its lease end
        restore_[j] = r.executed_s > 0 && !continuing ? opt_.restore_s : 0;
        res_.overhead_gpu_s += GpuSeconds{gpus(j)} * restore_[j];
        if (r.lease_expiries > 0 && !continuing) r.resume_pending = true;
        if (r.first_start_s < 0) r.first_start_s = t;
        r.total_pending_s += t - wait_begin_[j];
        r.waiting_since_start_s = 0;
        r.lease_run_s = 0;
        lease_start_[j] = t;
        e0_[j] = r.executed_s;
        mark_running(j, std::move(p));
        arm_lease(j, t);
    }

    /// The timer of the lease j begins at t: its completion if the lease is long enough, else
    /// the lease end (the policy decides the lease's length).
    void arm_lease(int j, Seconds t) {
        RunState& r = run(j);
        ++version_[j];
        const Seconds remaining = w_.jobs[j].duration_s - r.executed_s;
        const Seconds lease = policy_->lease_s(round_in_, j, restore_[j]);
        completes_[j] = remaining <= lease - restore_[j];
        release_at_[j] = completes_[j] ? t + restore_[j] + remaining : t + lease;
        push_timer(release_at_[j], j);
    }

    std::unique_ptr<Policy> policy_;
    const bool astraea_;                     ///< the policy uses ASTRAEA's lists
    PolicyLedger ledger_;
    std::vector<int> renew_list_;
    std::vector<int> expiring_;              ///< non-ASTRAEA lease ends at this instant
    Seconds last_t_ = 0;
    Seconds now_ = 0;                        ///< time of the round being prepared
    bool arrived_ = false;
    bool woke_ = false;                      ///< a pending job's wake-up fired at this instant
    std::size_t expired_now_ = 0;           ///< leases ended at the current instant
    LazyRanking renewals_;
    std::vector<int> new_waiters_;
    std::uint64_t seq_ = 0;
    TimerQueue timers_;
    std::vector<Seconds> lease_start_, release_at_, e0_, restore_, wait_begin_;
    std::vector<double> d_base_;
    std::vector<int> gslot_;
    std::vector<std::uint32_t> version_;
    std::vector<char> completes_;
    std::vector<std::vector<std::pair<int, double>>> integrals_;  ///< per tenant: (g, integral)
    std::vector<int> active_, demand_;
};

}  // namespace

Result<SimResult> run_event_engine(const Workload& w, const SimConfig& c, std::vector<int> quotas,
                                   std::unique_ptr<Placer> placer, std::unique_ptr<Policy> policy,
                                   const ProgressFn& progress) {
    EventEngine e(w, c, std::move(quotas), std::move(placer), std::move(policy));
    return e.execute(progress);
}

}  // namespace astraeus::detail
