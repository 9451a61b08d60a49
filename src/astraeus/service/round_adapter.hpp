// The service side of a scheduling round: keeps one pool's live runs as the core scheduler sees
// jobs (sched/round.hpp RoundInput: jobs, run states, tenant lists, lease clocks, LTGF ledgers)
// and runs the pool's Policy (ASTRAEA by default, any registry policy) over them on the real
// clock, as src/astraeus/sim/event_engine.cpp does over a trace. Job indexes are stable for the
// life of the adapter (never reused), so that policies keeping cross-round caches stay right.
// Simplifications against the simulator: executed work is the time held while running.
// After a restart the adapter is rebuilt from the store (restore_job, restore_running,
// replay_history) so that the first round decides as a round before the restart would have:
// jobs keep their executed work and preemptions (a job that ran is never "brand new" again),
// running jobs keep their GPUs and lease start, the tenant LTGF ledgers and the jobs' deserved
// service are replayed from the runs' submissions, ends and attempts, and a job restored
// running is not a delay job in the lease it holds at the restart.
// Cost: the pending runs are kept as indexes updated by events (service/pending_index.hpp), so
// a submission is O(log n) and a round does not grow with how long the backlog has waited.
// Thread safety: not thread-safe (the service serialises its calls).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "astraeus/accounting/tenant_ledger.hpp"
#include "astraeus/base/rng.hpp"
#include "astraeus/model/cluster.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"
#include "astraeus/service/pending_index.hpp"

namespace astraeus::service {

/// A decision of a round for the service to apply, in order.
struct Decision {
    enum class Kind { Start, Preempt };
    Kind kind;
    int job;
    Placement placement;  ///< Start: machine indexes of the pool
    bool renewal = false; ///< Start: re-selected at its lease end on the GPUs it held
    Seconds lease_end_s = kNoLeaseEnd;  ///< Start: when its lease ends
};

/// One tenant (workspace) of a pool as the fairness page shows it (RoundAdapter::tenant_views).
struct TenantView {
    std::string name;
    double weight = 1.0;
    int quota_gpus = 0;   ///< its share of the pool's GPUs (by weight)
    int used_gpus = 0;    ///< held by its running jobs now
    int demand_gpus = 0;  ///< asked for by its pending and running jobs now
    TenantServiceSums window;                 ///< over the LTGF window, up to the clock
    std::vector<TenantServiceSums> buckets;   ///< the window's closed buckets, oldest first
    TenantServiceSums current;                ///< the bucket being filled
};

class RoundAdapter {
public:
    /// A copy of this adapter (jobs, run states, lists, ledgers, clock, machines, a copy of the
    /// policy's cross-round state) that decides as this one would; for a forecast run forward
    /// (service/forecast.hpp). O(jobs + machines + tenants). Changes to either leave the other.
    std::unique_ptr<RoundAdapter> fork() const;

    /// A pool of `spec` machines scheduled by `policy` (options from the policy registry).
    static Result<std::unique_ptr<RoundAdapter>> make(ClusterSpec spec, AstraeaOptions options,
                                                      const std::string& placer);

    /// The tenants (workspaces) with their weights; appended ones get new indexes, existing
    /// ones keep theirs (matched by name). Quotas: the pool's GPUs split by weight (largest
    /// remainder).
    void set_tenants(const std::vector<Tenant>& tenants);
    int tenant_index(const std::string& name) const;
    /// Every tenant's pending jobs in this pool; O(1).
    std::size_t pending_total() const { return pending_.all().size(); }
    /// Tenant u's pending jobs (waiting for a placement) in this pool; O(1).
    std::size_t pending_count(int u) const {
        return u >= 0 && static_cast<std::size_t>(u) < pending_.by_tenant().size() ? pending_.by_tenant()[u].size() : 0;
    }

    /// A new job of tenant u (a gang of `gpus`), pending from `submit_s`; its index, or an
    /// error when the pool can never run it (the message is the reason). `gpus_per_worker` > 0:
    /// the gang is gpus / gpus_per_worker workers, each placed on one machine (sched/gang_placement.hpp);
    /// a gang whose workers can never fit the pool's machines is an error.
    Result<int> submit(int u, int gpus, Seconds submit_s, Seconds duration_s, int gpus_per_worker = 0);
    /// Job j's past, restored after a restart: `executed_s` seconds of work done before its
    /// current running stretch, preempted `preemptions` times (a job with either > 0 is not
    /// brand new: it never preempts delay jobs).
    void restore_job(int j, Seconds executed_s, int preemptions);
    /// A job already holding `p` since `lease_start_s` (restored after a restart), with
    /// `executed_s` of work before that. It is not a delay job (one a brand-new job of its tenant
    /// may preempt) until its next lease: its lease began before the restart, in rounds that
    /// did not preempt it.
    void restore_running(int j, const Placement& p, Seconds lease_start_s, Seconds executed_s);

    /// One run's past in the pool for replay_history: its tenant, gang, submission and end
    /// (-1: not ended), the stretches it held GPUs ([from, to), to -1: still holding) and its
    /// job index (-1: ended, not in the adapter).
    struct PastRun {
        int tenant = -1;
        int gpus = 0;
        Seconds submit_s = 0;
        Seconds end_s = -1;
        std::vector<std::pair<Seconds, Seconds>> held;
        int job = -1;
    };
    /// Accrues the tenant LTGF ledgers (entitled, demand, utilized, deserved; buckets closed at
    /// multiples of bucket_s) and the restored jobs' deserved service over [from_s, to_s) at the
    /// rates `past` implies (demand: submitted, not ended; used: holding), as advance() did
    /// before a restart, and sets the clock to to_s. Call once, after the restore_* calls and
    /// before the first round; nothing happens when to_s <= from_s.
    void replay_history(const std::vector<PastRun>& past, Seconds from_s, Seconds to_s);

    /// Moves the clock (ledgers and deserved service) to t (never backwards).
    void advance(Seconds t);
    /// Runs a round at `now` and applies it to the adapter's own lists; the decisions.
    std::vector<Decision> round(Seconds now);

    /// Job j's lease ended at t: it checkpointed and waits (sticky: its own GPUs if re-selected
    /// in the round that follows).
    void lease_end(int j, Seconds t);
    /// Job j gave its GPUs back and waits again (after a failure or a preemption's wind-down).
    void requeue(int j, Seconds t);
    /// Job j gives its GPUs back (if held) and leaves (finished, stopped, failed for good).
    void remove(int j, Seconds t);
    /// Job j is stopping (its owner's stop, its time limit, a failure) at t: it leaves the lists
    /// the rounds see (never preempted, renewed, requeued at a lease end or placed again) but keeps
    /// the GPUs it holds until requeue() (a failure to retry) or remove(). A pending job (stopped
    /// while a preemption winds down) just leaves the pending lists. Idempotent.
    void wind_down(int j, Seconds t);
    bool is_winding_down(int j) const { return leaving_[j] != 0; }

    /// Machine m (pool index) is lost (up = false): its free GPUs, and those its jobs give back
    /// while it is lost, are withheld from the rounds until it is back (up = true).
    void set_machine_up(int m, bool up);
    /// Appends a machine of `gpus` GPUs (a node agent registered it), up; its pool index. The
    /// tenants' quotas are split again over the larger pool.
    int add_machine(int gpus);
    bool machine_up(int m) const { return !down_[m]; }
    /// `gpus` of machine m (pool index) are held by jobs outside the service (Slurm: jobs it did
    /// not submit), from now until the next call (0: none): that many are withheld from the
    /// rounds, at once those free, the rest as the service's own jobs there give theirs back.
    /// Clamped to [0, the machine's GPUs]; out-of-range m is ignored.
    void set_foreign(int m, int gpus);
    /// GPUs of machine m withheld for jobs outside the service now (<= what set_foreign asked).
    int foreign_gpus(int m) const { return foreign_taken_[m]; }

    /// The lease length the policy gives job j starting now (kNoLeaseEnd: none).
    Seconds lease_s(int j);
    /// The next time a pending job's rank rises by waiting (a round is due then), or kNoWake.
    Seconds next_wake_s();
    /// Why pending job j waits, after a round (the first that holds):
    /// - "no machine up fits W x G GPUs today (it needs <machines>)": its gang fits the pool's
    ///   machines only with lost or drained ones among them;
    /// - "waiting for GPUs of <machines>": it would fit now were the lost or drained machines up;
    /// - "GPUs held for the waiting gang <run> of <tenant> (<n> GPUs)": it fits the free GPUs,
    ///   which the rounds keep for that gang (keep_reservation; `run(k)` names job k, empty:
    ///   "job k");
    /// - "GPUs held for a starving run of <tenant>": another tenant's run waited T_starve and
    ///   the round holds GPUs for it (ASTRAEA's reservation);
    /// - "<n> GPUs of <machine> are held by jobs outside Astraeus" (`foreign(m)` when given,
    ///   joined by "; "): it would fit now were the GPUs of set_foreign() free;
    /// - "waiting for quota": it fits the free GPUs, or its tenant's running jobs and it would
    ///   pass the tenant's quota while another tenant holds or asks for GPUs of the pool;
    /// - "waiting for GPUs: all N GPUs of pool P are in use (U by this workspace); next lease end
    ///   in S s" (or "B of N GPUs ... in use (U by this workspace), F free"; "the 1 GPU of pool P
    ///   is in use", "1 of N GPUs ... is in use" in the singular): its tenant alone
    ///   holds and asks for the pool's GPUs (its quota is the whole pool) and its own running jobs
    ///   fill it; N counts the machines up; the lease clause (S: seconds after the last round) only
    ///   when `lease_end` gives a running job's lease end after it;
    /// - "no placement for W x G GPUs": the GPUs it needs are busy.
    /// `machine` names machine m (pool index) with its state, e.g. "gpu-2 (lost)"; empty: "machine m".
    /// `pool` names the pool (empty: "the pool"); `lease_end(k)`: when running job k's lease ends,
    /// on the adapter's clock (< 0 or kNoLeaseEnd: none).
    std::string pending_reason(int j, int workers, int gpus_per_worker,
                               const std::function<std::string(int)>& machine = {},
                               const std::function<std::string(int)>& foreign = {},
                               const std::function<std::string(int)>& run = {}, const std::string& pool = {},
                               const std::function<Seconds(int)>& lease_end = {}) const;

    /// What pending_reason reads of pending job j itself; everything else it reads is the pool's
    /// state (machines, free GPUs, tenants' use and demand, running jobs, the round's reserved
    /// gang). Two jobs of the same kind, asked with the same workers and GPUs per worker, get
    /// the same reason until the adapter changes (service/pending_reasons.hpp memoizes on it).
    struct ReasonKind {
        int tenant = -1;
        int gpus = 0;
        int gpus_per_worker = 0;
        bool starving = false;  ///< ASTRAEA's starving lists
        bool reserved = false;  ///< the gang the last round kept GPUs for (RoundInput::reserved)
        auto operator<=>(const ReasonKind&) const = default;
    };
    ReasonKind reason_kind(int j) const {
        const Job& job = jobs_[static_cast<std::size_t>(j)];
        return {job.tenant, job.gpus, job.gpus_per_worker, pending_.starving(j), in_.reserved == j};
    }

    /// Every running job, in the order they started; every pending job, in the order they
    /// began to wait; the jobs winding down (wind_down) still holding GPUs.
    const std::vector<int>& running_jobs() const { return running_; }
    const std::vector<int>& pending_jobs() const { return pending_.all(); }
    std::vector<int> winding_down_jobs() const;
    /// Seconds of work job j has done by `now` (its running stretch counted up to now).
    Seconds executed_s(int j, Seconds now) const { return executed(j, now); }

    /// Every tenant's quota, use, demand and LTGF ledger at the adapter's clock (read-only).
    std::vector<TenantView> tenant_views() const;
    Seconds bucket_s() const { return opt_.bucket_s; }
    int window_buckets() const { return opt_.window_buckets; }
    /// The adapter's clock (the last advance()), or -1 before the first.
    Seconds clock_s() const { return clock_s_; }

    bool is_pending(int j) const { return runs_[j].status == RunStatus::Pending; }
    bool is_running(int j) const { return runs_[j].status == RunStatus::Running; }
    int free_gpus() const { return cluster_.free_gpus(); }
    const ClusterSpec& spec() const { return spec_; }
    const std::string& policy_name() const { return opt_.policy; }

private:
    RoundAdapter(ClusterSpec spec, AstraeaOptions options, std::unique_ptr<Policy> policy,
                 std::unique_ptr<Placer> placer, std::string placer_name);
    RoundAdapter(const RoundAdapter&) = default;  ///< fork(): the policy and placer copied after
    /// Owns a T; a copy starts empty (fork() gives the copy its own).
    template <class T>
    struct Owned {
        std::unique_ptr<T> p;
        Owned(std::unique_ptr<T> q) : p(std::move(q)) {}
        Owned(const Owned&) {}
        Owned& operator=(const Owned&) = delete;
        T* operator->() const { return p.get(); }
        T& operator*() const { return *p; }
    };
    void to_pending(int j, Seconds t);
    void leave_pending(int j);
    void to_running(int j, Placement p, Seconds t);
    /// If j is running at t: its work up to t, the round input, off the running lists; true then.
    bool stop_running(int j, Seconds t);
    void leave_running(int j, bool give_back = true);
    /// A winding-down job j gives back the GPUs it still held and is no longer leaving.
    void end_leaving(int j);
    void give_back(const Placement& p);
    /// Withholds or returns machine m's GPUs so that foreign_taken_ approaches foreign_want_.
    void settle_foreign(int m);
    /// Whether `job` does not fit the free GPUs now but would were `held[m]` GPUs given back on
    /// each machine m of `machines` (a lost machine's withheld GPUs, those of jobs outside).
    bool fits_only_with(const Job& job, const std::vector<int>& machines, const std::vector<int>& held) const;
    /// Points the round input at the adapter's lists (what every policy hook reads); O(tenants).
    void bind_input(Seconds now);
    /// ASTRAEA's per-tenant summaries for a round at `now` (starving runs promoted first).
    void fill_queues(Seconds now);
    void prepare_tenant(std::size_t u, TenantQueue& q);
    void refresh_fairness_of(int j, Seconds executed);
    Seconds executed(int j, Seconds now) const;

    ClusterSpec spec_;
    AstraeaOptions opt_;
    Owned<Policy> policy_;
    Owned<Placer> placer_;
    std::string placer_name_;
    bool astraea_;
    ClusterState cluster_;
    ClusterState scratch_;
    Rng rng_;

    std::vector<Tenant> tenants_;
    std::vector<int> share_order_, quotas_, used_, active_, demand_;
    std::vector<TenantLedger> ledgers_;
    std::vector<std::vector<int>> t_running_;
    PendingIndex pending_;        ///< pending runs: lists, starving runs, gangs, fresh counts

    std::vector<Job> jobs_;
    std::vector<RunState> runs_;
    std::vector<Seconds> lease_start_, wait_begin_, e0_;
    std::vector<double> themis_rho_;
    std::vector<char> restored_;  ///< per job: holds the lease it held at a restart
    std::vector<char> leaving_;   ///< per job: winding down (wind_down), off the rounds' lists
    std::vector<Placement> leaving_held_;  ///< per job: the GPUs a winding-down job still holds
    std::vector<int> leaving_gpus_;  ///< per tenant: GPUs its winding-down jobs hold (received)
    std::vector<int> running_;
    std::map<int, int> workers_fit_;  ///< GPUs per worker -> workers the machines hold
    std::vector<double> share_;   ///< advance()'s scratch: per tenant, a job's fair share now
    std::vector<char> down_;      ///< per machine: lost
    std::vector<int> withheld_;   ///< per machine: GPUs withheld while lost
    std::vector<int> foreign_want_;   ///< per machine: GPUs held by jobs outside the service
    std::vector<int> foreign_taken_;  ///< per machine: of those, withheld from the rounds now
    PolicyLedger ledger_;
    Seconds clock_s_ = -1;
    Seconds now_ = 0;

    RoundInput in_;
    std::vector<Action> actions_;
    std::vector<int> started_;    ///< round()'s scratch: the jobs it started
};

}  // namespace astraeus::service
