#include "astraeus/placement/consolidate.hpp"

#include <algorithm>
#include <vector>

namespace astraeus {

std::vector<int> gang_chunks(int gpus, int per_machine) {
    std::vector<int> chunks(static_cast<std::size_t>(gpus / per_machine), per_machine);
    if (gpus % per_machine != 0) chunks.push_back(gpus % per_machine);
    return chunks;
}

std::size_t place_chunks_first_fit(ClusterState& cluster, const std::vector<int>& chunks,
                                   Placement& placement) {
    const int machines = cluster.machines();
    std::size_t i = 0;
    for (; i < chunks.size(); ++i) {
        int m = 0;
        while (m < machines && cluster.free_on(m) < chunks[i]) ++m;
        if (m == machines) break;
        cluster.take(m, chunks[i]);
        placement.parts.push_back({m, chunks[i]});
    }
    return i;
}

std::optional<Placement> ConsolidatePlacer::place(ClusterState& cluster, int gpus) const {
    const std::vector<int> chunks = gang_chunks(gpus, cluster.gpus_per_machine());
    Placement placement;
    auto undo = [&] {
        cluster.give(placement);
        return std::nullopt;
    };
    const std::size_t i = place_chunks_first_fit(cluster, chunks, placement);
    if (i == chunks.size()) return placement;
    const int machines = cluster.machines();

    int unplaced = 0;
    for (std::size_t k = i; k < chunks.size(); ++k) unplaced += chunks[k];
    if (unplaced <= 1) return undo();
    for (int m = 0; m < machines && unplaced > 0; ++m) {
        int take = std::min(cluster.free_on(m), unplaced);
        if (take == 0) continue;
        cluster.take(m, take);
        placement.parts.push_back({m, take});
        unplaced -= take;
    }
    if (unplaced != 0) return undo();
    return placement;
}

}  // namespace astraeus
