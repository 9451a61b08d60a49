// Packing placement of a gang with a worker shape (W workers of G GPUs, each worker on one
// machine): the gang goes on the fewest machines that hold it, on machines of any size. Greedy:
// while no single machine holds the workers left, the machine holding the most of them takes as
// many as it holds (ties: the fewest GPUs it then leaves free, then the lowest index); the last
// ones go on the machine with the fewest free GPUs that holds them all (best fit; ties: lowest
// index). Taking the largest holders first is optimal for equal items: if k machines suffice, the
// k - 1 largest leave a remainder that the k-th largest holds, so the greedy stops by then.
// Used by the simulator and the service alike (sched/gang_placement.hpp). Thread safety: a pure
// function over its arguments.
#pragma once
#include <optional>

#include "astraeus/model/cluster.hpp"

namespace astraeus {

/// Places `workers` workers of `gpus_per_worker` GPUs on `cluster` as above, taking their GPUs.
/// Returns one Placement part per worker, workers of one machine adjacent; empty (cluster
/// unchanged) when the free GPUs cannot hold them (sum over machines of floor(free / G) < W) or
/// when workers <= 0 or gpus_per_worker <= 0. Cost: O(machines x machines used).
std::optional<Placement> place_workers_packed(ClusterState& cluster, int workers,
                                              int gpus_per_worker);

}  // namespace astraeus
