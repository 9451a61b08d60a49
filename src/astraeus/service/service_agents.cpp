// The service's operations for node agents and machines (docs/agents.md, docs/api.md
// "Machines" and "Agents"): agent registration and heartbeats (the agents executor,
// exec/agent_hub.hpp, holds the protocol's state), GET /v1/machines, drain and undrain.
// Split from service.cpp, which holds the state, the loop and the transactions.
#include <algorithm>

#include "astraeus/exec/agent_hub.hpp"
#include "astraeus/service/agent_body.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

using nlohmann::json;
namespace gp = goodput;
using namespace detail;

namespace {

ApiError no_agents() {
    return {409, "this service does not run node agents: start it with `astraeus serve --executor agents`"};
}

}  // namespace

ApiResult<Caller> Service::authenticate_agent(std::string_view authorization) {
    auto c = authenticate_any(authorization);
    if (!c) return c;
    if (c->token.scope != store::Scope::Agent)
        return std::unexpected(ApiError{403, "the agent endpoints take agent tokens only (astraeus admin token create --agent)"});
    if (c->token.cluster_id != cluster_.id)
        return std::unexpected(ApiError{403, "the agent token is for another cluster"});
    return c;
}

void Service::agent_machine_added(PoolState& pool, const store::MachineRec& m) {
    const int idx = pool.sched->add_machine(m.gpus);
    pool.machines.push_back(m);
    const std::size_t pi = static_cast<std::size_t>(std::find_if(pools_.begin(), pools_.end(), [&](auto& p) {
                                                        return p.get() == &pool;
                                                    }) - pools_.begin());
    machine_index_[m.id] = {pi, idx};
    machine_names_[m.id] = m.name;
    pool.sched->set_machine_up(idx, false);  // up once its agent is connected
    pool.dirty = true;
}

ApiResult<json> Service::agent_register(const Caller& c, std::string_view body, const std::string& remote_addr) {
    if (!agents_) return std::unexpected(no_agents());
    auto b = parse_agent_body(body, AgentBody::Register);  // every field's type and range
    if (!b) return std::unexpected(b.error());
    const std::string name = b->value("name", "");
    const std::string pool_name = b->value("pool", "default");
    if (!valid_name(name)) return std::unexpected(bad("'name': 1-63 of A-Z a-z 0-9 . _ -, starting with a letter or digit"));
    if (!valid_pool_name(pool_name)) return std::unexpected(bad("'pool': not a valid pool name"));
    if (!(*b)["gpus"].is_number_integer() || (*b)["gpus"].get<std::int64_t>() < 1 ||
        (*b)["gpus"].get<std::int64_t>() > kMaxGpusPerWorker)
        return std::unexpected(bad("'gpus' must be an integer in 1..1024"));
    const int gpus = (*b)["gpus"].get<int>();
    if (b->value("session", "").empty()) return std::unexpected(bad("'session' is required"));
    std::string addr = b->value("addr", "");
    if (addr.empty()) addr = remote_addr;

    std::unique_lock lk(mu_);
    PoolState* pool = nullptr;
    for (auto& p : pools_)
        if (p->rec.name == pool_name) pool = p.get();
    if (!pool) {
        std::string m = "no pool named '" + pool_name + "' (pools:";
        for (const auto& p : pools_) m += " " + p->rec.name;
        return std::unexpected(bad(m + "; pools come from the service's configuration)"));
    }
    if (auto bound = bind_agent_token(c, name); !bound) return std::unexpected(bound.error());
    auto id = store_->register_machine(pool->rec.id, name, gpus, addr);
    // A store that cannot write (a full disk): 507, which the agent retries; a name registered
    // with other GPUs or another pool: 409, which it does not.
    if (!id) return std::unexpected(ApiError{id.error().message.starts_with("store: ") ? 507 : 409, id.error().message});
    // A second live agent for the same machine (not a restart: the first one still heartbeats).
    if (const auto v = agents_->view(*id); v.connected && v.session != b->value("session", "") &&
                                           clock_.now() - v.last_heartbeat_s < 3 * cfg_.agents.heartbeat_s) {
        log(LogLevel::Warn, "agent.duplicate_refused", {{"machine", name}, {"live_session", v.session}, {"addr", addr}});
        // Retry-After: when the old one will count as silent. A restarted agent whose
        // predecessor was killed retries then; a true duplicate keeps being refused.
        const Seconds silent_in = 3 * cfg_.agents.heartbeat_s - (clock_.now() - v.last_heartbeat_s);
        return std::unexpected(ApiError{409, "machine '" + name + "' already has a live agent (it heartbeat " +
                                                 std::to_string(static_cast<long long>(clock_.now() - v.last_heartbeat_s)) +
                                                 " s ago); a restarted agent is taken once the old one is silent",
                                        static_cast<int>(std::max<Seconds>(1, silent_in))});
    }
    const Seconds now0 = clock_.now();
    begin(now0);
    catch_up(now0);
    const Seconds now = last_event_s_;
    if (!machine_index_.contains(*id)) {
        store::MachineRec m;
        m.id = *id;
        m.pool_id = pool->rec.id;
        m.name = name;
        m.gpus = gpus;
        m.from_agent = true;
        m.addr = addr;
        agent_machine_added(*pool, m);
        log(LogLevel::Info, "machine.registered",
            {{"machine", name}, {"pool", pool_name}, {"gpus", std::to_string(gpus)}, {"addr", addr}});
    }
    agents_->add_machine(*id, name, gpus, addr, now);
    json reply = agents_->on_register(now, *id, *b);
    // Events the registration produced (adoptions, exits, a loss and return), then the machine
    // takes placements again unless drained.
    catch_up(now);
    auto [pi, idx] = machine_index_.at(*id);
    if (!drained_.contains(*id)) {
        pools_[pi]->sched->set_machine_up(idx, true);
        pools_[pi]->dirty = true;
    }
    batch_.machine_up.push_back({*id, true});
    batch_.machine_heartbeat.push_back({*id, now});
    schedule(pi, now);
    commit();
    wake_ = true;
    lk.unlock();
    cv_.notify_all();
    agent_cv_.notify_all();
    return reply;
}

ApiResult<json> Service::agent_heartbeat(const Caller& c, std::string_view body) {
    if (!agents_) return std::unexpected(no_agents());
    auto b = parse_agent_body(body, AgentBody::Heartbeat);  // every field's type and range
    if (!b) return std::unexpected(b.error());
    const std::string name = b->value("name", "");
    std::unique_lock lk(mu_);
    store::Id id = 0;
    for (const auto& [mid, n] : machine_names_)
        if (n == name) id = mid;
    if (id == 0) return json{{"register", true}, {"generation", agents_->generation()}};
    auto registered = agent_token_registered(c, name);
    if (!registered) return std::unexpected(registered.error());
    if (!*registered) return json{{"register", true}, {"generation", agents_->generation()}};  // its registration binds the token
    // A plain heartbeat changes nothing durable: no transaction. With events, the usual path:
    // catch up, take them, apply what follows, one transaction.
    const bool has_events = b->contains("events") && (*b)["events"].is_array() && !(*b)["events"].empty();
    if (!has_events) {
        json reply = agents_->on_heartbeat(std::max(last_event_s_, clock_.now()), id, *b);
        const int wait_ms = std::clamp(b->value("wait_ms", 0), 0, agents_->config().max_wait_ms);
        if (wait_ms > 0 && !reply.value("register", false) && reply["commands"].empty()) {
            agent_cv_.wait_for(lk, std::chrono::milliseconds(wait_ms),
                               [&] { return stopping_ || agents_->has_commands(id); });
            reply = agents_->on_heartbeat(std::max(last_event_s_, clock_.now()), id,
                                          json{{"session", (*b)["session"]}, {"commands_acked", (*b)["commands_acked"]}});
        }
        if (b->contains("gpu_util")) {  // utilization samples queued: the loop counts them
            wake_ = true;
            cv_.notify_all();
        }
        return reply;
    }
    const Seconds now0 = clock_.now();
    begin(now0);
    catch_up(now0);
    json reply = agents_->on_heartbeat(last_event_s_, id, *b);
    catch_up(last_event_s_);
    commit();
    wake_ = true;
    lk.unlock();
    cv_.notify_all();
    return reply;
}

ApiResult<json> Service::machines_list(const Caller& c) {
    if (c.token.scope != store::Scope::Operator && c.token.scope != store::Scope::OrgAdmin)
        return std::unexpected(ApiError{403, "machines are for cluster operators and organisation admins"});
    std::lock_guard lk(mu_);
    json arr = json::array();
    for (const auto& p : pools_)
        for (const store::MachineRec& m : p->machines) {
            json j;
            j["name"] = m.name;
            j["pool"] = p->rec.name;
            j["gpus"] = m.gpus;
            const auto [pi, idx] = machine_index_.at(m.id);
            const bool up_in_sched = pools_[pi]->sched->machine_up(idx);
            std::string state = "up";
            exec::AgentMachineView v;
            if (agents_) {
                v = agents_->view(m.id);
                state = v.connected ? "up" : (v.last_heartbeat_s >= 0 ? "lost" : "waiting");
            } else if (!up_in_sched) {
                state = "lost";
            }
            if (read_only_ && agent_machines_) {  // a follower's snapshot: as the leader stored it
                state = m.up ? "up" : (m.last_heartbeat_s >= 0 ? "lost" : "waiting");
                v.last_heartbeat_s = m.last_heartbeat_s;
                v.addr = m.addr;
            }
            if (drained_.contains(m.id)) state = state == "up" ? "drained" : state + ",drained";
            j["state"] = state;
            j["drained"] = drained_.contains(m.id);
            j["source"] = agent_machines_ ? "agent" : "config";
            if (v.last_heartbeat_s >= 0) j["last_heartbeat"] = gp::format_rfc3339(v.last_heartbeat_s);
            if (!v.addr.empty()) j["addr"] = v.addr;
            // What runs there: the runs holding its GPUs, with their workers and GPUs.
            json runs = json::array();
            int used = 0;
            for (const auto& [rid, r] : runs_) {
                if (r->ended() || !r->holding()) continue;
                json workers = json::array();
                for (std::size_t k = 0; k < r->parts.size(); ++k)
                    for (const auto& part : r->parts[k])
                        if (part.machine == m.id) {
                            workers.push_back(k);
                            used += part.gpus;
                        }
                if (workers.empty()) continue;
                auto ws = workspaces_.find(r->rec.workspace_id);
                runs.push_back({{"run", r->rec.name},
                                {"workspace", ws == workspaces_.end() ? "" : ws->second.name},
                                {"state", r->rec.state},
                                {"attempt", r->rec.attempts},
                                {"workers", std::move(workers)}});
            }
            j["gpus_used"] = used;
            j["runs"] = std::move(runs);
            arr.push_back(std::move(j));
        }
    return json{{"machines", std::move(arr)}};
}

ApiResult<json> Service::drain_machine(const Caller& c, const std::string& name, bool drain) {
    if (c.token.scope != store::Scope::Operator && c.token.scope != store::Scope::OrgAdmin)
        return std::unexpected(ApiError{403, "draining machines is for cluster operators and organisation admins"});
    std::unique_lock lk(mu_);
    store::Id id = 0;
    for (const auto& [mid, n] : machine_names_)
        if (n == name) id = mid;
    if (id == 0) return std::unexpected(not_found("no machine named '" + name + "'"));
    if (auto w = writable(); !w) return std::unexpected(w.error());
    const Seconds now0 = clock_.now();
    begin(now0);
    catch_up(now0);
    const Seconds t = last_event_s_;
    auto [pi, idx] = machine_index_.at(id);
    PoolState& pool = *pools_[pi];
    int stopped = 0;
    if (drain && !drained_.contains(id)) {
        drained_.insert(id);
        pool.sched->set_machine_up(idx, false);  // no new placements: its GPUs are withheld
        batch_.machine_drained.push_back({id, true});
        // Its runs are stopped with the checkpoint signal: a preemption (not a failure); they
        // wait again when every worker is gone, and are placed elsewhere.
        for (auto& [rid, r] : runs_) {
            if (r->ended() || !(r->rec.state == "starting" || r->rec.state == "running")) continue;
            bool on = false;
            for (const auto& parts : r->parts)
                for (const auto& p : parts) on = on || p.machine == id;
            if (!on) continue;
            r->requeue_at_stop_done = true;
            preempt(*r, t);
            ++stopped;
        }
        log(LogLevel::Info, "machine.drained", {{"machine", name}, {"runs_stopped", std::to_string(stopped)}});
    } else if (!drain && drained_.contains(id)) {
        drained_.erase(id);
        const bool connected = !agents_ || agents_->view(id).connected;
        if (connected) pool.sched->set_machine_up(idx, true);
        batch_.machine_drained.push_back({id, false});
        log(LogLevel::Info, "machine.undrained", {{"machine", name}});
    }
    pool.dirty = true;
    schedule(pi, t);
    commit();
    wake_ = true;
    lk.unlock();
    cv_.notify_all();
    return json{{"machine", name}, {"drained", drain}, {"runs_stopped", stopped}};
}

}  // namespace astraeus::service
