#include "astraeus/sim/event_engine.hpp"

#include <algorithm>
#include <limits>
#include <queue>

#include "astraeus/accounting/job_fairness.hpp"
#include "astraeus/sched/astraea_round.hpp"
#include "astraeus/sched/job_order.hpp"
#include "astraeus/sched/policy.hpp"
#include "astraeus/sim/engine_base.hpp"
#include "astraeus/sim/goodput_recorder.hpp"
#include "astraeus/sim/lifecycle_model.hpp"

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
        : EngineBase(w, c, std::move(quotas), std::move(placer), true), policy_(std::move(policy)),
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
        // What every policy reads; these vectors keep their size for the whole run. Policies get
        // the real jobs: one that does not predict run times must not read duration_s
        // (sched/policy.hpp; FairerAstraea.PoliciesThatDoNotPredictRunTimesNeverReadThem).
        RoundInput& in = round_in_;
        in.jobs = w_.jobs;
        in.runs = res_.runs;
        in.tenant_info = w_.tenants;
        in.name_rank = tenant_name_ranks(w_.tenants);
        in.quotas = res_.quotas;
        in.used = used_;
        in.active = active_;
        in.tenant_pending = t_pending_.all();  // made live before a round that reads them
        in.tenant_running = t_running_.all();
        in.lease_start_s = lease_start_;
        in.wait_begin_s = wait_begin_;
        in.pend_seq = pend_seq_;
        in.ledger = &ledger_;
        in.sticky_renewals = true;
        if (c.goodput) init_goodput(*c.goodput);
    }

    Result<SimResult> execute(const ProgressFn& progress) {
        if (!w_.jobs.empty()) last_t_ = w_.jobs.front().submit_s;
        while (next_arrival_ < w_.jobs.size() || !pending_.empty(0) || !running_.empty(0) ||
               limbo_ > 0) {
            const Seconds arrival =
                next_arrival_ < w_.jobs.size() ? w_.jobs[next_arrival_].submit_s : kNoTime;
            const Seconds t = std::min({arrival, timers_.next_time(),
                                        mevents_.empty() ? kNoTime : mevents_.top().time});
            if (t == kNoTime)
                return fail("simulation stalled: " + std::to_string(pending_.size(0)) +
                            " jobs pending with no event left (a bug; please report)");
            advance(t);
            expired_now_ = 0;
            round_in_.now = t;
            if (gp_) fire_model_events(t);
            fire_timers(t);
            settle_lease_ends(t);
            admit_arrivals(t);
            if (!arrived_ && expired_now_ > 0 && expired_now_ == pending_.size(0)) {
                renew_in_place(t);
            } else if ((cluster_.free_gpus() > 0 && !pending_.empty(0)) || arrived_ ||
                       (woke_ && policy_->round_on_wake())) {
                schedule(t);
            }
            arrived_ = false;
            woke_ = false;
            if (gp_) settle_marks(t);
            arm_starvation_timers();
            ++res_.rounds;
            if (progress && res_.rounds % 65536 == 0) progress({t, done_, w_.jobs.size()});
        }
        if (gp_) {
            res_.goodput = gp_->finish(res_.end_s);
            if (!gp_->error().empty()) return fail(gp_->error() + " (a bug; please report)");
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
            if (pending_.empty(0) && running_.empty(0) && last_t_ % bucket == 0) {
                const Seconds whole = (t - last_t_) / bucket;
                if (whole > opt_.window_buckets) {
                    const Seconds skip = (whole - opt_.window_buckets) * bucket;
                    decay(skip);  // nothing runs: entitlement accrues, usage decays
                    last_t_ += skip;
                }
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
            decay(dt);
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
            if (gp_ && fault_kind_[ev.job] != kNoFault && fault_at_[ev.job] == t) {
                fault(ev.job, t, fault_kind_[ev.job]);
                continue;
            }
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
            if (gp_) admit_goodput(j);
            become_pending(j, w_.jobs[j].submit_s);
            arrived_ = true;
        }
    }

    void finish(int j, Seconds t) {
        RunState& r = run(j);
        if (gp_) gp_->end(j, t);
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
        expiring_.push_back(j);  // list moves deferred: see settle_lease_ends
    }

    /// Job j's lease ends at t: it has written a checkpoint (its counters and ledgers).
    void checkpoint_at_lease_end(int j, Seconds t) {
        RunState& r = run(j);
        held(j, t);
        ++version_[j];
        // The lease's last checkpoint_s seconds wrote the checkpoint.
        r.executed_s = e0_[j] + (t - lease_start_[j]) - lead(j) - opt_.checkpoint_s;
        if (gp_) {
            r.executed_s = std::max(r.executed_s, e0_[j]);  // a start-up longer than the lease
            consume(j, t);
        }
        r.lease_run_s = t - lease_start_[j];
        res_.overhead_gpu_s += GpuSeconds{gpus(j)} * opt_.checkpoint_s;
        ++r.lease_expiries;
        ++r.checkpoints;
        r.last_checkpoint_s = t;
        count_resume(r);
    }

    /// The leases that ended at t. When nobody else waits and nothing arrives, every policy
    /// renews them on the GPUs they hold (see renew_in_place): renew them without moving them
    /// through the pending lists and the cluster (most lease ends of a lightly loaded cluster;
    /// 2.1 M of full Philly's 2.2 M). Otherwise they join the pending lists now, in the order
    /// their leases ended.
    void settle_lease_ends(Seconds t) {
        if (expiring_.empty()) return;
        const bool arrival =
            next_arrival_ < w_.jobs.size() && w_.jobs[next_arrival_].submit_s <= t;
        if (pending_.empty(0) && !arrival) {
            if (astraea_) renew_astraea_in_place(t);
            else
                for (int j : expiring_) renew_running(j, t);
        } else {
            for (int j : expiring_) {
                release(j);
                become_pending(j, t);
                ++expired_now_;
                if (gp_) mark_lease_end(j, t);
            }
        }
        expiring_.clear();
    }

    /// renew_in_place for ASTRAEA when only the leases ending at t would wait: the same
    /// renewals in the same order (tenant order, each tenant's by its job order) with the same
    /// effects as release, become_pending and launch on the last GPUs, without those round
    /// trips: each job keeps its GPUs, moves to the end of the running lists (where
    /// mark_running would put it) and takes a pending-list sequence number as to_pending would.
    void renew_astraea_in_place(Seconds t) {
        by_tenant_.clear();
        for (int j : expiring_) by_tenant_.push_back({tenant(j), j});
        std::stable_sort(by_tenant_.begin(), by_tenant_.end(),
                         [](auto& a, auto& b) { return a.first < b.first; });
        for (std::size_t k = 0; k < by_tenant_.size();) {
            group_.clear();
            const int u = by_tenant_[k].first;
            for (; k < by_tenant_.size() && by_tenant_[k].first == u; ++k)
                group_.push_back(by_tenant_[k].second);
            for (int j : group_) set_fairness(j, run(j).executed_s);
            rank_pending(opt_.job_order, w_.jobs, res_.runs, group_, renewals_, themis_rho_, rng_,
                         opt_.mode == Mode::Compat ? 0.0 : opt_.improve.gang_weight,
                         opt_.mode != Mode::Compat && opt_.improve.due_first);
            for (std::size_t i = 0; i < renewals_.size(); ++i) {
                const int j = renewals_[i];
                run(j).last_placement = run(j).placement;
                running_.remove(0, j);
                running_.push(0, j);
                t_running_.remove(static_cast<std::size_t>(u), j);
                t_running_.push(static_cast<std::size_t>(u), j);
                pend_seq_[j] = ++next_pend_seq_;
                renew_running(j, t);
            }
        }
    }

    /// As launch() for a job re-selected at its lease end (no restore, not a resume), on the
    /// GPUs it still holds.
    void renew_running(int j, Seconds t) {
        RunState& r = run(j);
        restore_[j] = 0;
        if (gp_) startup_[j] = 0;
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
            renew_list_ = pending_.live(0);
            for (int j : renew_list_) launch(j, run(j).last_placement, t);
            return;
        }
        for (std::size_t u = 0; u < tenants(); ++u) {
            if (t_pending_.empty(u)) continue;
            const std::vector<int>& waiting = t_pending_.live(u);
            for (int j : waiting) set_fairness(j, run(j).executed_s);
            rank_pending(opt_.job_order, w_.jobs, res_.runs, waiting, renewals_, themis_rho_,
                         rng_, opt_.mode == Mode::Compat ? 0.0 : opt_.improve.gang_weight,
                         opt_.mode != Mode::Compat && opt_.improve.due_first);
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
            for (int j : running_.stored(0))
                if (j != JobLists::kGone) releases.push_back({release_at_[j], gpus(j)});
            std::sort(releases.begin(), releases.end());
        }
        if (astraea_) {
            prepare_astraea_round(window_sums(t), t);
            round_in_.running_all = running_.stored(0);  // may hold kGone (RoundInput)
        } else {
            // The baselines read every list whole.
            round_in_.pending_all = pending_.live(0);
            round_in_.running_all = running_.live(0);
            t_pending_.compact_all();
            t_running_.compact_all();
        }
        cluster_.begin_trial();  // the round's placements are tried on cluster_, then undone
        policy_->round(round_in_, cluster_, *placer_, rng_, actions_);
        cluster_.rollback();
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
    /// (the only kind that preempts), or for every tenant with reclaim_within_quota.
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
        // reclaim_within_quota: another tenant's new job may take this tenant's delay jobs.
        if (new_pending_[u] == 0 && !opt_.improve.reclaim_within_quota) return;
        for (int j : t_running_.live(u)) {
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
        if (gp_) {
            consume(j, t);
            gp_->preempt(j, t, t);  // killed mid-lease: no stopping time (see the doc's limits)
        }
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
        r.longest_wait_s = std::max(r.longest_wait_s, t - wait_begin_[j]);
        r.waiting_since_start_s = 0;
        r.lease_run_s = 0;
        lease_start_[j] = t;
        e0_[j] = r.executed_s;
        bool placed = false;
        if (gp_) placed = goodput_launch(j, p, continuing, t);
        mark_running(j, std::move(p));
        if (placed) gp_->place(j, t, r.placement, t + lead(j));
        arm_lease(j, t);
    }

    /// The timer of the lease j begins at t: its completion if the lease is long enough, else
    /// the lease end (the policy decides the lease's length).
    void arm_lease(int j, Seconds t) {
        RunState& r = run(j);
        ++version_[j];
        const Seconds remaining = w_.jobs[j].duration_s - r.executed_s;
        const Seconds lead_s = lead(j);
        const Seconds lease = policy_->lease_s(round_in_, j, lead_s);
        completes_[j] = remaining <= lease - lead_s;
        release_at_[j] = completes_[j] ? t + lead_s + remaining : t + lease;
        if (gp_ && faults_) {
            arm_fault(j, t + lead_s);
            if (fault_kind_[j] != kNoFault) {
                push_timer(fault_at_[j], j);
                return;
            }
        }
        push_timer(release_at_[j], j);
    }

    /// Seconds at the start of j's current lease without progress: restore, then start-up.
    Seconds lead(int j) const { return restore_[j] + (gp_ ? startup_[j] : 0); }

    // --- goodput: lifecycle models (docs/goodput-simulation.md) -----------------------------

    static constexpr std::uint8_t kNoFault = 0, kFailure = 1, kStall = 2;
    enum class ModelKind : std::uint8_t { Release, MachineLoss, Repair };
    struct ModelEvent {
        Seconds time;
        std::uint64_t seq;
        ModelKind kind;
        int id;  ///< job (Release) or machine
        bool operator>(const ModelEvent& o) const {
            return time != o.time ? time > o.time : seq > o.seq;
        }
    };

    void init_goodput(const LifecycleConfig& lc) {
        const std::size_t n = w_.jobs.size();
        model_ = std::make_unique<LifecycleModel>(lc, opt_.seed);
        gp_ = std::make_unique<GoodputRecorder>(
            w_, c_.cluster, c_.cluster_name.empty() ? std::string("default") : c_.cluster_name,
            *model_);
        startup_.assign(n, 0);
        lease_end_mark_.assign(n, -1);
        lease_end_stop_.assign(n, 0);
        failed_attempts_.assign(n, 0);
        for_good_.assign(n, 0);
        faults_ = lc.early_failure_p > 0 || lc.failure_rate_gpu_hour > 0 ||
                  lc.failure_rate_job_hour > 0 || lc.stall_rate_job_hour > 0 ||
                  lc.machine_loss_rate_day > 0;
        fault_kind_.assign(n, kNoFault);
        fault_at_.assign(n, kNoTime);
        stall_onset_.assign(n, 0);
        work_from_.assign(n, 0);
        early_left_.assign(n, kNever);
        fail_left_.assign(n, kNever);
        stall_left_.assign(n, kNever);
        limbo_parts_.resize(n);
        if (faults_) fstream_.assign(n, Stream(0, 0, 0));
        const int machines = c_.cluster.machines();
        down_.assign(static_cast<std::size_t>(machines), 0);
        reserved_.assign(static_cast<std::size_t>(machines), 0);
        if (lc.machine_loss_rate_day > 0 && !w_.jobs.empty()) {
            const Seconds t0 = w_.jobs.front().submit_s;
            for (int m = 0; m < machines; ++m) {
                mstream_.emplace_back(opt_.seed, static_cast<std::uint64_t>(Draw::Machine),
                                      static_cast<std::uint64_t>(m));
                push_model(t0 + model_->machine_loss_after_s(mstream_.back()),
                           ModelKind::MachineLoss, m);
            }
        }
    }

    void push_model(Seconds time, ModelKind kind, int id) {
        if (time >= kNever) return;
        mevents_.push({time, mseq_++, kind, id});
    }

    /// Job j's draws (its own stream): an early failure, the first rate failure, the first stall.
    void admit_goodput(int j) {
        gp_->submit(j, w_.jobs[j].submit_s);
        if (!faults_) return;
        Stream& s = fstream_[j] = Stream(opt_.seed, static_cast<std::uint64_t>(Draw::Failure),
                                         static_cast<std::uint64_t>(j));
        const LifecycleConfig& lc = model_->config();
        const Seconds window = std::min(lc.early_failure_window_s, w_.jobs[j].duration_s);
        const double u = s.uniform();
        if (u < lc.early_failure_p && window > 0)
            early_left_[j] = 1 + static_cast<Seconds>(s.uniform() * static_cast<double>(window - 1));
        fail_left_[j] = model_->rate_failure_after_s(s, gpus(j));
        stall_left_[j] = model_->stall_after_s(s);
    }

    /// The earliest fault of j's lease whose work starts at work_from (before it ends).
    void arm_fault(int j, Seconds work_from) {
        work_from_[j] = work_from;
        fault_kind_[j] = kNoFault;
        fault_at_[j] = kNoTime;
        Seconds best = release_at_[j];
        auto consider = [&](Seconds left, Seconds extra, std::uint8_t kind) {
            if (left >= kNever) return;
            const Seconds at = work_from + left + extra;
            if (at < best) {
                best = at;
                fault_kind_[j] = kind;
                fault_at_[j] = at;
            }
        };
        consider(early_left_[j], 0, kFailure);
        consider(fail_left_[j], 0, kFailure);
        consider(stall_left_[j], model_->config().stall_timeout_s, kStall);
        if (fault_kind_[j] == kStall) stall_onset_[j] = work_from + stall_left_[j];
    }

    /// j's lease stops working at t: its running time counts against its fault draws; draws used
    /// up are redrawn (constant rates: memoryless), the early failure happens once.
    void consume(int j, Seconds t) {
        if (!faults_) return;
        const Seconds worked = std::max<Seconds>(0, t - work_from_[j]);
        work_from_[j] = t;
        Stream& s = fstream_[j];
        if (early_left_[j] < kNever) {
            early_left_[j] -= worked;
            if (early_left_[j] <= 0) early_left_[j] = kNever;
        }
        if (fail_left_[j] < kNever) {
            fail_left_[j] -= worked;
            if (fail_left_[j] <= 0) fail_left_[j] = model_->rate_failure_after_s(s, gpus(j));
        }
        if (stall_left_[j] < kNever) {
            stall_left_[j] -= worked;
            if (stall_left_[j] <= 0) stall_left_[j] = model_->stall_after_s(s);
        }
        fault_kind_[j] = kNoFault;
    }

    /// A failure (kFailure: also a lost machine) or a detected stall (kStall) of running job j
    /// at t: the work since its last checkpoint is lost; it keeps its GPUs for the holding
    /// time, then waits to be placed again.
    void fault(int j, Seconds t, std::uint8_t kind) {
        RunState& r = run(j);
        const Seconds onset = stall_onset_[j];
        // Work kept: the job's own checkpoints since the lease's work began (not after a
        // stall's onset).
        const Seconds worked =
            std::max<Seconds>(0, (kind == kStall ? onset : t) - work_from_[j]);
        const Seconds every = model_->config().job_checkpoint_s;
        const Seconds kept = every > 0 ? worked / every * every : 0;
        if (kind == kStall) {
            // The stall's draw was used (the onset), not the time after it.
            stall_left_[j] = 0;
        }
        consume(j, t);
        if (kind == kStall) gp_->stall(j, onset, t);
        else gp_->fail(j, t);
        // The attempt ended with this fault; the max_attempts-th one ends the job for good
        // (at the release below), so that every simulation ends whatever the rates.
        gp_->count_failed_attempts(++failed_attempts_[j]);
        for_good_[j] = failed_attempts_[j] >= model_->config().max_attempts;
        held(j, t);
        limbo_parts_[j] = r.placement;
        release(j);
        for (const auto& part : limbo_parts_[j].parts) cluster_.take(part.machine, part.gpus);
        ++version_[j];
        r.executed_s = std::min(e0_[j] + kept, w_.jobs[j].duration_s);
        r.total_pending_s += t - lease_start_[j];
        r.lease_run_s = 0;
        r.resume_pending = false;
        ++limbo_;
        const LifecycleConfig& lc = model_->config();
        push_model(t + (kind == kStall ? lc.stall_stop_s : lc.failure_hold_s), ModelKind::Release,
                   j);
    }

    void fire_model_events(Seconds t) {
        while (!mevents_.empty() && mevents_.top().time <= t) {
            const ModelEvent ev = mevents_.top();
            mevents_.pop();
            switch (ev.kind) {
                case ModelKind::Release: {
                    const int j = ev.id;
                    if (for_good_[j]) gp_->fail_for_good(j, t);
                    else gp_->release(j, t);
                    for (const auto& part : limbo_parts_[j].parts) {
                        if (down_[part.machine]) reserved_[part.machine] += part.gpus;
                        else give_back(part.machine, part.gpus);
                    }
                    limbo_parts_[j] = {};
                    --limbo_;
                    if (for_good_[j]) give_up(j, t);
                    else become_pending(j, t);
                    break;
                }
                case ModelKind::MachineLoss: {
                    const int m = ev.id;
                    gp_->count_machine_loss();
                    lost_.clear();
                    for (int j : running_.live(0))
                        for (const auto& part : run(j).placement.parts)
                            if (part.machine == m) {
                                lost_.push_back(j);
                                break;
                            }
                    for (int j : lost_) fault(j, t, kFailure);
                    down_[m] = 1;
                    const int free = cluster_.free_on(m);
                    if (free > 0) {
                        cluster_.take(m, free);
                        reserved_[m] += free;
                    }
                    push_model(t + model_->config().repair_s, ModelKind::Repair, m);
                    break;
                }
                case ModelKind::Repair: {
                    const int m = ev.id;
                    down_[m] = 0;
                    if (reserved_[m] > 0) give_back(m, reserved_[m]);
                    reserved_[m] = 0;
                    push_model(t + model_->machine_loss_after_s(mstream_[m]),
                               ModelKind::MachineLoss, m);
                    break;
                }
            }
        }
    }

    /// Job j failed for good at t (its last attempt failed): it leaves the simulation without
    /// completing (status pending, no end: jobs.csv and the summary count it admitted, not
    /// done; the goodput line counts it failed).
    void give_up(int j, Seconds t) {
        RunState& r = run(j);
        r.status = RunStatus::Pending;
        r.life_s = t - w_.jobs[j].submit_s;
        const int u = tenant(j);
        --active_[u];
        --round_in_.active_jobs;
        demand_[u] -= gpus(j);
        res_.end_s = std::max(res_.end_s, t);
        ++done_;
    }

    void give_back(int machine, int n) {
        Placement p;
        p.parts.push_back({machine, n});
        cluster_.give(p);
    }

    /// j's lease ended at t (not yet known whether it is renewed on the same GPUs). Its last
    /// checkpoint_s seconds wrote the checkpoint: if it is not renewed there, that is the
    /// worker stopping for the preemption (from the lease's start at the earliest).
    void mark_lease_end(int j, Seconds t) {
        lease_end_mark_[j] = t;
        lease_end_stop_[j] = std::max(lease_start_[j], t - opt_.checkpoint_s);
        marked_.push_back(j);
    }

    /// Lease ends at t not renewed on the same GPUs: stopped for preemption, released.
    void settle_marks(Seconds t) {
        for (int j : marked_) {
            if (lease_end_mark_[j] != t) continue;
            lease_end_mark_[j] = -1;
            gp_->preempt(j, lease_end_stop_[j], t);
        }
        marked_.clear();
    }

    /// Goodput side of launch(): whether j is placed anew (a start-up follows). A job
    /// re-selected at its lease end on the same GPUs continues (no events, no start-up).
    bool goodput_launch(int j, const Placement& p, bool continuing, Seconds t) {
        const RunState& r = run(j);
        const bool renewal = continuing && lease_end_mark_[j] == t;
        bool same = renewal && p.parts.size() == r.last_placement.parts.size();
        for (std::size_t k = 0; same && k < p.parts.size(); ++k)
            same = p.parts[k].machine == r.last_placement.parts[k].machine &&
                   p.parts[k].gpus == r.last_placement.parts[k].gpus;
        if (renewal) {
            lease_end_mark_[j] = -1;
            if (!same) gp_->preempt(j, lease_end_stop_[j], t);
        }
        if (same) {
            startup_[j] = 0;
            return false;
        }
        int machines = 0;
        for (std::size_t k = 0; k < p.parts.size(); ++k) {
            bool seen = false;
            for (std::size_t i = 0; i < k; ++i) seen = seen || p.parts[i].machine == p.parts[k].machine;
            machines += !seen;
        }
        startup_[j] = model_->startup_s(std::max(1, machines));
        return true;
    }

    std::unique_ptr<Policy> policy_;
    const bool astraea_;                     ///< the policy uses ASTRAEA's lists
    PolicyLedger ledger_;
    std::vector<int> renew_list_;
    std::vector<std::pair<int, int>> by_tenant_;  ///< (tenant, job) of leases ending now
    std::vector<int> group_;
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
    // Goodput (only with SimConfig::goodput; empty otherwise).
    std::unique_ptr<LifecycleModel> model_;
    std::unique_ptr<GoodputRecorder> gp_;
    bool faults_ = false;                    ///< any failure, stall or loss rate
    std::vector<Seconds> startup_;           ///< start-up seconds of the current lease
    std::vector<Seconds> lease_end_mark_;    ///< lease ended at this time, not yet re-placed
    std::vector<Seconds> lease_end_stop_;    ///< its stop (preemption) if not renewed there
    std::vector<int> marked_;
    std::vector<std::int64_t> failed_attempts_;  ///< attempts ended by a fault, per job
    std::vector<char> for_good_;             ///< the fault in progress is the job's last
    std::vector<std::uint8_t> fault_kind_;
    std::vector<Seconds> fault_at_, stall_onset_, work_from_;
    std::vector<Seconds> early_left_, fail_left_, stall_left_;  ///< running seconds to go
    std::vector<Stream> fstream_, mstream_;
    std::vector<Placement> limbo_parts_;     ///< GPUs a failed/stalled job still holds
    std::size_t limbo_ = 0;
    std::vector<int> lost_;
    std::vector<char> down_;
    std::vector<int> reserved_;              ///< GPUs of a lost machine kept out of use
    std::priority_queue<ModelEvent, std::vector<ModelEvent>, std::greater<>> mevents_;
    std::uint64_t mseq_ = 0;
};

}  // namespace

Result<SimResult> run_event_engine(const Workload& w, const SimConfig& c, std::vector<int> quotas,
                                   std::unique_ptr<Placer> placer, std::unique_ptr<Policy> policy,
                                   const ProgressFn& progress) {
    EventEngine e(w, c, std::move(quotas), std::move(placer), std::move(policy));
    return e.execute(progress);
}

}  // namespace astraeus::detail
