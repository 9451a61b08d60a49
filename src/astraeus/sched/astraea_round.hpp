// One ASTRAEA scheduling round (Ye et al., "ASTRAEA: A Fair Deep Learning Scheduler for
// Multi-tenant GPU Clusters", IEEE TPDS 2022; spec/astraea.md sections 3 and 6b step 10).
// Snapshot in, decisions out: the round reads the tenants' ledgers and queues and returns an
// ordered list of actions (preempt a delay job, start a job on GPUs) that the shell applies in
// order. Pure except for `themis_rho` (the themis order's cache) and the random order's rng.
// Thread safety: one round at a time per input.
#pragma once
#include <functional>
#include <span>
#include <vector>

#include "astraeus/base/rng.hpp"
#include "astraeus/model/cluster.hpp"
#include "astraeus/model/run_state.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/sched/job_order.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/placer.hpp"

namespace astraeus {

/// What the round knows of one tenant.
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
    // Filled by prepare:
    bool prepared = false;
    std::vector<int> pending;      ///< pending, not starving, in queue order
    std::span<const int> starving; ///< starving pending jobs, by submit time (valid for the round)
    std::vector<int> delay;        ///< delay jobs (running, restarted < T_delay ago; sorted in
                                   ///< place into victim order)
    LazyRanking ranked;            ///< `pending` in job order (filled by the round)
};

struct RoundInput {
    std::span<const Job> jobs;
    std::span<const RunState> runs;
    std::span<double> themis_rho;
    std::vector<TenantQueue> tenants;  ///< tenant order
    std::span<const int> share_order;  ///< tie order of phase 1
    int pending_jobs = 0;              ///< pending jobs in the whole cluster
    Seconds now = 0;
    /// A job re-selected at the instant its lease ended keeps its GPUs when they are still
    /// free (default mode; compat re-places it like any job, as the reference does).
    bool sticky_renewals = false;
    /// Prepare and rank every tenant's queues first, in tenant order, whether read or not (the
    /// reference simulator ranks every tenant each tick; themis's cached rho depends on it).
    bool eager = false;
    /// Fills tenant u's pending, starving and delay lists and brings their jobs' fairness up to
    /// date (called at most once per tenant and round).
    std::function<void(std::size_t u, TenantQueue& q)> prepare;
};

struct Action {
    enum class Kind { Preempt, Start };
    Kind kind;
    int job;
    Placement placement;  ///< Start only
};

/// Runs phase 1 (water-filling tenant budgets with the 20 % minimum guarantee and the one-lease
/// projection W' = W + Q*L; quota mode static: budget = Q) and phase 2 (per tenant in tenant
/// order: starving jobs, then the job order; a new job may preempt its tenant's delay jobs;
/// budget check; gang placement; head-of-line block on failure when block scheduling is on or
/// the tenant has starving jobs). `cluster` is a scratch copy of the cluster's free GPUs that
/// the round changes as it goes; `actions` (cleared first) receives the actions in the order
/// they happened, for the shell to apply to the real cluster.
void astraea_round(RoundInput& in, ClusterState& cluster, const AstraeaOptions& opt,
                   const Placer& placer, Rng& rng, std::vector<Action>& actions);

}  // namespace astraeus
