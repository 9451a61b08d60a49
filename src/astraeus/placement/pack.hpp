// `pack` gang placement: like consolidate (whole-machine chunks, then the remainder chunk, each
// first-fit in machine order) but never spreads a chunk over machines. A gang that cannot be
// packed waits even when enough GPUs are free in total (fragmentation). Stateless; thread-safe.
#pragma once
#include "astraeus/sched/placer.hpp"

namespace astraeus {

class PackPlacer final : public Placer {
public:
    std::string_view name() const override { return "pack"; }
    std::optional<Placement> place(ClusterState& cluster, int gpus) const override;
};

}  // namespace astraeus
