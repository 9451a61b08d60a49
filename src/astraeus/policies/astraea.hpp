// ASTRAEA as a Policy (Ye, Sun, Gao, Zhang, Wang, Yan, Luo, "ASTRAEA: A Fair Deep Learning
// Scheduler for Multi-tenant GPU Clusters", IEEE TPDS 2022; spec/astraea.md sections 3-6): the
// round is sched/astraea_round.hpp; leases of the configured term; a waiting job's rank rises
// when it has waited T_starve (it joins its tenant's starving list); with static quotas a gang
// larger than its tenant's quota is refused at admission. Also serves the yarn-cs-emu preset
// (the same round with fifo order, static quotas and leases that never expire).
// The default `astraea` adds AstraeaImprovements (sched/options.hpp; docs/policies.md): a job
// started on GPUs held for a reservation gets a lease that ends by the reserved start, so the
// policy records each running job's lease end (lease ends are known; run times are not read).
// `astraea-paper` is the published algorithm (spec section 6's default-mode fixes only).
// Thread safety: see Policy.
#pragma once
#include <vector>

#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus {

class AstraeaPolicy final : public Policy {
public:
    explicit AstraeaPolicy(const AstraeaOptions& opt) : opt_(opt) {}
    std::string_view name() const override { return opt_.policy; }
    /// Keeps the leases' ends and limits recorded by lease_s (the reservations read them).
    std::unique_ptr<Policy> clone() const override { return std::make_unique<AstraeaPolicy>(*this); }
    bool astraea_lists() const override { return true; }
    /// The srtf and themis orders and --backfill read run times; the others do not.
    bool predicts_run_times() const override {
        return opt_.backfill || opt_.job_order == JobOrder::Srtf ||
               opt_.job_order == JobOrder::Themis;
    }
    bool round_on_wake() const override { return false; }
    bool admits(const RoundInput& in, int j) const override;
    /// The configured term, or up to the reserved start for a job the last round started on held
    /// GPUs; records the lease's end for the next rounds' reservations.
    Seconds lease_s(const RoundInput& in, int j, Seconds restore_s) const override;
    Seconds wake_after_s(const RoundInput& in, int j) const override;
    void round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
               std::vector<Action>& actions) override;

private:
    AstraeaOptions opt_;
    mutable std::vector<Seconds> lease_end_;  ///< per job: when its current lease ends
    mutable std::vector<Seconds> until_;      ///< per job: lease must end by (0: no limit)
};

}  // namespace astraeus
