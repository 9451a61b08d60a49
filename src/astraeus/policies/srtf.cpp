#include "astraeus/policies/srtf.hpp"

#include "astraeus/policies/common.hpp"

namespace astraeus {

void SrtfPolicy::round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng&,
                       std::vector<Action>& actions) {
    actions.clear();
    if (cluster.free_gpus() == 0) return;  // preemptive at lease ends only
    // The rank (remaining work, submit) does not change while a job waits.
    index_.update(
        in, 1,
        [&](int j) {
            const Seconds remaining = in.jobs[j].duration_s - in.runs[j].executed_s;
            return RankKey{double(remaining), double(in.jobs[j].submit_s), 0, j, j};
        },
        [](int) { return 0; });
    policy_detail::start_in_key_order(in, cluster, placer, index_, 0, failed_, actions);
}

}  // namespace astraeus
