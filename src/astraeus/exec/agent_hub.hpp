// The agents executor (`astraeus serve --executor agents`): the service's side of the node
// agent protocol (docs/agents.md "Node agents: the protocol"). Machines register through their
// agent; the hub keeps, per machine, its agent's session, last heartbeat, a queue of commands
// (launch, stop, kill: numbered, re-sent until acknowledged) and the last event it took (events
// are numbered by the agent and re-sent until acknowledged, so every message is idempotent).
// Per run it keeps the attempt's workers and turns the agents' worker events into the
// Executor's run events (Started when every worker is up, Finished when all exited 0, Failed at
// the first worker that exits non-zero or dies of a signal we did not send, StopDone / Released
// when the last process of a stopped / failed gang is gone). An agent silent for
// `lost_after_s` makes its machine lost (MachineLost; its workers count as gone); a heartbeat of
// a lost machine, or one with an unknown session, is answered "register again"; a registration
// reports the workers the agent still runs: those of the attempts the service still runs there
// are adopted, every other one is killed.
// The gang rules are exec/gang.hpp's (the local executor's); the hub keeps its own per-worker
// states because it must also take a gang back in the middle of its life after a restart of the
// service (workers adopted as up, running since the stored time), which Gang does not model.
// A placement's GPU list of -1 entries gives the count only: the hub then picks free indices.
// A heartbeat's GPU utilization samples ("gpu_util", exec/agent_gpu.hpp) become Utilization
// events of the running workers on that machine (exec/agent_hub_gpu.cpp).
// Times are Unix seconds of the service's clock. Thread safety: not thread-safe; the service
// calls it under its lock (the Executor calls, and on_register / on_heartbeat from the API).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "astraeus/exec/executor.hpp"

namespace astraeus::exec {

struct AgentHubConfig {
    Seconds heartbeat_s = 2;     ///< how often agents heartbeat (told at registration)
    Seconds lost_after_s = 30;   ///< an agent silent this long: its machine is lost
    /// MASTER_PORT of an attempt: base + (run * 7 + attempt) % span, or the next port of the
    /// span that no other live run with the same rank-0 machine holds (see master_port_for).
    int master_port_base = 29500;
    int master_port_span = 2000;
    int max_wait_ms = 0;           ///< heartbeat long-poll cap (0: none)
};

/// What the service shows of a machine in GET /v1/machines.
struct AgentMachineView {
    bool known = false;       ///< the hub has it (agents mode)
    bool connected = false;   ///< its agent registered and is not lost
    Seconds last_heartbeat_s = -1;
    std::string session;
    std::string addr;
    std::vector<std::pair<std::int64_t, int>> workers;  ///< (run, worker) live there
};

class AgentHub final : public Executor {
public:
    explicit AgentHub(AgentHubConfig c);

    // --- Executor --------------------------------------------------------------------------
    void launch(Seconds t, const ExecRun& r) override;
    void stop(Seconds t, std::int64_t run) override;
    void forget(std::int64_t run) override;
    void restore(const ExecRun& r, ExecPhase phase, Seconds since_s, Seconds executed_s) override;
    Seconds next_event_s() const override;
    bool pop_due(Seconds now, ExecEvent& out) override;
    Seconds executed_s(std::int64_t run, Seconds t) const override;
    void set_machines(const std::vector<std::int64_t>& ids, Seconds t) override;
    bool runs_commands() const override { return true; }

    // --- machines and the protocol (called by the service under its lock) -------------------
    /// A machine the service knows (from the store, or just registered): name, GPUs, address.
    /// Not connected until its agent registers; lost `lost_after_s` after t if it never does.
    void add_machine(std::int64_t id, const std::string& name, int gpus, const std::string& addr,
                     Seconds t);
    /// POST /v1/agent/register of machine `id` at t (body: docs/agents.md). The reply: the
    /// machine id, heartbeat period, lost timeout, workers adopted and killed, generation. A machine that
    /// was lost comes back (MachineBack); a new session of a connected machine (the agent was
    /// restarted) is a loss and a return (its workers of the last session are gone).
    nlohmann::json on_register(Seconds t, std::int64_t id, const nlohmann::json& body);
    /// POST /v1/agent/heartbeat (and /v1/agent/events) of machine `id` at t: takes the events,
    /// answers the commands not yet acknowledged, or {"register": true} when the agent must
    /// register again (unknown or stale session, machine lost).
    nlohmann::json on_heartbeat(Seconds t, std::int64_t id, const nlohmann::json& body);
    /// Whether machine `id` has commands its agent has not fetched (long-poll wake-up).
    bool has_commands(std::int64_t id) const;
    /// Called (under the service's lock) whenever commands are queued.
    void set_notify(std::function<void()> f) { notify_ = std::move(f); }
    AgentMachineView view(std::int64_t id) const;
    const AgentHubConfig& config() const { return c_; }
    /// The leader lease's generation (the fencing token, store/lease.hpp) that every reply to an
    /// agent carries as "generation"; agents refuse a reply below the highest they have seen
    /// (exec/agent_node.hpp). 0 (the default): one server on SQLite, no lease.
    void set_generation(std::int64_t g) { generation_ = g; }
    std::int64_t generation() const { return generation_; }

private:
    enum class W : std::uint8_t { Launching, Up, Gone };
    struct Worker {
        W st = W::Launching;
        int exit_code = -1;
        int signal = 0;
        std::vector<int> gpus;  ///< GPU indices on its machine
    };
    struct Run {
        ExecRun spec;
        ExecPhase phase = ExecPhase::Starting;
        std::vector<Worker> w;
        Seconds running_since = -1;
        Seconds executed_before = 0;
        bool limit_sent = false;
        bool ended = false;  ///< Finished / StopDone / Released reported
        int master_port = 0;  ///< MASTER_PORT sent to its workers (0: not chosen yet)
    };
    struct Machine {
        std::string name;
        int gpus = 0;
        std::string addr;
        std::string session;
        bool connected = false;
        bool lost = false;
        Seconds last_s = 0;  ///< last heartbeat (or when it became known)
        std::int64_t next_cmd = 1;
        std::deque<nlohmann::json> cmds;  ///< not yet acknowledged, in seq order
        std::int64_t events_acked = 0;
        std::set<int> used_gpus;
    };

    void emit(ExecEvent e);
    void command(std::int64_t machine, nlohmann::json cmd);
    void send_launches(Run& r, std::int64_t run);
    /// The launch command of worker k of `run` (its rank, local rank, GPUs, master address and
    /// port); chooses the run's master port first if it has none.
    nlohmann::json launch_command(std::int64_t run, Run& r, std::size_t k);
    /// A MASTER_PORT for `run`: the hashed port of its attempt, or the next one in the span not
    /// held by another live run whose rank 0 is on the same machine (so two gangs never share a
    /// rendezvous port on one machine while both run).
    int master_port_for(std::int64_t run, const Run& r) const;
    void signal_workers(std::int64_t run, Run& r, const char* op);
    void worker_event(Seconds t, std::int64_t machine, const nlohmann::json& ev);
    void worker_gone(Seconds t, std::int64_t run, Run& r, int k);
    void settle(Seconds t, std::int64_t run, Run& r);
    void lose(Seconds t, std::int64_t id, Machine& m);
    void free_gpus(Run& r, int k);
    /// The heartbeat's GPU samples ("gpu_util") -> Utilization events at t of the running
    /// workers on machine `id`; how many (exec/agent_hub_gpu.cpp).
    int take_gpu_samples(Seconds t, std::int64_t id, const nlohmann::json& body);
    std::vector<int> pick_gpus(std::int64_t machine, int count);

    AgentHubConfig c_;
    std::map<std::int64_t, Machine> machines_;
    std::map<std::int64_t, Run> runs_;
    std::deque<ExecEvent> events_;
    std::function<void()> notify_;
    std::int64_t generation_ = 0;
};

}  // namespace astraeus::exec
