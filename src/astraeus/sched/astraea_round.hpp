// One ASTRAEA scheduling round (Ye et al., "ASTRAEA: A Fair Deep Learning Scheduler for
// Multi-tenant GPU Clusters", IEEE TPDS 2022; spec/astraea.md sections 3 and 6b step 10).
// Snapshot in, decisions out (sched/round.hpp): the round reads the tenants' ledgers and queues
// and returns an ordered list of actions (preempt a delay job, start a job on GPUs) that the
// shell applies in order. Pure except for `themis_rho` (the themis order's cache) and the
// random order's rng. ASTRAEA runs as a Policy through policies/astraea.hpp.
// Thread safety: one round at a time per input.
#pragma once
#include <span>
#include <vector>

#include "astraeus/base/rng.hpp"
#include "astraeus/model/cluster.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/placer.hpp"
#include "astraeus/sched/round.hpp"

namespace astraeus {

/// Runs phase 1 (water-filling tenant budgets with the 20 % minimum guarantee and the one-lease
/// projection W' = W + Q*L; quota mode static: budget = Q) and phase 2 (per tenant in tenant
/// order: starving jobs, then the job order; a new job may preempt its tenant's delay jobs;
/// budget check; gang placement; head-of-line block on failure when block scheduling is on or
/// the tenant has starving jobs). `cluster` is a scratch copy of the cluster's free GPUs that
/// the round changes as it goes; `actions` (cleared first) receives the actions in the order
/// they happened, for the shell to apply to the real cluster.
void astraea_round(RoundInput& in, ClusterState& cluster, const AstraeaOptions& opt,
                   const Placer& placer, Rng& rng, std::vector<Action>& actions);

/// Each tenant's rank when sorted by name (ties: tenant order): the stable id that settles
/// phase-1 and phase-2 ties last with history ties. For RoundInput::name_rank.
std::vector<int> tenant_name_ranks(std::span<const Tenant> tenants);

}  // namespace astraeus
