#include "astraeus/exec/slurm_pending.hpp"

#include <algorithm>

#include "astraeus/slurm_import/hostlist.hpp"

namespace astraeus::exec::slurm {

std::map<std::string, std::vector<std::uint32_t>> foreign_jobs_per_node(const std::vector<JobAlloc>& allocs,
                                                                        const std::string& runs_dir) {
    std::map<std::string, std::vector<std::uint32_t>> out;
    for (const auto& j : allocs) {
        if (own_job(j.name, j.work_dir, runs_dir)) continue;
        auto nodes = astraeus::slurm::expand_hostlist(j.nodes);
        if (!nodes) continue;
        for (const auto& n : *nodes) out[n].push_back(j.id);
    }
    for (auto& [node, jobs] : out) {
        std::sort(jobs.begin(), jobs.end());
        jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
    }
    return out;
}

bool past_pending_bound(Seconds released_s, Seconds now_s, Seconds bound_s) {
    return released_s >= 0 && now_s - released_s >= bound_s;
}

bool still_blocked(const BlockedNode& b, const std::vector<std::uint32_t>& on_node, Seconds now_s,
                   Seconds cool_off_s) {
    if (b.jobs.empty()) return now_s - b.since_s < cool_off_s;
    for (auto id : b.jobs)
        if (std::find(on_node.begin(), on_node.end(), id) != on_node.end()) return true;
    return false;
}

std::string not_started_text(std::uint32_t job, const std::string& nodes, Seconds bound_s,
                             const std::string& slurm_reason) {
    return "Slurm did not start job " + std::to_string(job) + " on " + nodes + " within " + std::to_string(bound_s) +
           " s (" + (slurm_reason.empty() ? std::string("pending") : slurm_reason) + "): placed again";
}

std::string blocked_text(const std::string& node, std::uint32_t job, const std::string& slurm_reason,
                         const std::vector<std::uint32_t>& jobs, Seconds cool_off_s) {
    std::string out = "node " + node + " did not start Astraeus's job " + std::to_string(job) + " (" +
                      (slurm_reason.empty() ? std::string("pending") : slurm_reason) + "): ";
    if (jobs.empty()) return out + "withheld for " + std::to_string(cool_off_s) + " s";
    std::string ids;
    for (auto id : jobs) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    return out + "Slurm jobs outside Astraeus hold its CPUs or memory (job" + (jobs.size() == 1 ? " " : "s ") + ids + ")";
}

}  // namespace astraeus::exec::slurm
