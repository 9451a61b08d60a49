// FIFO: the cluster-wide first-in-first-out baseline (spec/astraea.md section 8; the "FIFO"
// baseline of ASTRAEA, IEEE TPDS 2022, and of Tiresias, Gu et al., NSDI'19, section 6).
// Jobs start in submit order, each gang placed whole; the first job that does not fit blocks
// everything behind it (head-of-line blocking); no preemption: a started job holds its GPUs until
// it completes (no leases, hence no checkpoints).
// Deviations: tenants are ignored, as in the paper's baseline; gangs larger than the cluster are
// refused at admission (the shell) instead of blocking the queue forever.
// Thread safety: see Policy.
#pragma once
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus {

class FifoPolicy final : public Policy {
public:
    explicit FifoPolicy(const AstraeaOptions&) {}
    std::string_view name() const override { return "fifo"; }
    Seconds lease_s(const RoundInput&, int, Seconds) const override { return kNoLeaseEnd; }
    void round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
               std::vector<Action>& actions) override;
};

}  // namespace astraeus
