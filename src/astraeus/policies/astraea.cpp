#include "astraeus/policies/astraea.hpp"

#include "astraeus/sched/astraea_round.hpp"

namespace astraeus {

bool AstraeaPolicy::admits(const RoundInput& in, int j) const {
    const Job& job = in.jobs[j];
    return !(opt_.quota_mode == QuotaMode::Static && job.gpus > in.quotas[job.tenant]);
}

Seconds AstraeaPolicy::lease_s(const RoundInput&, int, Seconds) const { return opt_.lease_s; }

Seconds AstraeaPolicy::wake_after_s(const RoundInput&, int) const { return opt_.starvation_s; }

void AstraeaPolicy::round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
                          std::vector<Action>& actions) {
    astraea_round(in, cluster, opt_, placer, rng, actions);
}

}  // namespace astraeus
