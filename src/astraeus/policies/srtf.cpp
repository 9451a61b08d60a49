#include "astraeus/policies/srtf.hpp"

#include "astraeus/policies/common.hpp"

namespace astraeus {

void SrtfPolicy::round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng&,
                       std::vector<Action>& actions) {
    actions.clear();
    if (cluster.free_gpus() == 0) return;  // preemptive at lease ends only
    ranked_.clear();
    for (int j : in.pending_all) {
        const Seconds remaining = in.jobs[j].duration_s - in.runs[j].executed_s;
        ranked_.add({double(remaining), double(in.jobs[j].submit_s), 0, j, j});
    }
    for (std::size_t k = 0; k < ranked_.size() && cluster.free_gpus() > 0; ++k)
        policy_detail::try_start(in, cluster, placer, ranked_[k], actions);
}

}  // namespace astraeus
