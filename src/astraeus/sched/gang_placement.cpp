#include "astraeus/sched/gang_placement.hpp"

#include "astraeus/placement/workers.hpp"

namespace astraeus {

std::optional<Placement> place_gang(const Placer& placer, ClusterState& cluster, const Job& job) {
    const int g = job.gpus_per_worker;
    if (g <= 0) return placer.place(cluster, job.gpus);
    if (job.gpus % g != 0) return std::nullopt;
    return place_workers_packed(cluster, job.gpus / g, g);
}

int workers_that_fit(const std::vector<int>& machine_gpus, int gpus_per_worker) {
    if (gpus_per_worker <= 0) return 0;
    int n = 0;
    for (int c : machine_gpus) n += c / gpus_per_worker;
    return n;
}

}  // namespace astraeus
