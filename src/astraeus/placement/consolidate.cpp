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
    std::size_t i = 0;
    for (; i < chunks.size(); ++i) {
        const int m = cluster.first_fit(chunks[i]);  // the lowest-index machine that fits
        if (m < 0) break;
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
    int unplaced = 0;
    for (std::size_t k = i; k < chunks.size(); ++k) unplaced += chunks[k];
    if (unplaced <= 1) return undo();
    // Spread: whatever is free, machine by machine in index order.
    for (int m = cluster.first_fit(1); m >= 0 && unplaced > 0; m = cluster.first_fit(1, m + 1)) {
        const int take = std::min(cluster.free_on(m), unplaced);
        cluster.take(m, take);
        placement.parts.push_back({m, take});
        unplaced -= take;
    }
    if (unplaced != 0) return undo();
    return placement;
}

}  // namespace astraeus
