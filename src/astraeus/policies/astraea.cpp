#include "astraeus/policies/astraea.hpp"

#include "astraeus/sched/astraea_round.hpp"

#include <algorithm>

namespace astraeus {

bool AstraeaPolicy::admits(const RoundInput& in, int j) const {
    const Job& job = in.jobs[j];
    return !(opt_.quota_mode == QuotaMode::Static && job.gpus > in.quotas[job.tenant]);
}

Seconds AstraeaPolicy::lease_s(const RoundInput& in, int j, Seconds) const {
    if (!opt_.improve.reserve || opt_.mode == Mode::Compat) return opt_.lease_s;
    const auto k = static_cast<std::size_t>(j);
    if (lease_end_.size() <= k) lease_end_.resize(in.jobs.size() > k ? in.jobs.size() : k + 1, 0);
    Seconds lease = opt_.lease_s;
    if (k < until_.size() && until_[k] > 0) {
        if (until_[k] > in.now) lease = std::min(lease, until_[k] - in.now);
        until_[k] = 0;
    }
    lease_end_[k] = in.now + lease;
    return lease;
}

Seconds AstraeaPolicy::wake_after_s(const RoundInput&, int) const { return opt_.starvation_s; }

void AstraeaPolicy::round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
                          std::vector<Action>& actions) {
    if (opt_.improve.reserve && opt_.mode != Mode::Compat) {
        if (lease_end_.size() < in.jobs.size()) lease_end_.resize(in.jobs.size(), 0);
        in.lease_end_s = lease_end_;
    }
    astraea_round(in, cluster, opt_, placer, rng, actions);
    for (const auto& [j, until] : in.lease_until) {
        const auto k = static_cast<std::size_t>(j);
        if (until_.size() <= k) until_.resize(in.jobs.size() > k ? in.jobs.size() : k + 1, 0);
        until_[k] = until;
    }
}

}  // namespace astraeus
