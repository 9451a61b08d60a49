// `consolidate` gang placement (spec/astraea.md section 5; the reference simulator of ASTRAEA,
// Ye et al., IEEE TPDS 2022): whole-machine chunks first-fit in machine order, then the
// remainder chunk; if a chunk fits nowhere, spread what is left over machines in order.
// Stateless; thread-safe.
#pragma once
#include "astraeus/sched/placer.hpp"

namespace astraeus {

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
