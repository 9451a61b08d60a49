// `consolidate` gang placement (spec/astraea.md section 5; the reference simulator of ASTRAEA,
// Ye et al., IEEE TPDS 2022): whole-machine chunks first-fit in machine order, then the
// remainder chunk; if a chunk fits nowhere, spread what is left over machines in order.
// Stateless; thread-safe.
#pragma once
#include <vector>

#include "astraeus/sched/placer.hpp"

namespace astraeus {

/// A gang's chunks: floor(g / G) chunks of G GPUs, then g mod G if non-zero.
std::vector<int> gang_chunks(int gpus, int per_machine);
/// Places chunks in order, each on the first machine with enough free GPUs; returns how many
/// were placed (stops at the first that fits nowhere), appending them to `placement`.
std::size_t place_chunks_first_fit(ClusterState& cluster, const std::vector<int>& chunks,
                                   Placement& placement);

class ConsolidatePlacer final : public Placer {
public:
    std::string_view name() const override { return "consolidate"; }
    /// Chunks: floor(g / G) chunks of G (G = GPUs per machine) then one of g mod G if non-zero.
    /// Each chunk goes to the first machine with that many free GPUs. When a chunk finds none:
    /// if the GPUs still unplaced are <= 1 the placement fails; otherwise they are spread,
    /// min(free, unplaced) per machine in machine order, failing if they do not all fit.
    /// A failure releases everything this attempt took.
    std::optional<Placement> place(ClusterState& cluster, int gpus) const override;
};

}  // namespace astraeus
