// `astraeus serve`: the live service: REST API, scheduler, goodput, metrics
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iostream>
#include <pthread.h>
#include <thread>
#include <vector>

#include "astraeus/api/http_server.hpp"
#include "astraeus/api/listen_socket.hpp"
#include "astraeus/exec/agent_hub.hpp"
#include "astraeus/cli/commands.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/service/store_open.hpp"
#include "astraeus/service/follower_snapshots.hpp"
#include "astraeus/service/leadership.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/exec/local_executor.hpp"
#include "astraeus/exec/nvml.hpp"
#include "astraeus/cli/serve_slurm.hpp"
#include "astraeus/service/sim_executor.hpp"
#include "astraeus/store/pg_store.hpp"
#include "astraeus/store/store.hpp"

namespace astraeus::cli {
namespace {

struct ServeOptions {
    std::string config;
    std::string listen;
    std::string data_dir;
    std::string port_file;
    std::string agent_listen;     ///< --agent-listen HOST:PORT: the node agents' own listener
    std::string agent_port_file;  ///< --agent-port-file
    int header_timeout_s = 10;    ///< --header-timeout: a request's line and headers (api::HttpLimits)
    int body_timeout_s = 30;      ///< --body-timeout: a request's body
    std::string log_level = "info";
    api::TlsFiles tls;
    std::string executor = "local";
    std::string slurm_conf;    ///< --slurm-conf (executor slurm; default SLURM_CONF)
    Seconds slurm_grace_s = 10;  ///< --slurm-grace
    int gpus = 0;  ///< --gpus: declared GPUs of this machine (local executor), 0: from NVML
};

/// Probes the worker sandbox (exec/sandbox/sandbox.hpp), logs each protection on or off and
/// why, refuses when the configuration requires the full sandbox (local.sandbox.require; on by
/// default as root) and one is off, then sets the runner up and kills what a previous life of
/// this service left in its cgroups.
Result<void> apply_sandbox(exec::LocalExecutorConfig& lc, const std::string& data_abs) {
    namespace sb = exec::sandbox;
    const std::string instance = "local-" + std::to_string(std::hash<std::string>{}(data_abs) % 1000000007ull);
    auto probe = std::make_shared<sb::Probe>(sb::probe(lc.sandbox, instance));
    const bool explicit_id = lc.runner.allow_root || !lc.runner.run_as_user.empty();
    for (auto& p : probe->protections) {
        if (p.name == "identity" && p.on && explicit_id) {
            p.why = lc.runner.allow_root ? "on for mapped workspaces; the others run as root (local.allow_root)"
                                         : "every unmapped workspace runs as local.user '" + lc.runner.run_as_user + "'";
            service::log(service::LogLevel::Warn, "sandbox.protection", {{"name", p.name}, {"on", "partial"}, {"why", p.why}});
            continue;
        }
        service::log(p.on ? service::LogLevel::Info : service::LogLevel::Warn, "sandbox.protection",
                     {{"name", p.name}, {"on", p.on ? "yes" : "no"}, {"why", p.why}});
    }
    const bool require = lc.sandbox.require_full.value_or(probe->root) && lc.sandbox.enabled;
    if (require && !probe->full())
        return fail("--executor local: the worker sandbox is required (local.sandbox.require, on by default as root) "
                    "but these protections are off: " + probe->missing() +
                    "; give the service what it needs or set local.sandbox.require to false (docs/security.md)");
    if (!lc.sandbox.enabled) return {};
    lc.runner.sandbox = probe;
    lc.runner.hide = {data_abs, lc.runs_dir};
    for (const std::string& h : lc.sandbox.hide) lc.runner.hide.push_back(h);
    if (const int n = sb::sweep(*probe); n > 0)
        service::log(service::LogLevel::Warn, "sandbox.swept", {{"cgroups", std::to_string(n)},
                     {"message", "workers left by a previous life of this service were killed"}});
    return {};
}

/// The executor `o.executor` names, over config `cfg` (the local executor makes the cluster
/// this one machine with its GPUs). Errors are the user's: a clear message, exit 2.
Result<std::unique_ptr<service::Executor>> make_executor(const ServeOptions& o, service::ServiceConfig& cfg) {
    if (o.executor == "sim") return std::make_unique<service::SimExecutor>(cfg.executor);
    if (o.executor == "local") {
        std::shared_ptr<exec::GpuSource> source;
        int gpus = o.gpus;
        auto nvml = exec::Nvml::open(exec::nvml_library());
        if (nvml) {
            if (gpus == 0) gpus = static_cast<int>((*nvml)->gpus().size());
            for (const auto& g : (*nvml)->gpus())
                service::log(service::LogLevel::Info, "gpu.found",
                             {{"index", std::to_string(g.index)}, {"uuid", g.uuid}, {"name", g.name},
                              {"memory_bytes", std::to_string(g.memory_bytes)}});
            source = std::move(*nvml);
        }
        if (gpus <= 0)
            return fail("--executor local: no GPUs on this machine: NVML is not available (" +
                        (nvml ? std::string("it reports 0 GPUs") : nvml.error().message) +
                        ") and --gpus was not given; on a machine without NVIDIA GPUs, --gpus N "
                        "declares N GPUs for CPU-only workers");
        const std::string pool = cfg.pools.empty() ? "default" : cfg.pools.front().name;
        if (const std::string& user = cfg.local.runner.run_as_user; !user.empty()) {
            // A mistyped user refused every launch (each run failed after its retries): refuse
            // the configuration at start instead.
            std::vector<char> buf(16384);
            struct passwd pw {};
            struct passwd* found = nullptr;
            if (::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found)
                return fail("--executor local: the configuration's local.user '" + user +
                            "' is not a Unix user of this machine (the workers' user; "
                            "docs/agents.md)");
        }
        cfg.pools = {{pool, {{1, gpus}}}};
        cfg.local_gpus = gpus;
        exec::LocalExecutorConfig lc = cfg.local;
        // The runs' folders: outside the service's private data folder (workers must never
        // reach the store), `local.runs_dir` or <data_dir>-runs.
        std::error_code ec;
        const std::string data_abs = std::filesystem::weakly_canonical(std::filesystem::absolute(cfg.data_dir, ec), ec).string();
        if (lc.runs_dir == "astraeus-runs") lc.runs_dir = data_abs + "-runs";  // LocalExecutorConfig's default: unset
        const std::string runs_abs = std::filesystem::weakly_canonical(std::filesystem::absolute(lc.runs_dir, ec), ec).string();
        if (runs_abs == data_abs || runs_abs.starts_with(data_abs + "/") || data_abs.starts_with(runs_abs + "/"))
            return fail("--executor local: local.runs_dir " + runs_abs + " must be outside the data folder " + data_abs +
                        " (workers must not reach the store)");
        lc.runs_dir = runs_abs;
        service::log(service::LogLevel::Info, "executor.local",
                     {{"gpus", std::to_string(gpus)}, {"nvml", source ? "yes" : "no"}, {"runs_dir", lc.runs_dir}});
        if (auto ok = apply_sandbox(lc, data_abs); !ok) return std::unexpected(ok.error());
        // As root without the sandbox, local.user or local.allow_root every launch is refused
        // (each run then fails after its retries): say so at start, not only in each run's log.
        if (::geteuid() == 0 && !lc.sandbox.enabled && lc.runner.run_as_user.empty() && !lc.runner.allow_root)
            service::log(service::LogLevel::Warn, "executor.root",
                         {{"message", "running as root with the sandbox disabled and neither local.user "
                                      "nor local.allow_root: every worker will be refused "
                                      "(docs/security.md)"}});
        return std::make_unique<exec::LocalExecutor>(lc, source);
    }
    if (o.executor == "slurm") return make_slurm_executor(cfg, o.slurm_conf, o.slurm_grace_s);
    if (o.executor == "agents") return std::make_unique<exec::AgentHub>(cfg.agents);  // machines from agents
    return fail("--executor: expected local, sim, agents or slurm, got '" + o.executor + "'");
}

Result<std::pair<std::string, int>> split_listen(const std::string& s) {
    const auto colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0) return fail("--listen: expected HOST:PORT, got '" + s + "'");
    try {
        std::size_t used = 0;
        const int port = std::stoi(s.substr(colon + 1), &used);
        if (used != s.size() - colon - 1 || port < 0 || port > 65535) throw std::out_of_range("port");
        return std::pair{s.substr(0, colon), port};
    } catch (const std::exception&) {
        return fail("--listen: bad port in '" + s + "'");
    }
}

/// Writes `port` to `path` atomically (a temporary file renamed).
void write_port_file(const std::string& path, int port) {
    std::ofstream pf(path + ".tmp");
    pf << port << "\n";
    pf.close();
    std::rename((path + ".tmp").c_str(), path.c_str());
}

int run_serve(const ServeOptions& o) {
    using service::log;
    using service::LogLevel;
    service::set_log_level(o.log_level);
    Result<service::ServiceConfig> cfg = o.config.empty() ? service::ServiceConfig{} : service::load_config(o.config);
    if (!cfg) {
        std::cerr << "astraeus serve: " << cfg.error().message << "\n";
        return 2;
    }
    if (!o.listen.empty()) cfg->listen = o.listen;
    if (!o.data_dir.empty()) cfg->data_dir = o.data_dir;
    auto hp = split_listen(cfg->listen);
    if (!hp) {
        std::cerr << "astraeus serve: " << hp.error().message << "\n";
        return 2;
    }
    // A usage error exits before the data directory is created (make_executor runs after it).
    if (o.executor != "local" && o.executor != "sim" && o.executor != "agents" && o.executor != "slurm") {
        std::cerr << "astraeus serve: --executor: expected local, sim, agents or slurm, got '"
                  << o.executor << "'\n";
        return 2;
    }
    if (o.tls.enabled()) {
        if (auto ok = api::check_tls_files(o.tls); !ok) {
            std::cerr << "astraeus serve: " << ok.error().message << "\n";
            return 2;
        }
    }
    std::optional<std::pair<std::string, int>> agent_hp;
    if (!o.agent_listen.empty()) {
        auto a = split_listen(o.agent_listen);
        if (!a) {
            std::cerr << "astraeus serve: --agent-listen: " << a.error().message << "\n";
            return 2;
        }
        agent_hp = *a;
    }
    // Signals are taken by sigwait below, in this thread only: block them before any thread.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);

    // The ports first: a busy one fails here, before the data directory and the store are
    // created (it left a store initialised as organisation "default" behind), and the sockets
    // stay ours until the servers take them over (no other process can take the port between).
    auto main_sock = api::ListenSocket::open(hp->first, hp->second);
    if (!main_sock) {
        std::cerr << "astraeus serve: " << main_sock.error().message << "\n";
        return 1;
    }
    std::optional<api::ListenSocket> agent_sock;
    if (agent_hp) {
        auto a = api::ListenSocket::open(agent_hp->first, agent_hp->second);
        if (!a) {
            std::cerr << "astraeus serve: --agent-listen: " << a.error().message << "\n";
            return 1;
        }
        agent_sock = std::move(*a);
    }

    // One server per data directory: an exclusive lock held until the process exits.
    if (auto ok = store::create_data_dir(cfg->data_dir); !ok) {
        std::cerr << "astraeus serve: " << ok.error().message << "\n";
        return 1;
    }
    const std::string lock_path = cfg->data_dir + "/serve.lock";
    const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd < 0) {  // not writable by this user, a read-only file system, ...
        std::cerr << "astraeus serve: cannot open " << lock_path << " (the data directory must "
                  << "be writable by this user): " << std::strerror(errno) << "\n";
        return 1;
    }
    if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        std::cerr << "astraeus serve: another `astraeus serve` is using " << cfg->data_dir
                  << " (" << lock_path << " is locked)\n";
        return 1;
    }
    // On PostgreSQL several replicas may serve one database: the leader lease decides which one
    // leads (service/leadership.hpp); on SQLite this one always leads (the data directory's lock).
    auto st = service::open_configured_store(*cfg, o.config);
    if (!st) {
        std::cerr << "astraeus serve: " << st.error().message << "\n";
        return 1;
    }
    std::unique_ptr<service::Leadership> leadership;
    if (service::uses_postgresql(*cfg)) {
        auto l = service::Leadership::open(*cfg);
        if (!l) {
            std::cerr << "astraeus serve: " << (o.config.empty() ? std::string("config") : o.config)
                      << ": store.postgresql: " << l.error().message << "\n";
            return 1;
        }
        leadership = std::move(*l);
        if (!leadership->try_lead()) {
            // Follow: serve the users' reads from a read-only snapshot of the database, reloaded
            // every follower_refresh_s (service/follower_snapshots.hpp), and refuse the rest
            // with 503 naming the leader (api/http_server.hpp FollowerSource), while the lease
            // is tried again every lease_renew_s; SIGTERM/SIGINT end the wait.
            service::Leadership& ld = *leadership;
            const std::string conninfo = cfg->store_postgresql;
            service::FollowerSnapshots snapshots(
                *cfg, [conninfo] { return store::open_postgresql_read_only(conninfo); }, o.executor == "agents");
            snapshots.start();
            api::FollowerSource src;
            src.snapshot = [&snapshots] { return snapshots.current(); };
            src.data_age_ms = [&snapshots] { return snapshots.age_ms(); };
            src.leader = [&ld] { return ld.view(); };
            src.lease_metrics = [&ld] { return ld.metrics_text(); };
            src.retry_after_s = static_cast<int>(std::ceil(cfg->lease_renew_s));
            api::HttpLimits flimits;
            flimits.header_timeout = std::chrono::seconds(o.header_timeout_s);
            flimits.body_timeout = std::chrono::seconds(o.body_timeout_s);
            std::optional<api::HttpServer> standby;
            standby.emplace(std::move(src), std::max(1, cfg->threads), o.tls, flimits);
            // The follower's server accepts on copies of the sockets; the leader's server
            // takes the originals over, so the ports stay open through the change.
            auto main_copy = main_sock->duplicate();
            auto sp = main_copy ? standby->bind(std::move(*main_copy)) : Result<int>(std::unexpected(main_copy.error()));
            if (!sp) {
                std::cerr << "astraeus serve: " << sp.error().message << "\n";
                return 1;
            }
            if (agent_sock) {
                auto agent_copy = agent_sock->duplicate();
                auto ap = agent_copy ? standby->bind_agents(std::move(*agent_copy))
                                     : Result<int>(std::unexpected(agent_copy.error()));
                if (!ap) {
                    std::cerr << "astraeus serve: --agent-listen: " << ap.error().message << "\n";
                    return 1;
                }
            }
            std::thread standby_thread([&standby] { standby->serve(); });
            const auto end_standby = [&] {  // the leader's server takes the sockets over next
                standby->stop();
                standby_thread.join();
                standby.reset();
                snapshots.stop();
            };
            if (!o.port_file.empty()) write_port_file(o.port_file, *sp);
            const store::LeaseView v = ld.view();
            log(LogLevel::Info, "leader.following",
                {{"replica", ld.replica()}, {"leader", v.holder}, {"leader_address", v.holder_address},
                 {"generation", std::to_string(v.generation)}, {"port", std::to_string(*sp)},
                 {"refresh_s", std::to_string(cfg->follower_refresh_s)},
                 {"snapshot", snapshots.current() ? "loaded" : "not loaded: " + snapshots.last_error()}});
            for (;;) {
                const double w = cfg->lease_renew_s;
                timespec ts{static_cast<time_t>(w), static_cast<long>((w - std::floor(w)) * 1e9)};
                siginfo_t info;
                const int sg = sigtimedwait(&set, &info, &ts);
                if (sg == SIGTERM || sg == SIGINT) {
                    log(LogLevel::Info, "shutdown", {{"signal", sg == SIGTERM ? "SIGTERM" : "SIGINT"}, {"role", "follower"}});
                    end_standby();
                    log(LogLevel::Info, "stopped");
                    return 0;
                }
                if (ld.try_lead()) break;
            }
            end_standby();
            log(LogLevel::Info, "leader.taking_over",
                {{"replica", ld.replica()}, {"generation", std::to_string(ld.generation())},
                 {"previous_leader", v.holder}});
        }
        (*st)->set_fencing_generation(leadership->generation());
    }
    auto exec = make_executor(o, *cfg);
    if (!exec) {
        std::cerr << "astraeus serve: " << exec.error().message << "\n";
        return 2;
    }
    if (leadership) (*exec)->set_fencing_generation(leadership->generation());
    auto svc = service::Service::open(*cfg, std::move(*st), std::move(*exec));
    if (!svc) {
        std::cerr << "astraeus serve: " << svc.error().message << "\n";
        return 1;
    }
    api::HttpLimits limits;
    limits.header_timeout = std::chrono::seconds(o.header_timeout_s);
    limits.body_timeout = std::chrono::seconds(o.body_timeout_s);
    api::HttpServer http(**svc, cfg->threads, o.tls, limits);
    auto port = http.bind(std::move(*main_sock));
    if (!port) {
        std::cerr << "astraeus serve: " << port.error().message << "\n";
        return 1;
    }
    std::optional<int> agent_port;
    if (agent_hp) {
        auto ap = http.bind_agents(std::move(*agent_sock));
        if (!ap) {
            std::cerr << "astraeus serve: --agent-listen: " << ap.error().message << "\n";
            return 1;
        }
        agent_port = *ap;
        if (!o.agent_port_file.empty()) write_port_file(o.agent_port_file, *ap);
        log(LogLevel::Info, "http.agents_listening", {{"address", agent_hp->first}, {"port", std::to_string(*ap)}});
    }
    if (!o.port_file.empty()) write_port_file(o.port_file, *port);
    if (const std::string w = api::tls_key_warning(o.tls); !w.empty())
        log(LogLevel::Warn, "tls.key_readable", {{"message", w}});
    log(LogLevel::Info, "http.listening",
        {{"address", hp->first}, {"port", std::to_string(*port)}, {"data_dir", cfg->data_dir},
         {"scheme", o.tls.enabled() ? "https" : "http"},
         {"connection_budget", std::to_string(http.connection_budget())},
         {"time_scale", std::to_string(cfg->time_scale)}});
    if (leadership) {
        service::Leadership& ld = *leadership;
        (*svc)->set_leadership([&ld] { return ld.metrics_text(); },
                               nlohmann::json{{"role", "leader"}, {"replica", ld.replica()}, {"generation", ld.generation()}});
        ld.keep_leading();
    }
    std::thread sched([&] { (*svc)->loop(); });
    std::thread web([&] { http.serve(); });
    int sig = 0;
    sigwait(&set, &sig);
    log(LogLevel::Info, "shutdown", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    http.stop();
    web.join();
    (*svc)->stop();
    sched.join();
    (*svc)->shutdown();  // local workers: checkpoint signal, grace, attempts recorded as preempted
    if (leadership) leadership->release();  // a follower takes over at its next try
    log(LogLevel::Info, "stopped");
    return 0;
}

}  // namespace

std::function<int()> add_serve(CLI::App& app) {
    auto o = std::make_shared<ServeOptions>();
    CLI::App* s = app.add_subcommand("serve", "the live service: REST API, scheduler, goodput, metrics");
    s->add_option("--config", o->config, "service config (JSON); defaults without it");
    s->add_option("--listen", o->listen, "HOST:PORT to listen on (default 127.0.0.1:8080; port 0: any)");
    s->add_option("--data-dir", o->data_dir, "directory of the SQLite store (default astraeus-data)");
    s->add_option("--port-file", o->port_file, "write the bound port to this file once listening");
    s->add_option("--agent-listen", o->agent_listen,
                  "HOST:PORT of a second listener for the node agents only (their endpoints and "
                  "health), so that user traffic cannot crowd them out (docs/agents.md)");
    s->add_option("--header-timeout", o->header_timeout_s,
                  "seconds a client has to send a request's line and headers, idle keep-alive "
                  "time included (default 10)")
        ->check(CLI::Range(1, 3600));
    s->add_option("--body-timeout", o->body_timeout_s, "seconds a client has to send a request's body (default 30)")
        ->check(CLI::Range(1, 3600));
    s->add_option("--agent-port-file", o->agent_port_file, "write --agent-listen's bound port to this file");
    s->add_option("--log-level", o->log_level, "debug, info, warn or error (default info)")
        ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
    s->add_option("--tls-cert", o->tls.cert_file, "serve HTTPS with this certificate (chain), PEM; needs --tls-key");
    s->add_option("--tls-key", o->tls.key_file, "the certificate's private key, PEM (unencrypted)");
    s->add_option("--executor", o->executor,
                  "local (default: workers run as child processes on this machine), agents (node "
                  "agents), sim (simulated workers) or slurm (Slurm runs the workers; docs/slurm.md)");
    s->add_option("--slurm-conf", o->slurm_conf,
                  "executor slurm: the cluster's slurm.conf (default: SLURM_CONF, then Slurm's)");
    s->add_option("--slurm-grace", o->slurm_grace_s,
                  "executor slurm: seconds between the checkpoint signal and requeue-held "
                  "(default 10)")
        ->check(CLI::Range(1, 3600));
    s->add_option("--gpus", o->gpus, "local executor: this machine's GPUs when it has no NVML "
                                     "(CPU-only workers); default: NVML's count")
        ->check(CLI::Range(1, 1024));
    return [o] { return run_serve(*o); };
}

}  // namespace astraeus::cli
