// A scheduling round's snapshot and decisions (DESIGN.md "snapshot in, decisions out"): what
// every Policy reads (the jobs, their run states, the tenants, who is pending and running, lease
// clocks) and the ordered actions it returns (preempt a running job, start a job on GPUs), which
// the shell applies in order. ASTRAEA's extra lists (starving and delay jobs per tenant) are
// filled only for the policies that ask for them. Thread safety: one round at a time per input.
#pragma once
#include <functional>
#include <optional>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "astraeus/base/time.hpp"
#include "astraeus/model/cluster.hpp"
#include "astraeus/model/run_state.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/sched/job_order.hpp"
#include "astraeus/sched/placer.hpp"

namespace astraeus {

/// What an ASTRAEA round knows of one tenant (spec/astraea.md section 3).
/// The queues are filled lazily: the round calls RoundInput::prepare for a tenant the first
/// time it reads them, so a round costs nothing for tenants it never looks at.
struct TenantQueue {
    int quota = 0;                 ///< Q_u, GPUs
    int used = 0;                  ///< GPUs its running jobs hold now
    double index = 1.0;            ///< R_u = U/W now (phase 1 starts from this)
    GpuSeconds utilized = 0;       ///< long-term U_u
    GpuSeconds entitled = 0;       ///< long-term W_u
    int min_gpus = 0;              ///< smallest gang among its pending jobs (INT_MAX if none)
    int new_jobs = 0;              ///< pending jobs that never ran (the only ones that preempt)
    std::size_t starving_jobs = 0; ///< how many of its pending jobs are starving
    /// How many delay jobs (possible victims) it has, known before its queues are prepared;
    /// kUnknown (a shell that does not say): as if it had some.
    static constexpr std::size_t kUnknown = static_cast<std::size_t>(-1);
    std::size_t delay_jobs = kUnknown;
    /// GPU-seconds of entitlement per second used in the one-lease projection of phase 1:
    /// C * s_u / sum(s) with exact entitlements; < 0: the quota Q_u (as published).
    double entitlement_rate = -1;
    // Filled by prepare:
    bool prepared = false;
    std::vector<int> pending;      ///< pending, not starving, in queue order
    std::span<const int> starving; ///< starving pending jobs, by submit time (valid for the round)
    std::vector<int> delay;        ///< delay jobs (running, restarted < T_delay ago; sorted in
                                   ///< place into victim order)
    LazyRanking ranked;            ///< `pending` in job order (filled by the round)
};

/// Cross-round memory a policy keeps (DESIGN.md: in the ledgers, not hidden inside policies, so
/// a run can be replayed): one number per job and one for the run, stored by the shell and
/// written only by the policy's admission and release hooks (gandiva-fair: stride passes).
struct PolicyLedger {
    std::vector<double> job;  ///< per job index; sized by the policy that uses it (on_admit)
    double run = 0;
};

struct RoundInput {
    // --- every policy -------------------------------------------------------------------------
    std::span<const Job> jobs;
    std::span<const RunState> runs;
    std::span<const Tenant> tenant_info;   ///< tenant order: names and weights s_u
    std::span<const int> quotas;           ///< Q_u per tenant
    std::span<const int> used;             ///< GPUs each tenant's running jobs hold now
    std::span<const int> active;           ///< admitted, unfinished jobs per tenant (|A_u|)
    std::span<const std::vector<int>> tenant_pending;  ///< per tenant, in the order they began
    std::span<const std::vector<int>> tenant_running;  ///< to wait / run (list order)
    std::span<const int> pending_all;      ///< every pending job, in the order they joined
    std::span<const std::uint64_t> pend_seq;  ///< per job: when it last joined the pending
                                              ///< lists (increasing along pending_all)
    /// Every running job, list order. ASTRAEA's rounds may get entries < 0 (jobs that left the
    /// list since it was last compacted: skip them); the other policies get live lists.
    std::span<const int> running_all;
    std::span<const Seconds> lease_start_s;  ///< per job: when its current lease began
    std::span<const Seconds> wait_begin_s;   ///< per job: when it last began to wait
    const PolicyLedger* ledger = nullptr;
    int active_jobs = 0;                   ///< sum of `active`
    Seconds now = 0;
    /// A job re-selected at the instant its lease ended keeps its GPUs when they are still
    /// free (default mode; compat re-places it like any job, as the reference does).
    bool sticky_renewals = false;
    // --- ASTRAEA (filled when the policy asks for its lists) ----------------------------------
    std::span<double> themis_rho;          ///< per job for the themis job order (else may be empty)
    std::vector<TenantQueue> tenants;      ///< tenant order
    std::span<const int> share_order;      ///< tie order of phase 1
    /// Each tenant's rank by name (ties settled last; see name_ranks in astraea_round.cpp), kept
    /// by a shell whose tenants do not change; empty: computed at every round.
    std::vector<int> name_rank;
    int pending_jobs = 0;                  ///< pending jobs in the whole cluster
    /// Prepare and rank every tenant's queues first, in tenant order, whether read or not (the
    /// reference simulator ranks every tenant each tick; themis's cached rho depends on it).
    bool eager = false;
    /// Fills tenant u's pending, starving and delay lists and brings their jobs' fairness up to
    /// date (called at most once per tenant and round).
    std::function<void(std::size_t u, TenantQueue& q)> prepare;
    /// --backfill: (time, GPUs) each running job gives back at its completion or lease end,
    /// sorted by time (filled by the shell only when backfill is on).
    std::vector<std::pair<Seconds, int>> releases;
    /// Reservations (AstraeaImprovements::reserve): per job, when its current lease ends (the
    /// policy's own record: lease ends are known without knowing run times); empty: none.
    std::span<const Seconds> lease_end_s;
    /// Written by the round: jobs it started on held GPUs, each with the time its lease must
    /// end by (the reserved start), for the policy's lease_s.
    std::vector<std::pair<int, Seconds>> lease_until;
    /// Reservations: the head gang the last round held GPUs for (-1: none), read and written by
    /// the round; a shell keeps it between rounds (the RoundInput is reused). While that job
    /// waits and its tenant stays under its share, the next rounds hold GPUs for it too, even
    /// when another job of its tenant now ranks first: otherwise the held GPUs go back to a job
    /// re-selected at its lease end and the hold was idle GPUs for nothing.
    int reserved = -1;
};

struct Action {
    enum class Kind { Preempt, Start };
    Kind kind;
    int job;
    Placement placement;  ///< Start only
};

/// Places gang j on `cluster` (taking its GPUs): a job re-selected at the instant its lease
/// ended first tries its own last GPUs (when `in.sticky_renewals`), else `placer` chooses.
/// Empty when it does not fit (the cluster is then unchanged).
std::optional<Placement> place_job(const RoundInput& in, ClusterState& cluster,
                                   const Placer& placer, int j);

}  // namespace astraeus
