// A released job that Slurm does not start (docs/slurm.md, "Sharing the nodes with jobs outside
// Astraeus"): Astraeus releases a run's job on the nodes it chose; when the job is still PENDING
// (Resources, Priority, ...: anything but a hold) `pending_bound_s` later, the executor takes it
// back (holds it again), the run waits and is placed again, and the nodes are withheld from the
// placements while what occupies them outside Astraeus's GPU view still does: the jobs outside
// Astraeus that held an allocation there (CPUs, memory, GPUs) when the job was taken back, or,
// when there were none (a race, a job ahead in Slurm's queue), for `cool_off_s`. Pure: no RPC.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "astraeus/base/time.hpp"
#include "astraeus/exec/slurm_foreign.hpp"

namespace astraeus::exec::slurm {

/// Per node name, the jobs outside the service (not own_job()) holding any allocation there,
/// ascending; jobs whose hostlist does not parse are skipped.
std::map<std::string, std::vector<std::uint32_t>> foreign_jobs_per_node(const std::vector<JobAlloc>& allocs,
                                                                        const std::string& runs_dir);

/// Whether a job released at `released_s` (Unix seconds; < 0: not released) and still pending,
/// not held, at `now_s` has waited past the bound.
bool past_pending_bound(Seconds released_s, Seconds now_s, Seconds bound_s);

/// A node whose placed job Slurm did not start: withheld from the placements until it clears.
struct BlockedNode {
    std::vector<std::uint32_t> jobs;  ///< the jobs outside the service there at the take-back
    Seconds since_s = 0;              ///< the take-back (Unix seconds)
    std::string why;                  ///< for the pending runs' reason
};

/// Whether `b` still holds at `now_s`: one of its jobs is still among `on_node` (the jobs
/// outside the service holding the node now), or it has none and `cool_off_s` has not passed.
bool still_blocked(const BlockedNode& b, const std::vector<std::uint32_t>& on_node, Seconds now_s,
                   Seconds cool_off_s);

/// The run's reason for the take-back: "Slurm did not start job 12 on gpu2 within 5 s
/// (Resources): placed again".
std::string not_started_text(std::uint32_t job, const std::string& nodes, Seconds bound_s,
                             const std::string& slurm_reason);

/// The withheld node's clause in the pending runs' reason: "node gpu3 did not start Astraeus's
/// job 12 (Resources): Slurm jobs outside Astraeus hold its CPUs or memory (job 7)", or without
/// jobs "... within 5 s (Priority); withheld for 30 s".
std::string blocked_text(const std::string& node, std::uint32_t job, const std::string& slurm_reason,
                         const std::vector<std::uint32_t>& jobs, Seconds cool_off_s);

}  // namespace astraeus::exec::slurm
