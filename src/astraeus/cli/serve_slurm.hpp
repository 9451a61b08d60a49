// `astraeus serve --executor slurm`: the Slurm executor over the cluster that `slurm_conf` (or
// SLURM_CONF) names; the service's pools become Slurm's partitions and its machines their GPU
// nodes (docs/slurm.md). Built only with libslurm; otherwise an error says how to get it.
#pragma once
#include <memory>
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/service/executor.hpp"

namespace astraeus::cli {

/// Replaces cfg.pools with Slurm's partitions and nodes; errors when slurmctld does not answer
/// or has no GPU node. `grace_s`: the checkpoint grace before requeue-held.
Result<std::unique_ptr<service::Executor>> make_slurm_executor(service::ServiceConfig& cfg,
                                                               const std::string& slurm_conf,
                                                               Seconds grace_s);

}  // namespace astraeus::cli
