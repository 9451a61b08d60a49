#include "astraeus/placement/workers.hpp"

namespace astraeus {

std::optional<Placement> place_workers_packed(ClusterState& cluster, int workers,
                                              int gpus_per_worker) {
    const int g = gpus_per_worker;
    if (workers <= 0 || g <= 0 || cluster.free_gpus() < workers * g) return std::nullopt;
    long holds = 0;
    for (int m = 0; m < cluster.machines() && holds < workers; ++m) holds += cluster.free_on(m) / g;
    if (holds < workers) return std::nullopt;
    Placement placement;
    int left = workers;
    while (left > 0) {
        // Best fit for all the workers left, and the largest holder (for when none fits them).
        int fit = -1, big = -1;
        for (int m = 0; m < cluster.machines(); ++m) {
            const int f = cluster.free_on(m), n = f / g;
            if (n == 0) continue;
            if (n >= left && (fit < 0 || f < cluster.free_on(fit))) fit = m;
            if (big < 0) {
                big = m;
                continue;
            }
            const int bf = cluster.free_on(big), bn = bf / g;
            if (n > bn || (n == bn && f - n * g < bf - bn * g)) big = m;
        }
        const int m = fit >= 0 ? fit : big;
        const int take = fit >= 0 ? left : cluster.free_on(big) / g;
        for (int w = 0; w < take; ++w) {
            cluster.take(m, g);
            placement.parts.push_back({m, g});
        }
        left -= take;
    }
    return placement;
}

}  // namespace astraeus
