// The cluster: machines, each with a number of GPUs, in machine order (placement scans in that
// order). ClusterState tracks free GPUs per machine. Thread safety: not thread-safe.
#pragma once
#include <cstdint>
#include <vector>

namespace astraeus {

/// Shape of a homogeneous cluster or pool: `machines` x `gpus_per_machine` GPUs.
struct ClusterSpec {
    int machines = 40;
    int gpus_per_machine = 8;
    int total_gpus() const { return machines * gpus_per_machine; }
};

/// GPUs a gang holds: (machine index, GPU count) pairs, in the order they were taken.
struct Placement {
    struct Part {
        int machine;
        int gpus;
    };
    std::vector<Part> parts;
    int gpus() const {
        int n = 0;
        for (auto& p : parts) n += p.gpus;
        return n;
    }
};

/// Free GPUs per machine. take/give keep the total in step; bugs (over-take) are assertions.
class ClusterState {
public:
    explicit ClusterState(const ClusterSpec& spec);
    int machines() const { return static_cast<int>(free_.size()); }
    int gpus_per_machine() const { return gpus_per_machine_; }
    int total_gpus() const { return total_; }
    int free_gpus() const { return free_total_; }
    int free_on(int machine) const { return free_[machine]; }
    /// Takes `gpus` on `machine`; requires free_on(machine) >= gpus.
    void take(int machine, int gpus);
    /// Returns every part of `p` to the free pool.
    void give(const Placement& p);

private:
    std::vector<int> free_;
    int gpus_per_machine_;
    int total_;
    int free_total_;
};

}  // namespace astraeus
