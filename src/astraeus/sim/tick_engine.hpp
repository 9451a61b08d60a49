// compat mode: the reference simulator's 10-second tick loop (spec/astraea.md section 6b).
// Internal to sim/.
#pragma once
#include "astraeus/sim/engine.hpp"
#include "astraeus/sched/placer.hpp"

#include <memory>

namespace astraeus::detail {

SimResult run_tick_engine(const Workload& w, const SimConfig& c, std::vector<int> quotas,
                          std::unique_ptr<Placer> placer, const ProgressFn& progress);

}  // namespace astraeus::detail
