#include "astraeus/sched/round.hpp"
#include "astraeus/sched/gang_placement.hpp"

namespace astraeus {

std::optional<Placement> place_job(const RoundInput& in, ClusterState& cluster,
                                   const Placer& placer, int j) {
    const RunState& r = in.runs[j];
    if (in.sticky_renewals && r.last_checkpoint_s == in.now) {
        bool free = true;
        for (const auto& part : r.last_placement.parts)
            if (cluster.free_on(part.machine) < part.gpus) free = false;
        if (free) {
            for (const auto& part : r.last_placement.parts) cluster.take(part.machine, part.gpus);
            return r.last_placement;
        }
    }
    return place_gang(placer, cluster, in.jobs[j]);
}

}  // namespace astraeus
