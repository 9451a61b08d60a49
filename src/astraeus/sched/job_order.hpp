// Job orders inside a tenant (spec/astraea.md section 4): how a tenant's pending jobs are ranked
// and in which order its delay jobs are preempted. Ties keep list order (stable sorts), as the
// reference simulator's Python sorts do. Thread safety: pure, given its arguments.
#pragma once
#include <span>
#include <vector>

#include "astraeus/base/rng.hpp"
#include "astraeus/model/run_state.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/sched/options.hpp"

namespace astraeus {

/// Sorts `pending` (job indexes, ascending rank = served first) and `delay` (victims first) in
/// place. Orders without a victim order (fifo, smallest_first, las, srtf, random) clear `delay`.
/// themis writes each ranked job's rho' into `themis_rho` (the victim order reads the last
/// value computed while the job was pending, as the reference does).
void order_candidates(JobOrder order, std::span<const Job> jobs, std::span<const RunState> runs,
                      std::vector<int>& pending, std::vector<int>& delay,
                      std::span<double> themis_rho, Rng& rng);

}  // namespace astraeus
