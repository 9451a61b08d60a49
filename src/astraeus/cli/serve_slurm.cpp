#include "astraeus/cli/serve_slurm.hpp"

#ifdef ASTRAEUS_HAVE_SLURM
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

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
    // Which setup (docs/slurm.md, "Two setups"): what Slurm's scheduler is, and which partitions
    // Astraeus owns; refused when backfill would share Astraeus's nodes and order.
    auto scheduler = client->scheduler_type();
    if (!scheduler) return fail("--executor slurm: " + scheduler.error().message);
    auto parts = client->partitions();
    if (!parts) return fail("--executor slurm: " + parts.error().message);
    auto mode = exec::slurm_mode(*scheduler, cfg.slurm_partitions, *parts);
    if (!mode) return fail("--executor slurm: " + mode.error().message);
    auto pools = exec::slurm_machines(*client, cfg.slurm_partitions);
    if (!pools) return fail("--executor slurm: " + pools.error().message);
    service::log(service::LogLevel::Info, "executor.slurm.mode",
                 {{"mode", mode->name}, {"scheduler", *scheduler}, {"message", mode->text}});
    for (const auto& w : mode->warnings)
        service::log(service::LogLevel::Warn, "executor.slurm.mode", {{"message", w}});
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
    // The runs' folders: outside the service's private data folder (0700: no job's user could
    // reach them there), `local.runs_dir` or <data_dir>-runs, on a file system every node sees.
    std::error_code ec;
    const std::string data_abs =
        std::filesystem::weakly_canonical(std::filesystem::absolute(cfg.data_dir, ec), ec).string();
    std::string runs = cfg.local.runs_dir == "astraeus-runs" ? data_abs + "-runs" : cfg.local.runs_dir;
    runs = std::filesystem::weakly_canonical(std::filesystem::absolute(runs, ec), ec).string();
    if (runs == data_abs || runs.starts_with(data_abs + "/") || data_abs.starts_with(runs + "/"))
        return fail("--executor slurm: local.runs_dir " + runs + " must be outside the data folder " + data_abs +
                    " (the jobs' users must not reach the store)");
    sc.runs_dir = runs;
    // Who the jobs run as: each workspace's worker identity (the local executor's), in its
    // Slurm account (docs/slurm.md, "Tenants"). Names in the configuration are checked now.
    sc.identity = cfg.local.sandbox;
    sc.allow_root = cfg.local.runner.allow_root;
    sc.run_as_user = cfg.local.runner.run_as_user;
    sc.accounts = cfg.slurm_accounts;
    // The steps' sandbox (docs/slurm.md "What confines a step"): the data directory and the
    // runs' root hidden from the workers; required as the local sandbox is (on by default as root).
    sc.step_sandbox = sc.identity.enabled;
    sc.step_sandbox_required = sc.identity.enabled && sc.identity.require_full.value_or(::geteuid() == 0);
    sc.step_hide = {data_abs, runs};
    for (const std::string& h : sc.identity.hide) sc.step_hide.push_back(h);
    std::vector<std::string> users = {sc.run_as_user};
    for (const auto& [ws, user] : sc.identity.users) users.push_back(user);
    for (const auto& user : users) {
        if (user.empty()) continue;
        std::vector<char> buf(16384);
        struct passwd pw {};
        struct passwd* found = nullptr;
        if (::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found)
            return fail("--executor slurm: the configuration names the Unix user '" + user +
                        "' (local.user or local.sandbox.users), which does not exist on this machine");
    }
    if (!sc.accounts.empty()) {
        if (auto known = client->accounts()) {
            for (const auto& [ws, acct] : sc.accounts)
                if (!acct.empty() && std::find(known->begin(), known->end(), acct) == known->end())
                    return fail("--executor slurm: slurm.accounts maps workspace '" + ws + "' to the Slurm account '" +
                                acct + "', which slurmdbd does not know (sacctmgr add account " + acct + ")");
        } else {
            service::log(service::LogLevel::Warn, "executor.slurm.accounts",
                         {{"message", "slurmdbd does not answer: the configured accounts are not checked"}});
        }
    }
    if (::geteuid() != 0)
        service::log(service::LogLevel::Warn, "executor.slurm.identity",
                     {{"message", "not root: every job runs as this service's own user (Slurm lets only root "
                                  "or SlurmUser submit for another user; docs/slurm.md \"Tenants\")"}});
    service::log(sc.step_sandbox ? service::LogLevel::Info : service::LogLevel::Warn, "executor.slurm.step_sandbox",
                 {{"on", sc.step_sandbox ? "yes" : "no"},
                  {"required", sc.step_sandbox_required ? "yes" : "no"},
                  {"why", sc.step_sandbox ? "each step in user, pid and mount namespaces (astraeus step-sandbox); "
                                            "what a node cannot give is said in the job's job.out"
                                          : "local.sandbox.enabled is false: the steps run unconfined"}});
    sc.grace_s = grace_s;
    sc.pending_bound_s = cfg.slurm_pending_bound_s;
    sc.sample_period_s = cfg.local.utilization_period_s;  // the service counts a sample 2 periods
    return std::make_unique<exec::SlurmExecutor>(sc, std::move(*client), std::move(*pools));
#else
    (void)cfg, (void)slurm_conf, (void)grace_s;
    return fail("--executor slurm: this astraeus was built without libslurm (apt install "
                "libslurm-dev, then rebuild)");
#endif
}

}  // namespace astraeus::cli
