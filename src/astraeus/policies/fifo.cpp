#include "astraeus/policies/fifo.hpp"

#include "astraeus/policies/common.hpp"

namespace astraeus {

void FifoPolicy::round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng&,
                       std::vector<Action>& actions) {
    actions.clear();
    // Jobs become pending only on arrival (nothing is ever preempted or leased out), so the
    // pending list is in submit order (ties: trace order).
    for (int j : in.pending_all)
        if (!policy_detail::try_start(in, cluster, placer, j, actions)) break;
}

}  // namespace astraeus
