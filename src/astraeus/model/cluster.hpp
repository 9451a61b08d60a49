// The cluster: machines, each with a number of GPUs, in machine order (placement scans in that
// order). ClusterState tracks free GPUs per machine. Thread safety: not thread-safe.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "astraeus/model/placement_parts.hpp"

namespace astraeus {

/// Shape of a cluster or pool: GPUs per machine, in machine order (machines may differ).
struct ClusterSpec {
    std::vector<int> machine_gpus;
    /// `machines` machines of `gpus` GPUs each.
    static ClusterSpec uniform(int machines, int gpus);
    int machines() const { return static_cast<int>(machine_gpus.size()); }
    int total_gpus() const;
    int max_gpus_per_machine() const;
};

/// GPUs a gang holds: (machine index, GPU count) pairs, in the order they were taken.
struct Placement {
    using Part = PlacementPart;
    PlacementParts parts;
    int gpus() const {
        int n = 0;
        for (auto& p : parts) n += p.gpus;
        return n;
    }
};

/// Free GPUs per machine. take/give keep the total in step; bugs (over-take) are assertions.
/// A max-tree over the machines' free GPUs answers first-fit queries in O(log machines); take
/// and give cost O(log machines). A trial (begin_trial .. rollback) lets a scheduling round
/// place jobs on the real state and undo it in O(changes), instead of copying the state.
class ClusterState {
public:
    explicit ClusterState(const ClusterSpec& spec);
    int machines() const { return static_cast<int>(free_.size()); }
    /// GPUs of the largest machine: the size of a whole-machine chunk of a gang.
    int gpus_per_machine() const { return gpus_per_machine_; }
    int total_gpus() const { return total_; }
    int free_gpus() const { return free_total_; }
    int free_on(int machine) const { return free_[machine]; }
    /// The lowest machine index >= `from` with at least `gpus` free GPUs, or -1 (gpus >= 1).
    int first_fit(int gpus, int from = 0) const;
    /// Takes `gpus` on `machine`; requires free_on(machine) >= gpus.
    void take(int machine, int gpus);
    /// Returns every part of `p` to the free pool.
    void give(const Placement& p);
    /// Appends a machine of `gpus` GPUs, all free (machines registered by node agents).
    void add_machine(int gpus);
    /// Records every take and give from now on, until rollback() (trials do not nest).
    void begin_trial();
    /// Undoes every take and give since begin_trial() and stops recording.
    void rollback();

private:
    void set_free(int machine, int gpus);
    void build_tree();
    int find_first(std::size_t node, int lo, int hi, int from, int gpus) const;

    std::vector<int> free_;
    std::vector<int> size_;
    std::vector<int> tree_;  ///< max free GPUs per subtree; leaves at leaves_ + machine
    int leaves_ = 1;
    int gpus_per_machine_;
    int total_;
    int free_total_;
    bool trial_ = false;
    std::vector<std::pair<int, int>> journal_;  ///< (machine, free GPUs before the change)
};

}  // namespace astraeus
