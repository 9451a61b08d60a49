#include "astraeus/exec/slurm_foreign.hpp"

#include <algorithm>
#include <charconv>

#include "astraeus/slurm_import/hostlist.hpp"

namespace astraeus::exec::slurm {

int gres_gpu_count(std::string_view gres) {
    int total = 0;
    std::size_t from = 0;
    while (from < gres.size()) {
        std::size_t comma = gres.find(',', from);
        if (comma == std::string_view::npos) comma = gres.size();
        std::string_view item = gres.substr(from, comma - from);
        from = comma + 1;
        // "gpu:a100:4(S:0-1)": the count is the last field before the parenthesis.
        if (const auto paren = item.find('('); paren != std::string_view::npos) item = item.substr(0, paren);
        if (!item.starts_with("gpu")) continue;
        const auto colon = item.rfind(':');
        if (colon == std::string_view::npos) continue;
        int n = 0;
        const auto digits = item.substr(colon + 1);
        if (std::from_chars(digits.data(), digits.data() + digits.size(), n).ec == std::errc{}) total += n;
    }
    return total;
}

Result<std::map<std::string, int>> job_node_gpus(const JobAlloc& j) {
    auto nodes = astraeus::slurm::expand_hostlist(j.nodes);
    if (!nodes) return std::unexpected(nodes.error());
    std::map<std::string, int> out;
    if (j.gres_detail.empty()) return out;
    if (j.gres_detail.size() != 1 && j.gres_detail.size() != nodes->size())
        return fail("job " + std::to_string(j.id) + ": " + std::to_string(j.gres_detail.size()) +
                    " gres details for " + std::to_string(nodes->size()) + " nodes (" + j.nodes + ")");
    for (std::size_t i = 0; i < nodes->size(); ++i) {
        const int g = gres_gpu_count(j.gres_detail[j.gres_detail.size() == 1 ? 0 : i]);
        if (g > 0) out[(*nodes)[i]] += g;
    }
    return out;
}

bool own_job(const std::string& name, const std::string& work_dir, const std::string& runs_dir) {
    return name.starts_with("astraeus-") && !runs_dir.empty() && work_dir.starts_with(runs_dir + "/");
}

std::map<std::string, ForeignNode> foreign_gpus(const std::vector<JobAlloc>& allocs,
                                                const std::string& runs_dir, int* skipped) {
    std::map<std::string, ForeignNode> out;
    for (const auto& j : allocs) {
        if (own_job(j.name, j.work_dir, runs_dir)) continue;
        auto per_node = job_node_gpus(j);
        if (!per_node) {
            if (skipped) ++*skipped;
            continue;
        }
        for (const auto& [node, g] : *per_node) {
            ForeignNode& f = out[node];
            f.gpus += g;
            f.jobs.push_back(j.id);
        }
    }
    for (auto& [node, f] : out) std::sort(f.jobs.begin(), f.jobs.end());
    return out;
}

std::string foreign_text(const std::string& node, const ForeignNode& f) {
    std::string jobs;
    for (auto id : f.jobs) jobs += (jobs.empty() ? "" : ", ") + std::to_string(id);
    return std::to_string(f.gpus) + (f.gpus == 1 ? " GPU" : " GPUs") + " of node " + node + (f.gpus == 1 ? " is" : " are") +
           " held by Slurm jobs outside Astraeus (job" + (f.jobs.size() == 1 ? " " : "s ") + jobs + ")";
}

}  // namespace astraeus::exec::slurm
