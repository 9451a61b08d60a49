#include "astraeus/placement/pack.hpp"

#include "astraeus/placement/consolidate.hpp"

namespace astraeus {

std::optional<Placement> PackPlacer::place(ClusterState& cluster, int gpus) const {
    const std::vector<int> chunks = gang_chunks(gpus, cluster.gpus_per_machine());
    Placement placement;
    if (place_chunks_first_fit(cluster, chunks, placement) == chunks.size()) return placement;
    cluster.give(placement);
    return std::nullopt;
}

}  // namespace astraeus
