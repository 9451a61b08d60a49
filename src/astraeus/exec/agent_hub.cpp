#include "astraeus/exec/agent_hub.hpp"

#include <algorithm>

namespace astraeus::exec {

using nlohmann::json;

namespace {

std::int64_t int_of(const json& j, const char* key, std::int64_t dflt) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return dflt;
    return it->get<std::int64_t>();
}

}  // namespace

AgentHub::AgentHub(AgentHubConfig c) : c_(c) {}

// --- machines ----------------------------------------------------------------------------------

void AgentHub::set_machines(const std::vector<std::int64_t>& ids, Seconds t) {
    for (std::int64_t id : ids) {
        Machine& m = machines_[id];
        m.last_s = t;  // a grace of lost_after_s for its agent to (re-)register
    }
}

void AgentHub::add_machine(std::int64_t id, const std::string& name, int gpus, const std::string& addr,
                           Seconds t) {
    Machine& m = machines_[id];
    m.name = name;
    m.gpus = gpus;
    if (!addr.empty()) m.addr = addr;
    if (!m.connected) m.last_s = std::max(m.last_s, t);
}

void AgentHub::command(std::int64_t machine, json cmd) {
    auto it = machines_.find(machine);
    if (it == machines_.end()) return;
    Machine& m = it->second;
    cmd["seq"] = m.next_cmd++;
    m.cmds.push_back(std::move(cmd));
    if (notify_) notify_();
}

bool AgentHub::has_commands(std::int64_t id) const {
    auto it = machines_.find(id);
    return it != machines_.end() && !it->second.cmds.empty();
}

AgentMachineView AgentHub::view(std::int64_t id) const {
    AgentMachineView v;
    auto it = machines_.find(id);
    if (it == machines_.end()) return v;
    v.known = true;
    v.connected = it->second.connected && !it->second.lost;
    v.last_heartbeat_s = it->second.connected || it->second.lost ? it->second.last_s : -1;
    v.session = it->second.session;
    v.addr = it->second.addr;
    for (const auto& [run, r] : runs_)
        for (std::size_t k = 0; k < r.w.size() && k < r.spec.placement.size(); ++k)
            if (r.spec.placement[k].machine == id && r.w[k].st != W::Gone)
                v.workers.push_back({run, static_cast<int>(k)});
    return v;
}

std::vector<int> AgentHub::pick_gpus(std::int64_t machine, int count) {
    std::vector<int> out;
    auto it = machines_.find(machine);
    if (it == machines_.end()) return out;
    for (int g = 0; g < it->second.gpus && static_cast<int>(out.size()) < count; ++g)
        if (!it->second.used_gpus.contains(g)) out.push_back(g);
    for (int g : out) it->second.used_gpus.insert(g);
    return out;
}

void AgentHub::free_gpus(Run& r, int k) {
    if (static_cast<std::size_t>(k) >= r.spec.placement.size()) return;
    auto it = machines_.find(r.spec.placement[k].machine);
    if (it == machines_.end()) return;
    for (int g : r.w[k].gpus) it->second.used_gpus.erase(g);
}

// --- the Executor ------------------------------------------------------------------------------

void AgentHub::emit(ExecEvent e) { events_.push_back(e); }

int AgentHub::master_port_for(std::int64_t run, const Run& r) const {
    const int span = std::max(1, c_.master_port_span);
    const int first = static_cast<int>((run * 7 + r.spec.attempt) % span);
    if (r.spec.placement.empty()) return c_.master_port_base + first;
    const std::int64_t rank0 = r.spec.placement.front().machine;
    std::set<int> held;
    for (const auto& [id, o] : runs_)
        if (id != run && !o.ended && o.master_port > 0 && !o.spec.placement.empty() &&
            o.spec.placement.front().machine == rank0)
            held.insert(o.master_port);
    for (int i = 0; i < span; ++i) {
        const int port = c_.master_port_base + (first + i) % span;
        if (!held.contains(port)) return port;
    }
    return c_.master_port_base + first;  // more live gangs on one machine than ports: share
}

json AgentHub::launch_command(std::int64_t run, Run& r, std::size_t k) {
    const ExecRun& s = r.spec;
    if (r.master_port == 0) r.master_port = master_port_for(run, r);
    const std::string master = s.placement.empty() ? "" : machines_[s.placement.front().machine].addr;
    int local = 0;  // LOCAL_RANK: the run's workers before k on the same machine
    for (std::size_t i = 0; i < k && i < s.placement.size(); ++i)
        if (s.placement[i].machine == s.placement[k].machine) ++local;
    json cmd;
    cmd["op"] = "launch";
    cmd["run"] = run;
    cmd["attempt"] = s.attempt;
    cmd["worker"] = k;
    cmd["workers"] = s.workers;
    cmd["run_name"] = s.run_name;
    cmd["workspace"] = s.workspace;
    cmd["workspace_id"] = s.workspace_id;
    cmd["gpus"] = r.w[k].gpus;
    cmd["master_addr"] = master.empty() ? "127.0.0.1" : master;
    cmd["master_port"] = r.master_port;
    cmd["local_rank"] = local;
    cmd["argv"] = s.argv;
    cmd["env"] = s.env;
    cmd["workdir"] = s.workdir;
    return cmd;
}

void AgentHub::send_launches(Run& r, std::int64_t run) {
    for (std::size_t k = 0; k < r.spec.placement.size(); ++k)
        command(r.spec.placement[k].machine, launch_command(run, r, k));
}

void AgentHub::launch(Seconds t, const ExecRun& r) {
    Run& x = runs_[r.run];
    for (std::size_t k = 0; k < x.w.size(); ++k) free_gpus(x, static_cast<int>(k));
    x = Run{};
    x.spec = r;
    x.phase = ExecPhase::Starting;
    x.executed_before = r.executed_s;
    x.w.resize(static_cast<std::size_t>(r.workers));
    for (std::size_t k = 0; k < x.w.size() && k < r.placement.size(); ++k) {
        const auto& p = r.placement[k];
        const bool pick = std::any_of(p.gpus.begin(), p.gpus.end(), [](int g) { return g < 0; });
        if (pick) {  // the count only: the hub picks free indices on the machine
            x.w[k].gpus = pick_gpus(p.machine, static_cast<int>(p.gpus.size()));
            continue;
        }
        x.w[k].gpus = p.gpus;
        auto m = machines_.find(p.machine);
        if (m != machines_.end())
            for (int g : p.gpus) m->second.used_gpus.insert(g);
    }
    if (r.placement.size() != x.w.size() || r.argv.empty()) {
        // Nothing this executor can run: the gang fails at once (the service says why).
        emit({ExecEvent::Kind::Failed, t, r.run, 0, 0, 0, 0, -1, 0, r.attempt});
        x.phase = ExecPhase::Failed;
        for (auto& w : x.w) w.st = W::Gone;
        settle(t, r.run, x);
        return;
    }
    send_launches(x, r.run);
}

void AgentHub::signal_workers(std::int64_t run, Run& r, const char* op) {
    for (std::size_t k = 0; k < r.w.size() && k < r.spec.placement.size(); ++k) {
        if (r.w[k].st == W::Gone) continue;
        command(r.spec.placement[k].machine,
                json{{"op", op}, {"run", run}, {"attempt", r.spec.attempt}, {"worker", k}});
    }
}

void AgentHub::stop(Seconds t, std::int64_t run) {
    auto it = runs_.find(run);
    if (it == runs_.end()) {
        emit({ExecEvent::Kind::StopDone, t, run, 0, 0, -1, 0, -1, 0, 0});
        return;
    }
    Run& r = it->second;
    if (r.phase == ExecPhase::Stopping || r.phase == ExecPhase::Failed) return;
    if (r.phase == ExecPhase::Running && r.running_since >= 0) r.executed_before += t - r.running_since;
    r.running_since = -1;
    r.phase = ExecPhase::Stopping;
    signal_workers(run, r, "stop");
    settle(t, run, r);
}

void AgentHub::forget(std::int64_t run) {
    auto it = runs_.find(run);
    if (it == runs_.end()) return;
    signal_workers(run, it->second, "kill");
    for (std::size_t k = 0; k < it->second.w.size(); ++k) free_gpus(it->second, static_cast<int>(k));
    runs_.erase(it);
}

void AgentHub::restore(const ExecRun& r, ExecPhase phase, Seconds since_s, Seconds executed_s) {
    auto it = runs_.find(r.run);
    if (it != runs_.end() && it->second.spec.attempt == r.attempt) {
        // The same attempt (a machine of its gang was lost): only its phase changes.
        Run& x = it->second;
        if (x.phase == ExecPhase::Running && x.running_since >= 0)
            x.executed_before += since_s - x.running_since;
        x.running_since = -1;
        x.phase = phase;
        if (phase == ExecPhase::Failed || phase == ExecPhase::Stopping) signal_workers(r.run, x, "stop");
        settle(since_s, r.run, x);
        return;
    }
    // After a restart of the service: every worker is taken as live until its agent registers
    // and says otherwise (then it is adopted, or reported exited, or missing = gone).
    Run& x = runs_[r.run];
    x = Run{};
    x.spec = r;
    x.phase = phase;
    x.executed_before = executed_s;
    x.running_since = phase == ExecPhase::Running ? since_s : -1;
    x.master_port = master_port_for(r.run, x);  // what its launches carried, unless it collided
    x.w.resize(static_cast<std::size_t>(r.workers));
    for (std::size_t k = 0; k < x.w.size(); ++k) {
        x.w[k].st = phase == ExecPhase::Starting ? W::Launching : W::Up;
        if (k < r.placement.size()) {
            x.w[k].gpus = r.placement[k].gpus;
            auto m = machines_.find(r.placement[k].machine);
            if (m != machines_.end())
                for (int g : r.placement[k].gpus) m->second.used_gpus.insert(g);
        }
    }
    if (r.placement.size() != x.w.size()) {
        for (auto& w : x.w) w.st = W::Gone;  // nothing known to wait for
        settle(since_s, r.run, x);
    }
}

Seconds AgentHub::next_event_s() const {
    if (!events_.empty()) return events_.front().t;
    Seconds t = kNever;
    for (const auto& [id, m] : machines_)
        if (!m.lost) t = std::min(t, m.last_s + c_.lost_after_s);
    for (const auto& [id, r] : runs_)
        if (r.phase == ExecPhase::Running && r.spec.time_limit_s > 0 && !r.limit_sent && r.running_since >= 0)
            t = std::min(t, r.running_since + std::max<Seconds>(0, r.spec.time_limit_s - r.executed_before));
    return t;
}

bool AgentHub::pop_due(Seconds now, ExecEvent& out) {
    if (events_.empty()) {
        // Lost machines, then time limits, become events when due.
        for (auto& [id, m] : machines_)
            if (!m.lost && m.last_s + c_.lost_after_s <= now) {
                lose(m.last_s + c_.lost_after_s, id, m);
                break;
            }
        if (events_.empty())
            for (auto& [id, r] : runs_) {
                if (r.phase != ExecPhase::Running || r.spec.time_limit_s <= 0 || r.limit_sent || r.running_since < 0)
                    continue;
                const Seconds at = r.running_since + std::max<Seconds>(0, r.spec.time_limit_s - r.executed_before);
                if (at > now) continue;
                r.limit_sent = true;
                r.executed_before += at - r.running_since;
                r.running_since = -1;
                r.phase = ExecPhase::Stopping;
                emit({ExecEvent::Kind::TimeLimit, at, id, 0, 0, -1, 0, -1, 0, r.spec.attempt});
                signal_workers(id, r, "stop");
                settle(at, id, r);
                break;
            }
    }
    if (events_.empty() || events_.front().t > now) return false;
    out = events_.front();
    events_.pop_front();
    return true;
}

Seconds AgentHub::executed_s(std::int64_t run, Seconds t) const {
    auto it = runs_.find(run);
    if (it == runs_.end()) return 0;
    const Run& r = it->second;
    return r.executed_before + (r.running_since >= 0 ? std::max<Seconds>(0, t - r.running_since) : 0);
}

// --- run bookkeeping ---------------------------------------------------------------------------

void AgentHub::settle(Seconds t, std::int64_t run, Run& r) {
    if (r.ended) return;
    const bool all_gone = std::all_of(r.w.begin(), r.w.end(), [](const Worker& w) { return w.st == W::Gone; });
    if (!all_gone) return;
    switch (r.phase) {
        case ExecPhase::Stopping:
            r.ended = true;
            emit({ExecEvent::Kind::StopDone, t, run, 0, 0, -1, 0, -1, 0, r.spec.attempt});
            break;
        case ExecPhase::Failed:
            r.ended = true;
            emit({ExecEvent::Kind::Released, t, run, 0, 0, -1, 0, -1, 0, r.spec.attempt});
            break;
        default: {
            const bool ok = !r.w.empty() && std::all_of(r.w.begin(), r.w.end(), [](const Worker& w) {
                return w.exit_code == 0 && w.signal == 0;
            });
            r.ended = true;
            if (r.running_since >= 0) r.executed_before += t - r.running_since;
            r.running_since = -1;
            if (ok) {
                emit({ExecEvent::Kind::Finished, t, run, 0, 0, -1, 0, -1, 0, r.spec.attempt});
            } else {
                emit({ExecEvent::Kind::Failed, t, run, 0, 0, -1, 0, -1, 0, r.spec.attempt});
                emit({ExecEvent::Kind::Released, t, run, 0, 0, -1, 0, -1, 0, r.spec.attempt});
            }
        }
    }
}

void AgentHub::worker_gone(Seconds t, std::int64_t run, Run& r, int k) {
    Worker& w = r.w[static_cast<std::size_t>(k)];
    if (w.st == W::Gone) return;
    w.st = W::Gone;
    free_gpus(r, k);
    const bool bad = w.exit_code != 0 || w.signal != 0;
    if (bad && (r.phase == ExecPhase::Starting || r.phase == ExecPhase::Running)) {
        // The gang fails: the others are stopped; Released when the last is gone.
        if (r.running_since >= 0) r.executed_before += t - r.running_since;
        r.running_since = -1;
        r.phase = ExecPhase::Failed;
        emit({ExecEvent::Kind::Failed, t, run, 0, 0, k, 0, w.exit_code, w.signal, r.spec.attempt});
        signal_workers(run, r, "stop");
    }
    settle(t, run, r);
}

void AgentHub::worker_event(Seconds t, std::int64_t machine, const json& ev) {
    const std::string kind = ev.value("kind", "");
    const std::int64_t run = int_of(ev, "run", 0);
    const int attempt = static_cast<int>(int_of(ev, "attempt", 0));
    const int k = static_cast<int>(int_of(ev, "worker", -1));
    auto it = runs_.find(run);
    const bool current = it != runs_.end() && it->second.spec.attempt == attempt && k >= 0 &&
                         static_cast<std::size_t>(k) < it->second.w.size() &&
                         static_cast<std::size_t>(k) < it->second.spec.placement.size() &&
                         it->second.spec.placement[static_cast<std::size_t>(k)].machine == machine;
    if (!current) {
        // A worker of an attempt the service has ended (or never placed here): kill it.
        if (kind == "started")
            command(machine, json{{"op", "kill"}, {"run", run}, {"attempt", attempt}, {"worker", k}});
        return;
    }
    Run& r = it->second;
    Worker& w = r.w[static_cast<std::size_t>(k)];
    if (kind == "started") {
        if (w.st != W::Launching) return;
        w.st = W::Up;
        emit({ExecEvent::Kind::WorkerStarted, t, run, machine, 0, k, 0, -1, 0, attempt});
        const bool all_up = std::all_of(r.w.begin(), r.w.end(), [](const Worker& x) { return x.st == W::Up; });
        if (r.phase == ExecPhase::Starting && all_up && !r.spec.running_at_progress) {
            r.phase = ExecPhase::Running;
            r.running_since = t;
            emit({ExecEvent::Kind::Started, t, run, 0, -1, -1, 0, -1, 0, attempt});
        }
    } else if (kind == "progress") {
        if (w.st == W::Gone) return;
        // Running at the first progress: Started first, so that this report is the running
        // attempt's first progress (the count tracks it from here, as the local gang does).
        if (r.phase == ExecPhase::Starting && r.spec.running_at_progress) {
            r.phase = ExecPhase::Running;
            r.running_since = t;
            emit({ExecEvent::Kind::Started, t, run, 0, -1, -1, 0, -1, 0, attempt});
        }
        emit({ExecEvent::Kind::Progress, t, run, machine, 0, k, int_of(ev, "step", 0), -1, 0, attempt});
    } else if (kind == "exited") {
        if (w.st == W::Gone) return;
        w.exit_code = static_cast<int>(int_of(ev, "exit_code", -1));
        w.signal = static_cast<int>(int_of(ev, "signal", 0));
        if (ev.value("we_signalled", false) && (r.phase == ExecPhase::Stopping || r.phase == ExecPhase::Failed)) {
            // Stopped by us: how it ended is the stop's, not a failure.
        }
        emit({ExecEvent::Kind::WorkerExited, t, run, machine, 0, k, 0, w.exit_code, w.signal, attempt});
        worker_gone(t, run, r, k);
    }
}

void AgentHub::lose(Seconds t, std::int64_t id, Machine& m) {
    m.lost = true;
    m.connected = false;
    m.cmds.clear();
    emit({ExecEvent::Kind::MachineLost, t, 0, id, 0, -1, 0, -1, 0, 0});
    // Its workers count as gone (the agent kills them when it returns: their attempts ended).
    for (auto& [run, r] : runs_)
        for (std::size_t k = 0; k < r.w.size() && k < r.spec.placement.size(); ++k)
            if (r.spec.placement[k].machine == id && r.w[k].st != W::Gone) {
                r.w[k].st = W::Gone;
                r.w[k].exit_code = -1;
                free_gpus(r, static_cast<int>(k));
            }
    // The service fails the runs (restore(Failed)); runs already stopping may be done now.
    for (auto& [run, r] : runs_)
        if (r.phase == ExecPhase::Stopping || r.phase == ExecPhase::Failed) settle(t, run, r);
}

// --- the protocol ------------------------------------------------------------------------------

json AgentHub::on_register(Seconds t, std::int64_t id, const json& body) {
    Machine& m = machines_[id];
    const std::string session = body.value("session", "");
    if (m.connected && !m.lost && m.session != session) lose(t, id, m);  // the agent restarted
    const bool back = m.lost;
    m.lost = false;
    m.connected = true;
    m.session = session;
    m.last_s = t;
    m.cmds.clear();  // a new session starts its command numbers again
    m.next_cmd = 1;
    m.events_acked = 0;
    if (back) emit({ExecEvent::Kind::MachineBack, t, 0, id, 0, -1, 0, -1, 0, 0});
    // Events it has not had acknowledged (exits while the service was down), then its live
    // workers: adopted when their attempt still runs here, killed otherwise.
    if (auto ev = body.find("events"); ev != body.end() && ev->is_array())
        for (const json& e : *ev) {
            worker_event(t, id, e);
            m.events_acked = std::max(m.events_acked, int_of(e, "seq", 0));
        }
    json adopted = json::array(), killed = json::array();
    std::set<std::pair<std::int64_t, int>> live;
    if (auto ws = body.find("workers"); ws != body.end() && ws->is_array())
        for (const json& w : *ws) {
            const std::int64_t run = int_of(w, "run", 0);
            const int attempt = static_cast<int>(int_of(w, "attempt", 0));
            const int k = static_cast<int>(int_of(w, "worker", -1));
            auto it = runs_.find(run);
            const bool ours = !back && it != runs_.end() && it->second.spec.attempt == attempt && k >= 0 &&
                              static_cast<std::size_t>(k) < it->second.w.size() &&
                              static_cast<std::size_t>(k) < it->second.spec.placement.size() &&
                              it->second.spec.placement[static_cast<std::size_t>(k)].machine == id &&
                              it->second.w[static_cast<std::size_t>(k)].st != W::Gone;
            json key{{"run", run}, {"attempt", attempt}, {"worker", k}};
            if (!ours) {
                killed.push_back(key);
                json cmd = key;
                cmd["op"] = "kill";
                command(id, std::move(cmd));
                continue;
            }
            live.insert({run, k});
            adopted.push_back(key);
            Run& r = it->second;
            worker_event(t, id, json{{"kind", "started"}, {"run", run}, {"attempt", attempt}, {"worker", k}});
            if (r.phase == ExecPhase::Stopping || r.phase == ExecPhase::Failed) {
                json cmd = key;
                cmd["op"] = "stop";
                command(id, std::move(cmd));  // a stop sent before the service restarted
            }
        }
    // Workers the service expects here that the agent neither runs nor reported: a launch
    // that never reached it (re-sent), or a worker lost in between (gone, failing its gang).
    for (auto& [run, r] : runs_)
        for (std::size_t k = 0; k < r.w.size() && k < r.spec.placement.size(); ++k) {
            if (r.spec.placement[k].machine != id || r.w[k].st == W::Gone || live.contains({run, static_cast<int>(k)}))
                continue;
            if (r.w[k].st == W::Launching && r.phase == ExecPhase::Starting && !back) {
                command(id, launch_command(run, r, k));  // re-send this worker's launch only
                continue;
            }
            r.w[k].exit_code = -1;
            worker_gone(t, run, r, static_cast<int>(k));
        }
    json reply;
    reply["machine"] = id;
    reply["heartbeat_s"] = c_.heartbeat_s;
    reply["lost_after_s"] = c_.lost_after_s;
    reply["adopted"] = std::move(adopted);
    reply["killed"] = std::move(killed);
    reply["events_acked"] = m.events_acked;
    reply["generation"] = generation_;
    return reply;
}

json AgentHub::on_heartbeat(Seconds t, std::int64_t id, const json& body) {
    auto it = machines_.find(id);
    const std::string session = body.value("session", "");
    if (it == machines_.end() || !it->second.connected || it->second.lost || it->second.session != session)
        return json{{"register", true}, {"generation", generation_}};
    Machine& m = it->second;
    m.last_s = t;
    const std::int64_t acked = int_of(body, "commands_acked", 0);
    while (!m.cmds.empty() && m.cmds.front().value("seq", std::int64_t{0}) <= acked) m.cmds.pop_front();
    if (auto ev = body.find("events"); ev != body.end() && ev->is_array())
        for (const json& e : *ev) {
            const std::int64_t seq = int_of(e, "seq", 0);
            if (seq <= m.events_acked) continue;  // already taken (a re-send)
            worker_event(t, id, e);
            m.events_acked = seq;
        }
    take_gpu_samples(t, id, body);
    json reply;
    reply["events_acked"] = m.events_acked;
    json cmds = json::array();
    for (const json& c : m.cmds) cmds.push_back(c);
    reply["commands"] = std::move(cmds);
    reply["heartbeat_s"] = c_.heartbeat_s;
    reply["generation"] = generation_;
    return reply;
}

}  // namespace astraeus::exec
