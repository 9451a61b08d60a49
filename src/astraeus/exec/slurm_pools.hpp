// Which Slurm partitions Astraeus schedules, and whether Slurm's own scheduler lets it
// (docs/slurm.md, "Two setups"): pure, from what slurmctld reports (partitions, nodes,
// SchedulerType), no RPC, so that it is tested wherever the project builds.
//   cluster-wide: no partition named ("slurm": {"partitions": []}, the default): every partition
//     with GPU nodes is a pool; needs SchedulerType=sched/builtin (a cluster-wide setting).
//   owned partitions: "slurm": {"partitions": ["astraeus"]}: only those are pools; the rest of
//     the cluster keeps its scheduler (sched/backfill) and its users.
#pragma once
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/exec/slurm_client.hpp"

namespace astraeus::exec {

/// A pool per Slurm partition, its machines the partition's nodes not listed by an earlier
/// partition, each with its gres GPU count; nodes without GPUs are left out.
struct SlurmPool {
    std::string partition;
    std::vector<slurm::NodeInfo> nodes;
};

/// The pools: with `owned` empty, every partition with GPU nodes, in Slurm's order; else the
/// named partitions only, in the order named. Errors: a named partition Slurm does not have (with
/// the ones it has), a named partition without GPU nodes, a name given twice, no pool at all.
Result<std::vector<SlurmPool>> slurm_pools(const std::vector<slurm::PartitionInfo>& parts,
                                           const std::vector<slurm::NodeInfo>& nodes,
                                           const std::vector<std::string>& owned);

/// How Astraeus runs beside Slurm's scheduler.
struct SlurmMode {
    std::string name;                   ///< "cluster-wide" or "owned partitions"
    std::string text;                   ///< one line for the log: the mode and what it changes
    std::vector<std::string> warnings;  ///< e.g. an owned node that other partitions share
};

/// The mode for SchedulerType `scheduler` ("sched/builtin", "sched/backfill") and the `owned`
/// partitions ("" none: cluster-wide). Errors: no partition named while the scheduler is not
/// sched/builtin (backfill would start Astraeus's released jobs in its own order and other
/// users' jobs on its nodes: name the partitions Astraeus owns, or use sched/builtin).
Result<SlurmMode> slurm_mode(const std::string& scheduler, const std::vector<std::string>& owned,
                             const std::vector<slurm::PartitionInfo>& parts);

}  // namespace astraeus::exec
