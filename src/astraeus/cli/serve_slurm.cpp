#include "astraeus/cli/serve_slurm.hpp"

#ifdef ASTRAEUS_HAVE_SLURM
#include "astraeus/exec/slurm_executor.hpp"
#include "astraeus/service/log.hpp"
#endif

namespace astraeus::cli {

Result<std::unique_ptr<service::Executor>> make_slurm_executor(service::ServiceConfig& cfg,
                                                               const std::string& slurm_conf,
                                                               Seconds grace_s) {
#ifdef ASTRAEUS_HAVE_SLURM
    auto client = exec::slurm::SlurmClient::open(slurm_conf);
    if (!client) return fail("--executor slurm: " + client.error().message);
    auto pools = exec::slurm_machines(*client);
    if (!pools) return fail("--executor slurm: " + pools.error().message);
    cfg.pools.clear();
    for (const auto& p : *pools) {
        service::PoolConfig pc;
        pc.name = p.partition;
        for (const auto& n : p.nodes) pc.machines.push_back({1, n.gpus});
        cfg.pools.push_back(std::move(pc));
        std::string names;
        for (const auto& n : p.nodes) names += (names.empty() ? "" : ",") + n.name;
        service::log(service::LogLevel::Info, "executor.slurm.partition",
                     {{"partition", p.partition}, {"nodes", names}});
    }
    exec::SlurmExecutorConfig sc;
    sc.runs_dir = cfg.data_dir + "/runs";
    sc.grace_s = grace_s;
    sc.sample_period_s = cfg.local.utilization_period_s;  // the service counts a sample 2 periods
    return std::make_unique<exec::SlurmExecutor>(sc, std::move(*client), std::move(*pools));
#else
    (void)cfg, (void)slurm_conf, (void)grace_s;
    return fail("--executor slurm: this astraeus was built without libslurm (apt install "
                "libslurm-dev, then rebuild)");
#endif
}

}  // namespace astraeus::cli
