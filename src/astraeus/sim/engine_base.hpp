// Shared state and steps of the two simulator engines (tick_engine, event_engine): the job
// lists in the reference simulator's list order, the cluster, the ledgers, and applying a
// round's actions. Internal to sim/. Thread safety: one engine per thread.
#pragma once
#include <memory>
#include <vector>

#include "astraeus/accounting/tenant_ledger.hpp"
#include "astraeus/base/rng.hpp"
#include "astraeus/sched/astraea_round.hpp"
#include "astraeus/sched/placer.hpp"
#include "astraeus/sim/engine.hpp"
#include "astraeus/sim/job_lists.hpp"

namespace astraeus::detail {

class EngineBase {
protected:
    /// `tombstone_lists`: O(1) removals from the pending and running lists (JobLists); off
    /// for the compat engine, whose order of list walks depends on erasing at once.
    EngineBase(const Workload& w, const SimConfig& c, std::vector<int> quotas,
               std::unique_ptr<Placer> placer, bool tombstone_lists);
    virtual ~EngineBase() = default;
    /// Fills tenant u's queues for a round (RoundInput::prepare): here, pending jobs not in a
    /// starving list, the starving list and the delay list as they stand.
    virtual void prepare_tenant(std::size_t u, TenantQueue& q);

    RunState& run(int j) { return res_.runs[j]; }
    int tenant(int j) const { return w_.jobs[j].tenant; }
    int gpus(int j) const { return w_.jobs[j].gpus; }
    int quota(int u) const { return res_.quotas[u]; }
    std::size_t tenants() const { return w_.tenants.size(); }

    /// Appends j to the pending lists (global and its tenant's).
    void to_pending(int j);
    /// Gives j's GPUs back and removes it from the running lists.
    void release(int j);
    /// Takes p's GPUs for j, moves it from the pending to the running lists.
    void mark_running(int j, Placement p);
    /// Counts a resume started since the last checkpoint (the reference counts it at the next
    /// lease end or completion).
    static void count_resume(RunState& r);
    /// Records a per-tenant sample (F_u, R_u, GPUs) for time t from the given window sums.
    void sample_tenant(Seconds t, std::size_t u, const TenantServiceSums& s);
    /// Runs one ASTRAEA round over the current lists; starving_/delay_ must be filled and
    /// every pending and delay job's fairness up to date. The actions are valid until the
    /// next call.
    std::vector<Action>& run_round(const std::vector<TenantServiceSums>& sums, Seconds now);
    /// Fills round_in_ for an ASTRAEA round at `now` (run_round without running it).
    void prepare_astraea_round(const std::vector<TenantServiceSums>& sums, Seconds now);
    /// The starving lists: clear, add (in pending-list order), then sort by submit (stable).
    void clear_starving();
    void add_starving(int j);
    void sort_starving();
    /// Adds j to its tenant's starving list at its place (by submit, then pending-list order).
    void insert_starving(int j);
    /// The starving lists' order: by submit time, then by when the job joined the pending lists.
    auto starving_before() const {
        return [this](int a, int b) {
            const Seconds sa = w_.jobs[a].submit_s, sb = w_.jobs[b].submit_s;
            return sa != sb ? sa < sb : pend_seq_[a] < pend_seq_[b];
        };
    }
    /// Smallest gang among tenant u's pending jobs (INT_MAX if none).
    int min_pending_gpus(std::size_t u) const;
    static bool is_new(const RunState& r) { return r.executed_s == 0 && r.preemptions == 0; }
    /// The result, with each tenant's F_u over the whole run.
    SimResult finish_result();

    const Workload& w_;
    const SimConfig& c_;
    const AstraeaOptions& opt_;
    ClusterState cluster_;
    std::unique_ptr<Placer> placer_;
    Rng rng_;
    SimResult res_;
    std::vector<double> themis_rho_;  ///< per job with the themis job order; empty otherwise
    std::vector<TenantLedger> ledgers_;
    /// AstraeaImprovements: each tenant's exact entitlement rate C * s_u / sum(s) (GPUs), and
    /// its usage and entitlement decayed with the index half-life (GPU-seconds; event engine).
    std::vector<double> exact_share_, decayed_used_, decayed_entitled_;
    AstraeaImprovements improve_;                 ///< in effect (none in compat mode)
    /// Decays the usage and entitlement sums over dt seconds at the given rates (the tenants'
    /// GPUs in use now); no-op unless the index half-life is on.
    void decay(Seconds dt);
    /// decay()'s factors for the last dt (2^(-dt/h) and its gain): instants often repeat a gap.
    Seconds decay_dt_ = -1;
    double decay_keep_ = 1.0, decay_gain_ = 0.0;
    /// Global lists (list 0; reference order) and per-tenant lists (list u).
    JobLists pending_, running_, t_pending_, t_running_;
    std::vector<std::vector<int>> starving_, delay_;
    std::vector<int> used_;                       ///< GPUs held per tenant
    std::vector<char> starving_mark_;             ///< per job: in a starving list now
    std::vector<std::uint64_t> pend_seq_;         ///< per job: when it joined the pending lists
    std::uint64_t next_pend_seq_ = 0;
    std::vector<std::vector<std::pair<int, int>>> pending_gangs_;  ///< per tenant: (g, count)
    std::vector<int> new_pending_;                ///< per tenant: pending jobs that never ran
    RoundInput round_in_;                         ///< reused between rounds
    std::vector<Action> actions_;
    std::size_t next_arrival_ = 0;
    std::size_t done_ = 0;
};

}  // namespace astraeus::detail
