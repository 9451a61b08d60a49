#include "astraeus/sched/gang_placement.hpp"

namespace astraeus {

std::optional<Placement> place_gang(const Placer& placer, ClusterState& cluster, const Job& job) {
    const int g = job.gpus_per_worker;
    if (g <= 0) return placer.place(cluster, job.gpus);
    if (job.gpus % g != 0 || cluster.free_gpus() < job.gpus) return std::nullopt;
    Placement placement;
    for (int w = 0; w < job.gpus / g; ++w) {
        int best = -1;
        for (int m = 0; m < cluster.machines(); ++m) {
            const int f = cluster.free_on(m);
            if (f >= g && (best < 0 || f < cluster.free_on(best))) best = m;
        }
        if (best < 0) {
            cluster.give(placement);
            return std::nullopt;
        }
        cluster.take(best, g);
        placement.parts.push_back({best, g});
    }
    return placement;
}

int workers_that_fit(const std::vector<int>& machine_gpus, int gpus_per_worker) {
    if (gpus_per_worker <= 0) return 0;
    int n = 0;
    for (int c : machine_gpus) n += c / gpus_per_worker;
    return n;
}

}  // namespace astraeus
