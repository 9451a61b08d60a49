// The service's side of the executors: what an executor is told of a run's attempt (its
// command, environment and placement with GPU indices). Split from service.cpp.
#include <algorithm>
#include <set>

#include "astraeus/exec/command_spec.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

namespace detail {

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

}  // namespace detail

int Service::failures(const RunMem& r) {
    int n = 0;
    for (const auto& a : r.rec.attempt_list) n += a.outcome == "failed" ? 1 : 0;
    return n;
}

void Service::on_worker_event(RunMem& r, const ExecEvent& e) {
    using K = ExecEvent::Kind;
    const std::size_t w = static_cast<std::size_t>(e.worker);
    if (e.worker < 0 || w >= r.w.size()) return;
    switch (e.kind) {
        case K::WorkerStarted:
            log(LogLevel::Debug, "worker.started",
                {{"run", r.rec.name}, {"worker", std::to_string(e.worker)}, {"attempt", std::to_string(r.rec.attempts)}});
            break;
        case K::WorkerExited:
            log(e.exit_code == 0 ? LogLevel::Info : LogLevel::Warn, "worker.exited",
                {{"run", r.rec.name}, {"worker", std::to_string(e.worker)},
                 {"attempt", std::to_string(r.rec.attempts)},
                 {e.signal > 0 ? "signal" : "exit_code", std::to_string(e.signal > 0 ? e.signal : e.exit_code)}});
            break;
        case K::Progress: {
            if (r.rec.state != "running") break;
            const int key = static_cast<int>(r.rec.id);
            auto& attempt = progress_attempt_[r.rec.id];
            if (attempt != r.rec.attempts) {  // a new attempt: only its own progress is judged
                stragglers_.set_gang(key, r.rec.workers);
                for (int k = 0; k < r.rec.workers; ++k) stragglers_.reset(key, k);
                attempt = r.rec.attempts;
            }
            (void)counter_->progress(e.t, r.w[w], e.step);
            stragglers_.progress(key, e.worker, e.t, e.step);
            break;
        }
        case K::Utilization: {
            if (r.rec.state != "running") break;
            const double pct[1] = {e.level};
            (void)counter_->utilization(e.t, r.w[w], pct);
            break;
        }
        default: break;
    }
}

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

void Service::assign_gpus(RunMem& r) {
    // Indices in use on each machine: those of every other run holding GPUs.
    std::map<std::int64_t, std::set<int>> used;
    for (const auto& [id, o] : runs_) {
        if (o.get() == &r || o->ended() || !o->holding()) continue;
        for (std::size_t k = 0; k < o->parts.size() && k < o->gpu_index.size(); ++k) {
            std::size_t i = 0;
            for (const auto& part : o->parts[k])
                for (int g = 0; g < part.gpus && i < o->gpu_index[k].size(); ++g, ++i)
                    used[part.machine].insert(o->gpu_index[k][i]);
        }
    }
    r.gpu_index.assign(r.parts.size(), {});
    for (std::size_t k = 0; k < r.parts.size(); ++k)
        for (const auto& part : r.parts[k]) {
            std::set<int>& u = used[part.machine];
            for (int g = 0, taken = 0; taken < part.gpus; ++g)
                if (!u.contains(g)) {
                    u.insert(g);
                    r.gpu_index[k].push_back(g);
                    ++taken;
                }
        }
}

}  // namespace astraeus::service
