// YARN-CS: the capacity scheduler of Apache Hadoop YARN with one queue (virtual cluster) per
// tenant, as the GPU-cluster papers use it as a baseline (Jeon et al., "Analysis of Large-Scale
// Multi-Tenant GPU Clusters for DNN Training Workloads", USENIX ATC'19, the Philly trace's
// scheduler; Gu et al., Tiresias, NSDI'19; Ye et al., ASTRAEA, IEEE TPDS 2022, section 7).
//
// yarn-cs: each tenant may hold at most its quota Q_u (its guaranteed capacity); inside a tenant
// jobs go in submit order and a job that does not fit the tenant's free quota (or does not place)
// is skipped, not waited for (no head-of-line block); no borrowing of other tenants' idle GPUs,
// no preemption: a started job holds its GPUs until it completes (no leases, no checkpoints). A
// gang larger than its tenant's quota could never start and is refused at admission (counted).
//
// yarn-cs-elastic: the same guarantee, plus borrowing: GPUs no one is owed go to tenants below
// their maximum capacity (params.yarn_max_share of the cluster), least used/quota first; a job
// that fits its tenant's free quota but not the free GPUs reclaims borrowed GPUs by preemption,
// only from tenants holding more than their quota (the one most over it first, its youngest
// lease first, while it is still over). Jobs run under leases of the common term, so a
// reclaimed job loses at most the work of its current lease; at a lease end a tenant's jobs are
// re-ranked in submit order. Within one pass of a round, once a job of a tenant fails (does not
// start, even by reclaiming), the tenant's gangs as large or larger are not tried again.
//
// Deviations from YARN: no containers or reservations (a gang is placed whole or skipped), no
// user limits inside a queue, reclaim is immediate (no preemption grace period), jobs larger
// than the maximum capacity are refused at admission. Thread safety: see Policy.
#pragma once
#include <vector>

#include "astraeus/policies/common.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus {

class YarnCsPolicy final : public Policy {
public:
    YarnCsPolicy(const AstraeaOptions& opt, bool elastic) : opt_(opt), elastic_(elastic) {}
    std::string_view name() const override { return elastic_ ? "yarn-cs-elastic" : "yarn-cs"; }
    bool admits(const RoundInput& in, int j) const override;
    Seconds lease_s(const RoundInput&, int, Seconds) const override {
        return elastic_ ? opt_.lease_s : kNoLeaseEnd;
    }
    void round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
               std::vector<Action>& actions) override;

private:
    int max_capacity(const RoundInput& in) const;
    void round_static(RoundInput& in, ClusterState& cluster, const Placer& placer,
                      std::vector<Action>& actions);
    void round_elastic(RoundInput& in, ClusterState& cluster, const Placer& placer,
                       std::vector<Action>& actions);
    /// Tenant u's next waiting job (submit order) of at most `max_gpus` GPUs and under its
    /// cap, or -1; its bucket goes to bucket_[u].
    int candidate(const RoundInput& in, std::size_t u, int max_gpus);

    AstraeaOptions opt_;
    bool elastic_;
    policy_detail::PendingIndex index_;  ///< elastic: per tenant, by gang size, submit order
    // scratch, per round
    std::vector<int> cap_, cand_;
    std::vector<std::size_t> bucket_;
    std::vector<int> used_;
    std::vector<char> mark_;  ///< per job: preempted this round
    policy_detail::ReclaimScratch reclaim_;
};

}  // namespace astraeus
