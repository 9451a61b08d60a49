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
      free_total_(spec.total_gpus()) {
    build_tree();
}

void ClusterState::build_tree() {
    leaves_ = 1;
    while (leaves_ < machines()) leaves_ *= 2;
    tree_.assign(2 * static_cast<std::size_t>(leaves_), 0);
    for (int m = 0; m < machines(); ++m) tree_[static_cast<std::size_t>(leaves_ + m)] = free_[m];
    for (int k = leaves_ - 1; k >= 1; --k)
        tree_[k] = std::max(tree_[2 * static_cast<std::size_t>(k)], tree_[2 * static_cast<std::size_t>(k) + 1]);
}

void ClusterState::set_free(int machine, int gpus) {
    if (trial_) journal_.push_back({machine, free_[machine]});
    free_total_ += gpus - free_[machine];
    free_[machine] = gpus;
    std::size_t k = static_cast<std::size_t>(leaves_ + machine);
    tree_[k] = gpus;
    for (k /= 2; k >= 1; k /= 2) {
        const int m = std::max(tree_[2 * k], tree_[2 * k + 1]);
        if (tree_[k] == m) break;  // the maximum above does not change
        tree_[k] = m;
    }
}

int ClusterState::first_fit(int gpus, int from) const {
    if (from >= machines() || tree_[1] < gpus) return -1;
    return find_first(1, 0, leaves_, std::max(from, 0), gpus);
}

int ClusterState::find_first(std::size_t node, int lo, int hi, int from, int gpus) const {
    if (hi <= from || tree_[node] < gpus) return -1;
    if (hi - lo == 1) return lo < machines() ? lo : -1;
    const int mid = lo + (hi - lo) / 2;
    const int left = find_first(2 * node, lo, mid, from, gpus);
    return left >= 0 ? left : find_first(2 * node + 1, mid, hi, from, gpus);
}

void ClusterState::take(int machine, int gpus) {
    assert(free_[machine] >= gpus);
    set_free(machine, free_[machine] - gpus);
}

void ClusterState::give(const Placement& p) {
    for (const auto& part : p.parts) {
        set_free(part.machine, free_[part.machine] + part.gpus);
        assert(free_[part.machine] <= size_[part.machine]);
    }
}

void ClusterState::add_machine(int gpus) {
    assert(!trial_);
    free_.push_back(gpus);
    size_.push_back(gpus);
    gpus_per_machine_ = std::max(gpus_per_machine_, gpus);
    total_ += gpus;
    free_total_ += gpus;
    build_tree();
}

void ClusterState::begin_trial() {
    assert(!trial_);
    journal_.clear();
    trial_ = true;
}

void ClusterState::rollback() {
    trial_ = false;
    for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) set_free(it->first, it->second);
    journal_.clear();
}

}  // namespace astraeus
