// default mode: the event-driven engine (rounds at arrivals, completions, lease ends and
// starvation thresholds; checkpoint and restore costs; spec/astraea.md section 6 fixes).
// Internal to sim/.
#pragma once
#include <memory>

#include "astraeus/sched/placer.hpp"
#include "astraeus/sim/engine.hpp"

namespace astraeus::detail {

Result<SimResult> run_event_engine(const Workload& w, const SimConfig& c, std::vector<int> quotas,
                                   std::unique_ptr<Placer> placer, const ProgressFn& progress);

}  // namespace astraeus::detail
