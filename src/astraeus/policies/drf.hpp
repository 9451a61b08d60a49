// DRF: Dominant Resource Fairness (Ghodsi, Zaharia, Hindman, Konwinski, Shenker, Stoica, NSDI'11)
// with GPUs as the only resource, i.e. instantaneous weighted max-min fairness between tenants,
// as the GPU-cluster papers use it as a baseline (spec/astraea.md section 8; e.g. Mahajan et al.,
// Themis, NSDI'20; Ye et al., ASTRAEA, IEEE TPDS 2022).
//
// Every round serves the tenant with the least GPUs-in-use / weight (x_u = used_u / s_u; ties:
// tenant order) its next job (submit order inside a tenant), recomputing x after each start;
// a job that does not fit is skipped (the tenant's later jobs are still tried, except gangs as
// large or larger, which would fail too, for the rest of the round). A job of tenant
// u that does not fit the free GPUs preempts running jobs of tenants v whose x_v exceeds u's
// share after the start, (used_u + g) / s_u, the tenant with the largest x_v first, its youngest
// lease first, until the gang places (or gives up and takes nothing). That strict inequality
// means two tenants never take the same GPUs back and forth. Jobs run under leases of the common
// term; a lease end re-runs the water filling (the non-renewed job is the over-share one).
// Deviations: a single resource (GPUs), so "dominant" share = GPU share; no reservation for
// large gangs (a tenant's big job can wait while smaller jobs of others fit); a preempted job
// loses the work since its lease began (the common preemption cost rule, docs/policies.md).
// Thread safety: see Policy.
#pragma once
#include <vector>

#include "astraeus/policies/common.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus {

class DrfPolicy final : public Policy {
public:
    explicit DrfPolicy(const AstraeaOptions& opt) : opt_(opt) {}
    std::string_view name() const override { return "drf"; }
    Seconds lease_s(const RoundInput&, int, Seconds) const override { return opt_.lease_s; }
    void round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
               std::vector<Action>& actions) override;

private:
    AstraeaOptions opt_;
    policy_detail::PendingIndex index_;  ///< per tenant, by gang size, submit order
    std::vector<int> cap_, cand_;
    std::vector<std::size_t> bucket_;
    std::vector<int> used_;
    std::vector<char> mark_;
    policy_detail::ReclaimScratch reclaim_;
};

}  // namespace astraeus
