// Gang placement with a worker shape: a job whose gang is W workers of G GPUs (a service run:
// one process group per worker on one machine, CUDA_VISIBLE_DEVICES per machine) is placed as
// W chunks of G GPUs, each chunk on one machine, on the fewest machines; a job
// without a worker shape (a trace job, gpus_per_worker == 0) is placed by the pool's Placer
// unchanged, so simulator outputs do not move.
// Thread safety: pure functions over the arguments.
#pragma once
#include <optional>
#include <vector>

#include "astraeus/model/cluster.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/sched/placer.hpp"

namespace astraeus {

/// Places job j's gang on `cluster`: job.gpus_per_worker <= 0: placer.place(cluster, job.gpus);
/// else job.gpus / job.gpus_per_worker chunks of gpus_per_worker packed on the fewest machines
/// (place_workers_packed, placement/workers.hpp). All or nothing: on failure `cluster` is
/// unchanged and the result is empty. One Placement part per worker, in worker order.
std::optional<Placement> place_gang(const Placer& placer, ClusterState& cluster, const Job& job);

/// How many workers of `gpus_per_worker` GPUs machines of `machine_gpus` GPUs hold at most
/// (sum of floor(capacity / gpus_per_worker)); 0 when gpus_per_worker <= 0.
int workers_that_fit(const std::vector<int>& machine_gpus, int gpus_per_worker);

}  // namespace astraeus
