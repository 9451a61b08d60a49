#include "astraeus/exec/slurm_pools.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace astraeus::exec {

Result<std::vector<SlurmPool>> slurm_pools(const std::vector<slurm::PartitionInfo>& parts,
                                           const std::vector<slurm::NodeInfo>& nodes,
                                           const std::vector<std::string>& owned) {
    std::map<std::string, const slurm::NodeInfo*> by_name;
    for (const auto& n : nodes) by_name[n.name] = &n;
    std::vector<const slurm::PartitionInfo*> chosen;
    if (owned.empty()) {
        for (const auto& p : parts) chosen.push_back(&p);
    } else {
        std::set<std::string> seen;
        for (const auto& name : owned) {
            if (!seen.insert(name).second) return fail("slurm.partitions names '" + name + "' twice");
            auto it = std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return p.name == name; });
            if (it == parts.end()) {
                std::string have;
                for (const auto& p : parts) have += (have.empty() ? "" : ", ") + p.name;
                return fail("slurm.partitions: Slurm has no partition '" + name + "' (it has: " +
                            (have.empty() ? std::string("none") : have) + "; sinfo -s)");
            }
            chosen.push_back(&*it);
        }
    }
    std::set<std::string> taken;
    std::vector<SlurmPool> out;
    for (const auto* p : chosen) {
        SlurmPool pool{p->name, {}};
        for (const auto& name : p->nodes) {
            auto it = by_name.find(name);
            if (it == by_name.end() || it->second->gpus <= 0 || taken.contains(name)) continue;
            taken.insert(name);
            pool.nodes.push_back(*it->second);
        }
        if (pool.nodes.empty() && !owned.empty())
            return fail("slurm.partitions: partition '" + p->name + "' has no GPU nodes of its own (gres gpu; " +
                        "nodes of an earlier named partition count there): Astraeus schedules GPUs");
        if (!pool.nodes.empty()) out.push_back(std::move(pool));
    }
    if (out.empty()) return fail("Slurm has no partition with GPU nodes (gres gpu)");
    return out;
}

Result<SlurmMode> slurm_mode(const std::string& scheduler, const std::vector<std::string>& owned,
                             const std::vector<slurm::PartitionInfo>& parts) {
    SlurmMode m;
    if (owned.empty()) {
        if (scheduler != "sched/builtin")
            return fail("Slurm runs SchedulerType=" + scheduler +
                        " and no partition is named for Astraeus: its scheduler would start Astraeus's "
                        "released jobs in its own order and other users' jobs on Astraeus's nodes. Name the "
                        "partitions Astraeus owns (\"slurm\": {\"partitions\": [\"astraeus\"]}) or set "
                        "SchedulerType=sched/builtin cluster-wide (docs/slurm.md, \"Two setups\")");
        m.name = "cluster-wide";
        m.text = "Astraeus schedules every partition with GPU nodes under SchedulerType=sched/builtin, a "
                 "cluster-wide setting: no backfill and no hetjob for any user of this cluster";
        return m;
    }
    std::string names;
    for (const auto& o : owned) names += (names.empty() ? "" : ",") + o;
    m.name = "owned partitions";
    m.text = "Astraeus schedules only partition(s) " + names + "; the rest of the cluster keeps SchedulerType=" +
             scheduler + (scheduler == "sched/backfill" ? " (backfill and hetjobs for its other users)" : "");
    // An owned node that a partition Astraeus does not own lists too: other users' jobs can run
    // there (the foreign view places around them, at the cost of Astraeus's placements).
    std::set<std::string> mine;
    for (const auto& p : parts)
        if (std::find(owned.begin(), owned.end(), p.name) != owned.end())
            for (const auto& n : p.nodes) mine.insert(n);
    for (const auto& p : parts) {
        if (std::find(owned.begin(), owned.end(), p.name) != owned.end()) continue;
        std::string shared;
        for (const auto& n : p.nodes)
            if (mine.contains(n)) shared += (shared.empty() ? "" : ",") + n;
        if (!shared.empty())
            m.warnings.push_back("partition '" + p.name + "', which Astraeus does not own, also has its node(s) " +
                                 shared + ": jobs submitted there can take their GPUs (Astraeus then places "
                                 "around them as jobs outside it)");
    }
    return m;
}

}  // namespace astraeus::exec
