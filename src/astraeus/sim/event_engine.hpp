// default mode: the event-driven engine (rounds at arrivals, completions, lease ends and
// policy wake-ups such as ASTRAEA's starvation thresholds; checkpoint and restore costs; spec/
// astraea.md section 6 fixes). Any Policy (sched/policy.hpp) runs the rounds.
// Internal to sim/.
#pragma once
#include <memory>

#include "astraeus/sched/placer.hpp"
#include "astraeus/sched/policy.hpp"
#include "astraeus/sim/engine.hpp"

namespace astraeus::detail {

/// Runs `policy`'s rounds (sched/policy.hpp) over `w` to completion.
Result<SimResult> run_event_engine(const Workload& w, const SimConfig& c, std::vector<int> quotas,
                                   std::unique_ptr<Placer> placer, std::unique_ptr<Policy> policy,
                                   const ProgressFn& progress);

}  // namespace astraeus::detail
