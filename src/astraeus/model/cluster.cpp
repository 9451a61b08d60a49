#include "astraeus/model/cluster.hpp"

#include <algorithm>
#include <cassert>

namespace astraeus {

ClusterSpec ClusterSpec::uniform(int machines, int gpus) {
    return ClusterSpec{std::vector<int>(static_cast<std::size_t>(machines), gpus)};
}

int ClusterSpec::total_gpus() const {
    int n = 0;
    for (int g : machine_gpus) n += g;
    return n;
}

int ClusterSpec::max_gpus_per_machine() const {
    int m = 0;
    for (int g : machine_gpus) m = std::max(m, g);
    return m;
}

ClusterState::ClusterState(const ClusterSpec& spec)
    : free_(spec.machine_gpus),
      size_(spec.machine_gpus),
      gpus_per_machine_(spec.max_gpus_per_machine()),
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
        assert(free_[part.machine] <= size_[part.machine]);
    }
}

void ClusterState::add_machine(int gpus) {
    free_.push_back(gpus);
    size_.push_back(gpus);
    gpus_per_machine_ = std::max(gpus_per_machine_, gpus);
    total_ += gpus;
    free_total_ += gpus;
}

}  // namespace astraeus
