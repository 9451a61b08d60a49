// `astraeus agent`: the node agent of one machine (docs/agents.md). Talks to the service over
// its REST API with an agent token (`astraeus admin token create --agent`), through the
// client's HTTP transport (client/http_transport.hpp: the one adapter of cpp-httplib's client).
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include "astraeus/exec/sandbox/sandbox.hpp"
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <pthread.h>
#include <thread>

#include "astraeus/cli/commands.hpp"
#include "astraeus/client/agent_api_url.hpp"
#include "astraeus/client/http_transport.hpp"
#include "astraeus/exec/agent_node.hpp"
#include "astraeus/exec/nvml.hpp"
#include "astraeus/service/log.hpp"

namespace astraeus::cli {
namespace {

struct AgentOptions {
    std::vector<std::string> api;  ///< the service's addresses: one, or every replica's
    std::string token;
    std::string token_file;
    std::string name;
    std::string pool = "default";
    int gpus = 0;
    std::string work_dir = "astraeus-agent";
    std::string addr;
    std::string stop_signal = "TERM";
    double grace_s = 30;
    std::vector<std::string> unix_users;
    bool allow_root = false;
    bool no_sandbox = false;         ///< --no-sandbox
    std::string require_sandbox;     ///< --require-sandbox yes|no ("": yes as root)
    std::uint64_t memory_bytes = 0;  ///< --memory-limit
    std::int64_t pids_max = 4096;    ///< --pids-limit
    std::uint32_t uid_base = 3000000;
    std::string log_level = "info";
    double utilization_period_s = 10;
    std::size_t log_chunk_bytes = 256 << 10;
};

Result<int> signal_number(const std::string& s) {
    static const std::pair<const char*, int> kSignals[] = {
        {"TERM", SIGTERM}, {"INT", SIGINT}, {"HUP", SIGHUP}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"QUIT", SIGQUIT}};
    std::string n = s.rfind("SIG", 0) == 0 ? s.substr(3) : s;
    for (const auto& [name, sig] : kSignals)
        if (n == name) return sig;
    return fail("--stop-signal: expected TERM, INT, HUP, USR1, USR2 or QUIT, got '" + s + "'");
}

/// The exit status when the service refuses the registration with 401 or 403 (docs/agents.md).
constexpr int kExitTokenRefused = 3;
/// The exit status when the service refuses this machine's registration for good (400, 409, 422:
/// a GPU count or pool other than the name's, an unknown pool, a bad name; docs/agents.md).
constexpr int kExitRegistrationRefused = 4;

int run_agent(AgentOptions o) {
    service::set_log_level(o.log_level);
    if (o.api.empty()) {
        std::cerr << "astraeus agent: --api URL is required (e.g. http://scheduler:8080)\n";
        return 2;
    }
    for (std::string& a : o.api) {
        if (auto origin = client::parse_agent_api_url(a); origin) {
            a = *origin;  // "/v1" dropped: the agent's requests name /v1/agent/...
        } else {
            std::cerr << "astraeus agent: " << origin.error().message << "\n";
            return 2;
        }
    }
    if (o.token.empty() && !o.token_file.empty()) {
        // A token anyone on the machine can read is anyone's: refused, like ssh refuses such keys.
        struct stat sb {};
        if (::stat(o.token_file.c_str(), &sb) != 0) {
            std::cerr << "astraeus agent: --token-file " << o.token_file << ": " << std::strerror(errno) << "\n";
            return 2;
        }
        if ((sb.st_mode & 077) != 0) {
            std::cerr << "astraeus agent: --token-file " << o.token_file << " is readable or writable by others (mode "
                      << std::oct << (sb.st_mode & 0777) << std::dec << "): chmod 600 it\n";
            return 2;
        }
        std::ifstream f(o.token_file);
        std::getline(f, o.token);
        if (o.token.empty()) {
            std::cerr << "astraeus agent: --token-file " << o.token_file << " holds no token\n";
            return 2;
        }
    }
    if (o.token.empty()) {
        std::cerr << "astraeus agent: give --token TOKEN or --token-file FILE (astraeus admin token create --agent)\n";
        return 2;
    }
    if (o.name.empty()) {
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) == 0) o.name = host;
    }
    // NVML's GPUs (libnvidia-ml.so.1 through dlopen, or $ASTRAEUS_NVML_LIBRARY, like `serve`):
    // their count unless --gpus declares one, and their utilization samples whenever it loads.
    std::shared_ptr<exec::GpuSource> gpu_source;
    {
        auto nvml = exec::Nvml::open(exec::nvml_library());
        if (nvml) {
            if (o.gpus <= 0) o.gpus = static_cast<int>((*nvml)->gpus().size());
            for (const auto& g : (*nvml)->gpus())
                service::log(service::LogLevel::Info, "gpu.found",
                             {{"index", std::to_string(g.index)}, {"uuid", g.uuid}, {"name", g.name},
                              {"memory_bytes", std::to_string(g.memory_bytes)}});
            gpu_source = std::move(*nvml);
        }
        if (o.gpus <= 0) {
            std::cerr << "astraeus agent: no GPUs to offer: NVML "
                      << (nvml ? std::string("reports 0 GPUs") : "is not available (" + nvml.error().message + ")")
                      << "; declare them with --gpus N (CPU-only workers on a machine without NVIDIA GPUs)\n";
            return 2;
        }
    }
    if (!(o.utilization_period_s >= 0.01)) {
        std::cerr << "astraeus agent: --utilization-period must be at least 0.01 seconds\n";
        return 2;
    }
    service::log(service::LogLevel::Info, "agent.gpus",
                 {{"gpus", std::to_string(o.gpus)}, {"nvml", gpu_source ? "yes" : "no"},
                  {"utilization_period_s", std::to_string(o.utilization_period_s)}});
    exec::NodeAgentConfig c;
    c.gpu_source = gpu_source;
    c.utilization_period_s = o.utilization_period_s;
    c.name = o.name;
    c.pool = o.pool;
    c.gpus = o.gpus;
    {
        std::error_code ec;
        std::filesystem::create_directories(o.work_dir, ec);
        c.work_dir = std::filesystem::absolute(o.work_dir, ec).lexically_normal().string();
        if (!c.work_dir.empty() && c.work_dir.back() == '/') c.work_dir.pop_back();
    }
    c.addr = o.addr;
    c.log_chunk_bytes = o.log_chunk_bytes;
    auto sig = signal_number(o.stop_signal);
    if (!sig) {
        std::cerr << "astraeus agent: " << sig.error().message << "\n";
        return 2;
    }
    c.runner.stop_signal = *sig;
    c.runner.grace_s = o.grace_s;
    c.runner.allow_root = o.allow_root;
    for (const std::string& m : o.unix_users) {
        const auto eq = m.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == m.size()) {
            std::cerr << "astraeus agent: --unix-user: expected WORKSPACE=USER, got '" << m << "'\n";
            return 2;
        }
        c.unix_users[m.substr(0, eq)] = m.substr(eq + 1);
    }
    // The worker sandbox (exec/sandbox/sandbox.hpp): what this machine allows, said at start;
    // refused when required (--require-sandbox, yes by default as root) and something is off.
    c.sandbox.enabled = !o.no_sandbox;
    c.sandbox.memory_bytes = o.memory_bytes;
    c.sandbox.pids_max = o.pids_max;
    c.sandbox.uid_base = o.uid_base;
    c.sandbox.users = c.unix_users;
    {
        ::chmod(c.work_dir.c_str(), 0700);  // checkpoints and logs of every workspace: root's only
        std::error_code ec;
        if (auto canon = std::filesystem::canonical(c.work_dir, ec); !ec) c.work_dir = canon.string();
        auto probe = std::make_shared<exec::sandbox::Probe>(exec::sandbox::probe(
            c.sandbox, "agent-" + std::to_string(std::hash<std::string>{}(c.name + "\n" + c.work_dir) % 1000000007ull)));
        for (const auto& p : probe->protections)
            service::log(p.on ? service::LogLevel::Info : service::LogLevel::Warn, "sandbox.protection",
                         {{"name", p.name}, {"on", p.on ? "yes" : "no"}, {"why", p.why}});
        const bool require = (o.require_sandbox.empty() ? probe->root : o.require_sandbox == "yes") && !o.no_sandbox;
        if (require && !probe->full()) {
            std::cerr << "astraeus agent: the worker sandbox is required (--require-sandbox, yes by default as root) "
                         "but these protections are off: "
                      << probe->missing() << " (docs/security.md)\n";
            return 2;
        }
        if (c.sandbox.enabled) {
            c.runner.sandbox = probe;
            c.runner.hide = {c.work_dir};
            if (const int n = exec::sandbox::sweep(*probe); n > 0)
                service::log(service::LogLevel::Warn, "sandbox.swept", {{"cgroups", std::to_string(n)}});
        }
    }
    if (::geteuid() == 0 && !c.sandbox.enabled && c.unix_users.empty() && !o.allow_root)
        service::log(service::LogLevel::Warn, "agent.root",
                     {{"note", "running as root without the sandbox nor --unix-user: launches are refused unless --allow-root"}});

    const std::string token = o.token;
    exec::AgentPostTo post = [token](const std::string& origin, const std::string& path, const nlohmann::json& body)
        -> Result<std::pair<int, nlohmann::json>> {
        client::HttpRequest rq;
        rq.method = "POST";
        rq.origin = origin;
        rq.target = path;
        rq.bearer_token = token;
        rq.body = body.dump();
        rq.connect_timeout_s = 5;
        rq.read_timeout_s = 30;
        auto res = client::http_send(rq);
        if (!res) return std::unexpected(res.error());
        nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
        if (j.is_discarded()) j = nlohmann::json{{"error", res->body.substr(0, 200)}};
        return std::pair{res->status, std::move(j)};
    };

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    exec::NodeAgent agent(c, o.api, post);
    if (auto ok = agent.start(); !ok) {
        std::cerr << "astraeus agent: " << ok.error().message << "\n";
        return 1;
    }
    std::thread signals([&] {
        int s = 0;
        sigwait(&set, &s);
        service::log(service::LogLevel::Info, "agent.shutdown", {{"signal", s == SIGTERM ? "SIGTERM" : "SIGINT"}});
        agent.request_stop();
    });
    auto ran = agent.run();
    // run() returns after request_stop(), from the signal thread (it has returned), or when the
    // service refused the token: then the signal thread is woken to end.
    if (!ran) pthread_kill(signals.native_handle(), SIGTERM);
    signals.join();
    if (!ran && agent.refusal_status() != 401 && agent.refusal_status() != 403) {
        std::cerr << "astraeus agent: " << ran.error().message
                  << " (this machine's registration cannot succeed as it is: check --name, --pool and "
                     "--gpus against the service's configuration; exiting with status "
                  << kExitRegistrationRefused << ")\n";
        return kExitRegistrationRefused;
    }
    if (!ran) {
        std::cerr << "astraeus agent: " << ran.error().message
                  << " (the agent token is wrong, revoked or bound to another machine; exiting with status "
                  << kExitTokenRefused << ")\n";
        return kExitTokenRefused;
    }
    return 0;
}

}  // namespace

std::function<int()> add_agent(CLI::App& app) {
    auto o = std::make_shared<AgentOptions>();
    CLI::App* s = app.add_subcommand("agent", "the node agent of this machine: runs the service's workers here");
    s->footer("Exit status: 0 stopped by SIGTERM/SIGINT; 1 the work directory cannot be prepared; 2 a usage "
              "error; 3 the service refused the registration with 401 or 403 (the agent token is wrong, "
              "revoked, or bound to another machine name: see the log). Other failures (no answer, 5xx) "
              "are retried every second.\n");
    s->add_option("--api", o->api,
                  "the service's URL, http[s]://HOST[:PORT] or the same with /v1 (as ASTRALYX_API); "
                  "another form exits 2. Replicas: every one's URL, comma-separated or --api repeated "
                  "(the agent follows the leader among them)")
        ->required()
        ->delimiter(',');
    s->add_option("--token", o->token, "an agent token (astraeus admin token create --agent)");
    s->add_option("--token-file", o->token_file, "a file holding the agent token (first line)");
    s->add_option("--name", o->name, "this machine's name in the cluster (default: the host name)");
    s->add_option("--pool", o->pool, "the pool it joins (default: default)");
    s->add_option("--gpus", o->gpus, "GPUs to offer (default: NVML's; CPU-only workers on a machine without NVIDIA GPUs)");
    s->add_option("--work-dir", o->work_dir, "logs, checkpoints, progress files (default astraeus-agent)");
    s->add_option("--addr", o->addr, "MASTER_ADDR of gangs led here (default: this machine as the service sees it)");
    s->add_option("--stop-signal", o->stop_signal, "the checkpoint signal (default TERM)");
    s->add_option("--grace", o->grace_s, "seconds from the checkpoint signal to SIGKILL (default 30)");
    s->add_option("--unix-user", o->unix_users, "WORKSPACE=USER: run that workspace's workers as USER (agent as root)");
    s->add_flag("--allow-root", o->allow_root, "as root: allow workers of unmapped workspaces to run as root");
    s->add_flag("--no-sandbox", o->no_sandbox, "no worker sandbox (uids, cgroups, namespaces: docs/security.md)");
    s->add_option("--require-sandbox", o->require_sandbox, "yes: refuse to start unless every protection is on (default yes as root)")
        ->check(CLI::IsMember({"yes", "no"}));
    s->add_option("--memory-limit", o->memory_bytes, "bytes of memory per worker (its cgroup; default none)");
    s->add_option("--pids-limit", o->pids_max, "processes per worker (its cgroup; default 4096, 0: none)");
    s->add_option("--uid-base", o->uid_base, "workspace W's workers run as uid BASE + W's id (default 3000000)")
        ->check(CLI::Range(1000u, 4000000000u));
    s->add_option("--utilization-period", o->utilization_period_s,
                  "seconds between GPU utilization samples (NVML only; default 10)");
    s->add_option("--log-level", o->log_level, "debug, info, warn or error (default info)")
        ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
    s->add_option("--log-chunk-bytes", o->log_chunk_bytes,
                  "workers' log bytes shipped to the service per request (default 262144)")
        ->check(CLI::Range(std::size_t{1024}, std::size_t{512} << 10));
    return [o] { return run_agent(*o); };
}

}  // namespace astraeus::cli
