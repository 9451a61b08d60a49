// The node agent (`astraeus agent`): one per machine. It registers the machine with the service
// (name, pool, GPUs, the workers it still runs), heartbeats, takes the launches, stops and kills
// the heartbeat replies carry, runs the workers with the worker runner (exec/worker_runner.hpp)
// and reports what happens to them as numbered events, re-sent until the service acknowledges
// them (protocol: docs/agents.md "Node agents: the protocol").
// Files under the work directory: logs/<workspace>/<run>/attempt-<k>/worker-<i>.log (shipped to
// the service by exec/log_shipper.hpp; agent-<name>.logs: the logs not fully shipped),
// checkpoints/<workspace>/<run>/ (kept across attempts: put the work directory on storage that
// every machine shares for a gang to resume elsewhere), progress/..., and
// agent-<name>.state (the process groups it runs, so that a restarted agent kills the workers
// of its previous life: their attempts were failed when it was lost or restarted; and the
// highest lease generation it has seen, line "generation N").
// Fencing (issue 23, docs/agents.md "Fencing"): every reply of the service carries the lease
// generation of the replica that answers ("generation"; 0 on SQLite and from a service that
// does not send it). The agent remembers the highest one it has seen and refuses a reply with a
// lower one: a deposed leader's late commands are not applied, its acknowledgements not taken
// (log line agent.stale_generation), and the agent moves on to the next service address.
// Several service addresses (replicas): the agent talks to one at a time; on no answer it tries
// the next one, on a follower's 503 (status "follower") the leader it names when that address
// is one of the agent's, else the next; after a move it registers again, as after a restart
// of the service (its running workers are reported and adopted).
// Thread safety: one thread runs it; request_stop() may be called from another.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/exec/gpu_sampler.hpp"
#include "astraeus/exec/log_shipper.hpp"
#include "astraeus/exec/worker_runner.hpp"

namespace astraeus::exec {

struct NodeAgentConfig {
    std::string name;                 ///< the machine's name (unique in the cluster)
    std::string pool = "default";
    int gpus = 0;                     ///< GPUs to offer (> 0)
    std::string work_dir;             ///< logs, checkpoints, progress files, state
    std::string addr;                 ///< MASTER_ADDR for gangs led here (empty: as the service sees it)
    RunnerConfig runner;              ///< signal, grace, log cap, root policy
    std::map<std::string, std::string> unix_users;  ///< workspace -> Unix user (agent as root, no sandbox)
    sandbox::SandboxConfig sandbox;   ///< identities and limits (runner.sandbox: what the machine allows)
    double retry_s = 1.0;             ///< wait between failed requests
    std::shared_ptr<GpuSource> gpu_source;  ///< NVML (null: no utilization samples)
    double utilization_period_s = 10;       ///< how often the GPUs are sampled
    std::size_t log_chunk_bytes = 256 << 10;  ///< log bytes shipped per request (exec/log_shipper.hpp)
};

/// One request to the service: POST `path` with a JSON body; (HTTP status, JSON answer), or
/// an error when no answer came back. The only way the agent talks to the network.
using AgentPost = std::function<Result<std::pair<int, nlohmann::json>>(const std::string& path,
                                                                      const nlohmann::json& body)>;
/// The same to the service at `origin` (one of the agent's service addresses).
using AgentPostTo = std::function<Result<std::pair<int, nlohmann::json>>(
    const std::string& origin, const std::string& path, const nlohmann::json& body)>;

/// The fencing rule: whether a reply carrying lease generation `reply_generation` may be
/// obeyed by an agent that has seen `highest_seen` (equal or higher: yes; lower: a deposed
/// leader's reply, refused).
constexpr bool generation_obeyed(std::int64_t reply_generation, std::int64_t highest_seen) {
    return reply_generation >= highest_seen;
}

/// The lease generation a reply carries ("generation"; 0 when absent or not an integer).
std::int64_t reply_generation(const nlohmann::json& reply);

class NodeAgent {
public:
    /// One service, reached by `post`.
    NodeAgent(NodeAgentConfig c, AgentPost post);
    /// Several service addresses (replicas; origins, at least one), reached by `post` with the
    /// address in use; the agent starts with the first one.
    NodeAgent(NodeAgentConfig c, std::vector<std::string> services, AgentPostTo post);
    ~NodeAgent();
    /// Kills the process groups of a previous life of this agent (its state file) and prepares
    /// the work directory; an error when it cannot be written.
    Result<void> start();
    /// Runs until request_stop(): register, heartbeat, commands, workers. Its destruction
    /// kills the workers still running (their attempts fail; the service places them again).
    /// An error (the service's reason, with the status) when a registration is refused with 401
    /// or 403: the token is unknown, revoked, not an agent token, for another cluster, or bound
    /// to another machine name; retrying cannot help. Other failures (no answer, 5xx, 409) are
    /// retried every retry_s until request_stop().
    Result<void> run();
    void request_stop() { stop_ = true; }
    /// After run() failed: the HTTP status the service refused the registration with (401/403:
    /// the token; 400/409/422: this machine's registration, e.g. a wrong GPU count or an unknown
    /// pool), 0 when it did not fail that way.
    int refusal_status() const { return refused_status_; }
    /// Workers not yet gone (tests, logs).
    std::size_t live() const { return live_.size(); }
    /// The highest lease generation seen (replies, or the state file of a previous life).
    std::int64_t generation() const { return generation_; }
    /// The service address in use (its index in the addresses given).
    std::size_t service_index() const { return current_; }

private:
    using Key = std::tuple<std::int64_t, int, int>;  ///< (run, attempt, worker)
    struct Live {
        std::string user;
        WorkerRunner::Handle h = 0;
        pid_t pid = 0;
        std::vector<int> gpus;
        int exit_code = -1;
        int signal = 0;
        bool exited = false;
        bool signalled = false;
    };

    bool do_register();  ///< sets refused_ on a 401, 403 (the token) or 400, 409, 422 (for good)
    /// The fencing check of a 200 reply: false (logged, the agent moves to another address)
    /// when its generation is below the highest seen; a higher one is remembered (state file).
    bool fenced_ok(const nlohmann::json& reply, const char* what);
    /// After a failed request: a follower's 503 naming a leader among our addresses moves there;
    /// no answer, or a follower's 503 naming none of them, moves to the next address. True when
    /// the address changed (the agent then registers again).
    bool follow(const Result<std::pair<int, nlohmann::json>>& r);
    void move_to(std::size_t index, const std::string& why);
    bool do_heartbeat(const char* path);
    void apply(const nlohmann::json& cmd);
    void launch(const nlohmann::json& cmd);
    void poll(int timeout_ms);
    void event(nlohmann::json e);
    nlohmann::json events_json() const;
    void save_state() const;
    WorkerRunner* runner_for(const std::string& user);
    std::string state_path() const;

    NodeAgentConfig c_;
    std::vector<std::string> services_;  ///< the service addresses ({""}: one, behind post_)
    std::size_t current_ = 0;            ///< the one in use
    AgentPostTo post_to_;
    AgentPost post_;                     ///< post_to_ at services_[current_]
    std::int64_t generation_ = 0;        ///< the highest lease generation seen
    std::atomic<bool> stop_{false};
    std::string session_;
    bool registered_ = false;
    std::string refused_;  ///< why a registration was refused for good; empty: not
    int refused_status_ = 0;  ///< the HTTP status of that refusal
    double heartbeat_s_ = 2;
    std::int64_t last_cmd_ = 0;
    std::int64_t next_event_ = 1;
    std::deque<nlohmann::json> events_;  ///< not yet acknowledged
    std::map<std::string, std::unique_ptr<WorkerRunner>> runners_;  ///< per Unix user ("" = ours)
    std::map<Key, Live> live_;
    std::chrono::steady_clock::time_point next_hb_{};
    GpuSampler sampler_;
    std::deque<std::vector<double>> gpu_samples_;  ///< not yet sent (exec/agent_gpu.hpp)
    LogShipper shipper_;  ///< workers' logs to the service; holds exit events until shipped
};

}  // namespace astraeus::exec
