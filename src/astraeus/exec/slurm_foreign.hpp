// The foreign view of a Slurm cluster: which GPUs of each node are allocated to jobs that this
// Astraeus service did not submit (a direct `sbatch --gres=gpu:4`, another scheduler's jobs), so
// that the service places its runs only on GPUs that are free in Slurm (docs/slurm.md, "Sharing
// the nodes with jobs outside Astraeus"). Pure: built from what slurmctld reports for its jobs
// (libslurm's slurm_load_jobs with SHOW_DETAIL, the text `scontrol -d show job` prints), no RPC.
// A job is this service's when it is named astraeus-* and its working directory is under the
// service's runs folder (another Astraeus service's jobs are foreign to this one).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/error.hpp"

namespace astraeus::exec::slurm {

/// GPUs in a gres string: "gpu:8", "gpu:4(IDX:0-3)", "gpu:a100:4(S:0-1),nic:2" -> 8, 4, 4;
/// 0 for none ("", "(null)", "N/A", no gpu item).
int gres_gpu_count(std::string_view gres);

/// One job holding an allocation, as slurmctld reports it.
struct JobAlloc {
    std::uint32_t id = 0;
    std::string name;
    std::string work_dir;
    std::string nodes;                     ///< hostlist of the allocation ("gpu[3-4]")
    std::vector<std::string> gres_detail;  ///< per node of `nodes`, in order ("gpu:2(IDX:0-1)")
};

/// GPUs per node of a job: node i of the expanded hostlist gets gres_detail[i]; a single detail
/// for several nodes applies to each. Errors: a hostlist that does not parse, or more than one
/// detail but not one per node.
Result<std::map<std::string, int>> job_node_gpus(const JobAlloc& j);

/// Whether job (name, work_dir) was submitted by the service whose runs folder is `runs_dir`
/// (absolute, no trailing slash): named astraeus-* and run in a folder under it.
bool own_job(const std::string& name, const std::string& work_dir, const std::string& runs_dir);

/// One node's GPUs held by jobs outside the service.
struct ForeignNode {
    int gpus = 0;
    std::vector<std::uint32_t> jobs;  ///< the jobs holding them, ascending
};

/// Per node name, the GPUs allocated to jobs that are not own_job(); nodes without any are
/// absent. Jobs whose allocation does not parse are skipped (counted in `skipped` if given).
std::map<std::string, ForeignNode> foreign_gpus(const std::vector<JobAlloc>& allocs,
                                                const std::string& runs_dir, int* skipped = nullptr);

/// "4 GPUs of node gpu2 are held by Slurm jobs outside Astraeus (job 2)" (the pending runs'
/// reason names it).
std::string foreign_text(const std::string& node, const ForeignNode& f);

}  // namespace astraeus::exec::slurm
