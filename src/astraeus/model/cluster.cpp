#include "astraeus/model/cluster.hpp"

#include <cassert>

namespace astraeus {

ClusterState::ClusterState(const ClusterSpec& spec)
    : free_(static_cast<std::size_t>(spec.machines), spec.gpus_per_machine),
      gpus_per_machine_(spec.gpus_per_machine),
      total_(spec.total_gpus()),
      free_total_(spec.total_gpus()) {}

void ClusterState::take(int machine, int gpus) {
    assert(free_[machine] >= gpus);
    free_[machine] -= gpus;
    free_total_ -= gpus;
}

void ClusterState::give(const Placement& p) {
    for (const auto& part : p.parts) {
        free_[part.machine] += part.gpus;
        free_total_ += part.gpus;
        assert(free_[part.machine] <= gpus_per_machine_);
    }
}

}  // namespace astraeus
