// The service's side of the executors: what an executor is told of a run's attempt (its
// command, environment and placement with GPU indices), its log room, and when it launches.
// What the executors report back: service_exec_events.cpp.
#include <algorithm>
#include <set>

#include "astraeus/exec/command_spec.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

namespace detail {

void end_open_attempt(store::RunRec& rec, Seconds t, const std::string& outcome) {
    if (rec.attempt_list.empty() || rec.attempt_list.back().ended_s >= 0) return;
    rec.attempt_list.back().ended_s = t;
    rec.attempt_list.back().outcome = outcome;
}

std::string gpu_index_text(const std::vector<std::vector<int>>& idx, std::size_t worker) {
    if (worker >= idx.size() || idx[worker].empty()) return "";
    std::string s = "@";
    for (std::size_t i = 0; i < idx[worker].size(); ++i) {
        if (i) s += '.';
        s += std::to_string(idx[worker][i]);
    }
    return s;
}

std::vector<int> parse_gpu_index(const std::string& parts) {
    std::vector<int> out;
    const auto at = parts.find('@');
    if (at == std::string::npos) return out;
    int v = -1;
    for (std::size_t i = at + 1; i <= parts.size(); ++i) {
        const char c = i < parts.size() ? parts[i] : '.';
        if (c >= '0' && c <= '9') {
            v = (v < 0 ? 0 : v * 10) + (c - '0');
        } else {
            if (v >= 0) out.push_back(v);
            v = -1;
        }
    }
    return out;
}

void add_command_json(nlohmann::json& j, const std::string& stored) {
    const exec::CommandSpec c = exec::from_stored(stored);
    j["command"] = c.argv;
    j["env"] = c.env;
    if (!c.workdir.empty()) j["workdir"] = c.workdir;
    j["running_at"] = c.running_at_progress ? "progress" : "up";
}

}  // namespace detail

ExecRun Service::exec_run(const RunMem& r) const {
    ExecRun e;
    e.run = r.rec.id;
    e.workers = r.rec.workers;
    e.duration_s = r.rec.sim_duration_s > 0 ? r.rec.sim_duration_s : r.rec.time_limit_s;
    e.time_limit_s = r.rec.time_limit_s;
    e.attempt = r.rec.attempts;
    e.executed_s = r.rec.executed_s;
    e.run_name = r.rec.name;
    auto ws = workspaces_.find(r.rec.workspace_id);
    e.workspace = ws == workspaces_.end() ? "" : ws->second.name;
    e.workspace_id = r.rec.workspace_id;
    e.pool = pools_[r.pool]->rec.name;
    e.gpus_per_worker = r.rec.gpus_per_worker;
    const exec::CommandSpec c = exec::from_stored(r.rec.command);
    e.argv = c.argv;
    e.env = c.env;
    e.workdir = c.workdir;
    e.running_at_progress = c.running_at_progress;
    for (std::size_t k = 0; k < r.parts.size(); ++k) {
        WorkerPlacement p;
        if (!r.parts[k].empty()) {
            p.machine = r.parts[k].front().machine;
            auto name = machine_names_.find(p.machine);
            if (name != machine_names_.end()) p.machine_name = name->second;
        }
        if (k < r.gpu_index.size()) p.gpus = r.gpu_index[k];
        e.placement.push_back(std::move(p));
    }
    return e;
}

namespace {

/// (machine, index) pairs of a run's workers.
std::set<std::pair<std::int64_t, int>> gpus_of(const std::vector<std::vector<goodput::HeldPart>>& parts,
                                               const std::vector<std::vector<int>>& idx) {
    std::set<std::pair<std::int64_t, int>> out;
    for (std::size_t k = 0; k < parts.size() && k < idx.size(); ++k) {
        std::size_t i = 0;
        for (const auto& part : parts[k])
            for (int g = 0; g < part.gpus && i < idx[k].size(); ++g, ++i) out.insert({part.machine, idx[k][i]});
    }
    return out;
}

}  // namespace

void Service::assign_gpus(RunMem& r) {
    // Indices taken on each machine: by every other run holding GPUs (`busy`), and by runs whose
    // processes may still be winding down after a preemption (`leaving`: the policy already
    // counts their GPUs free; a launch on them waits until they are gone).
    std::map<std::int64_t, std::set<int>> busy, leaving;
    // Only live runs can hold or leave GPUs (live_runs: not pending, not ended): a start costs
    // O(runs placed), not O(runs), which a round starting many runs at a large backlog paid per
    // start (minutes under the service's lock at 43,000 pending runs).
    for (RunMem* o : live_runs()) {
        if (o == &r || o->ended()) continue;
        const bool holds = o->holding();
        const bool stopping = o->rec.state == "stopping";
        if (!holds && !stopping) continue;
        for (const auto& [m, g] : gpus_of(o->parts, o->gpu_index)) (holds ? busy : leaving)[m].insert(g);
    }
    std::map<std::int64_t, int> machine_gpus;
    for (const auto& p : pools_)
        for (const auto& m : p->machines) machine_gpus[m.id] = m.gpus;
    r.gpu_index.assign(r.parts.size(), {});
    for (std::size_t k = 0; k < r.parts.size(); ++k)
        for (const auto& part : r.parts[k]) {
            std::set<int>& b = busy[part.machine];
            std::set<int>& l = leaving[part.machine];
            const int n = machine_gpus.contains(part.machine) ? machine_gpus[part.machine] : 4096;
            int taken = 0;
            for (int pass = 0; pass < 3 && taken < part.gpus; ++pass)  // free; leaving; any (a bug)
                for (int g = 0; taken < part.gpus && g < (pass == 2 ? 4096 : n); ++g)
                    if (!b.contains(g) && (pass >= 1 || !l.contains(g))) {
                        b.insert(g);
                        r.gpu_index[k].push_back(g);
                        ++taken;
                    }
        }
}

void Service::try_launch(RunMem& r, Seconds t) {
    if (!r.launch_pending || r.ended() || r.rec.state != "starting") return;
    if (exec_->runs_commands()) {
        if (r.prev_alive) return;
        const auto mine = gpus_of(r.parts, r.gpu_index);
        for (RunMem* o : live_runs()) {
            if (o == &r || o->ended() || o->rec.state != "stopping") continue;
            for (const auto& g : gpus_of(o->parts, o->gpu_index))
                if (mine.contains(g)) return;  // still in use by a stopping run
        }
    }
    r.launch_pending = false;
    ExecRun e = exec_run(r);
    e.log_cap_bytes = reserve_logs(r, e);
    exec_->launch(t, e);
    log(LogLevel::Info, "run.launched", {{"run", r.rec.name}, {"attempt", std::to_string(r.rec.attempts)}});
}

std::optional<std::uint64_t> Service::reserve_logs(RunMem& r, const ExecRun& e) {
    std::vector<std::string> logs;
    for (int w = 0; w < e.workers; ++w) {
        std::string p = exec_->log_path(e.workspace, e.run_name, e.attempt, w);
        if (p.empty() && agents_) p = agent_log_path(e.workspace, e.run_name, e.attempt, w);
        if (p.empty()) return std::nullopt;  // kept elsewhere (Slurm's output files) or nowhere
        logs.push_back(std::move(p));
    }
    const std::uint64_t cap = log_quota_.reserve(e.workspace, r.rec.id, logs);
    r.log_caps[e.attempt] = cap;
    if (cap < cfg_.local.runner.log_cap_bytes)
        log(LogLevel::Warn, "logs.quota",
            {{"workspace", e.workspace}, {"run", r.rec.name}, {"attempt", std::to_string(e.attempt)},
             {"cap_bytes", std::to_string(cap)}, {"quota_bytes", std::to_string(cfg_.limits.log_bytes)}});
    return cap;
}

void Service::cancel_launch(RunMem& r, Seconds t) {
    if (!r.launch_pending) return;
    r.launch_pending = false;
    ExecEvent done{ExecEvent::Kind::StopDone, t};
    done.run = r.rec.id;
    done.attempt = r.rec.attempts;
    on_exec(done);
}

}  // namespace astraeus::service
