#include "astraeus/service/service.hpp"

#include <algorithm>
#include <cstdlib>

#include "astraeus/goodput_io/prometheus_text.hpp"
#include "astraeus/service/token.hpp"
#include "astraeus/goodput/calendar.hpp"
#include "astraeus/goodput_io/ledger_json.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/exec/command_spec.hpp"
#include "astraeus/service/request_parse.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

using nlohmann::json;
namespace gp = goodput;
using namespace detail;

// The REST operations on runs: authentication and visibility, submit, list, show, stop, progress
// (service.hpp). Split from service.cpp, which holds the state, the loop and the transactions.

// --- auth and visibility ---------------------------------------------------------------------

ApiResult<Caller> Service::authenticate(std::string_view authorization) {
    auto c = authenticate_any(authorization);
    if (c && c->token.scope == store::Scope::Agent)
        return std::unexpected(ApiError{403, "agent tokens can call only the agent endpoints (/v1/agent/...)"});
    return c;
}

ApiResult<Caller> Service::authenticate_any(std::string_view authorization) {
    // RFC 7235: the scheme is case-insensitive ("Bearer", "bearer"), then one or more spaces.
    constexpr std::string_view kBearer = "bearer";
    const auto lower = [](char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch; };
    bool scheme = authorization.size() > kBearer.size() && authorization[kBearer.size()] == ' ';
    for (std::size_t i = 0; scheme && i < kBearer.size(); ++i) scheme = lower(authorization[i]) == kBearer[i];
    if (!scheme) return std::unexpected(ApiError{401, "missing bearer token (Authorization: Bearer <token>)"});
    std::string_view rest = authorization.substr(kBearer.size());
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
    const std::string token(rest);
    const std::string hash = sha256_hex(token);
    std::lock_guard lk(mu_);
    auto t = store_->token_by_hash(hash);
    if (!t) return std::unexpected(ApiError{500, t.error().message});
    if (!*t) return std::unexpected(ApiError{401, "invalid token"});
    if ((*t)->revoked) return std::unexpected(ApiError{401, "the token was revoked"});
    if ((*t)->org_id != org_.id) return std::unexpected(ApiError{401, "the token is not for this organisation"});
    if ((*t)->scope == store::Scope::Workspace && !workspaces_.contains((*t)->workspace_id)) refresh_workspaces();
    return Caller{**t};
}

bool Service::visible(const Caller& c, const RunMem& r) const {
    if (c.token.scope == store::Scope::Workspace) return r.rec.workspace_id == c.token.workspace_id;
    return true;  // org admins and the cluster's operators: the whole organisation
}

gp::RunFilter Service::filter_for(const Caller& c) const {
    if (c.token.scope != store::Scope::Workspace) return {};
    const int ws = static_cast<int>(c.token.workspace_id);
    return [this, ws](int run) { return ledger_.workspace_of(run) == ws; };
}

ApiResult<Service::RunMem*> Service::find_run(const Caller& c, const std::string& name, const Params& q) {
    std::vector<RunMem*> hits;
    auto ws = q.find("workspace");
    for (auto& [id, r] : runs_) {
        if (r->rec.name != name || !visible(c, *r)) continue;
        if (ws != q.end()) {
            auto w = workspaces_.find(r->rec.workspace_id);
            if (w == workspaces_.end() || w->second.name != ws->second) continue;
        }
        hits.push_back(r.get());
    }
    if (hits.empty()) return std::unexpected(not_found("no run named '" + name + "'"));
    if (hits.size() > 1)
        return std::unexpected(bad("run name '" + name + "' is in several workspaces: add ?workspace=NAME (astra: --workspace NAME)"));
    return hits.front();
}

std::string Service::by_name(gp::By by, int id) const {
    switch (by) {
        case gp::By::Workspace: {
            auto it = workspaces_.find(id);
            return it == workspaces_.end() ? "workspace-" + std::to_string(id) : it->second.name;
        }
        case gp::By::Run: {
            auto it = runs_.find(id);
            return it == runs_.end() ? "run-" + std::to_string(id) : it->second->rec.name;
        }
        case gp::By::Machine: {
            auto it = machine_names_.find(id);
            return it == machine_names_.end() ? "machine-" + std::to_string(id) : it->second;
        }
        case gp::By::Pool:
            for (const auto& p : pools_)
                if (p->rec.id == id) return p->rec.name;
            if (auto it = retired_pools_.find(id); it != retired_pools_.end()) return it->second;
            return "pool-" + std::to_string(id);
    }
    return "";
}

// --- runs --------------------------------------------------------------------------------------

json Service::run_json(const RunMem& r) const {
    json j;
    j["name"] = r.rec.name;
    auto ws = workspaces_.find(r.rec.workspace_id);
    j["workspace"] = ws == workspaces_.end() ? "" : ws->second.name;
    j["pool"] = by_name(gp::By::Pool, static_cast<int>(r.rec.pool_id));
    j["workers"] = r.rec.workers;
    j["gpus_per_worker"] = r.rec.gpus_per_worker;
    j["state"] = r.rec.state;
    if (r.rec.state == "pending" && !r.rec.reason.empty()) j["reason"] = r.rec.reason;
    j["submitted_at"] = gp::format_rfc3339(r.rec.submitted_s);
    if (r.rec.started_s >= 0) j["started_at"] = gp::format_rfc3339(r.rec.started_s);
    if (r.rec.ended_s >= 0) j["ended_at"] = gp::format_rfc3339(r.rec.ended_s);
    if (r.rec.time_limit_s > 0) j["time_limit_s"] = r.rec.time_limit_s;
    add_command_json(j, r.rec.command);
    j["image"] = r.rec.image;
    j["attempts"] = r.rec.attempts;
    json workers = json::array();
    for (std::size_t k = 0; k < r.w.size() || k < static_cast<std::size_t>(r.rec.workers); ++k) {
        json w;
        w["index"] = k;
        if (k < r.w.size()) {
            const gp::WorkerStatus& s = counter_->status(r.w[k]);
            static constexpr const char* kNames[] = {"pending", "starting", "running", "stopping", "failed", ""};
            std::string st = kNames[static_cast<int>(s.phase)];
            if (st.empty()) st = r.rec.state;
            w["state"] = st;
            if (gp::holds_gpus(s) && !r.parts[k].empty()) w["machine"] = by_name(gp::By::Machine, r.parts[k].front().machine);
            w["attempt"] = s.attempt;
        } else {
            w["state"] = r.rec.state;
            w["attempt"] = r.rec.attempts;
        }
        workers.push_back(std::move(w));
    }
    j["worker_list"] = std::move(workers);
    json history = json::array();
    for (const auto& h : r.history) {
        json e{{"at", gp::format_rfc3339(h.since_s)}, {"at_s", h.since_s}, {"state", h.state}, {"attempt", h.attempt}};
        if (!h.cause.empty()) e["cause"] = h.cause;
        history.push_back(std::move(e));
    }
    j["history"] = std::move(history);
    return j;
}

ApiResult<json> Service::submit(const Caller& c, std::string_view body) {
    if (c.token.scope == store::Scope::Operator)
        return std::unexpected(ApiError{403, "cluster-operator tokens cannot submit runs"});
    auto req = parse_submit_body(body);
    if (!req) return std::unexpected(req.error());
    const std::string& name = req->name;
    const std::string& pool_name = req->pool;
    const std::string& image = req->image;
    const std::string& ws_name = req->workspace;
    const std::int64_t workers = req->workers, gpw = req->gpus_per_worker, limit = req->time_limit_s,
                       sim = req->sim_duration_s;
    if (req->command.argv.empty() && exec_->runs_commands())
        return std::unexpected(bad("'command' is required: an argv array (or a string, run as /bin/sh -c STRING)"));
    const std::string command = exec::to_stored(req->command);

    std::unique_lock lk(mu_);
    // The workspace.
    store::Id ws_id = 0;
    if (c.token.scope == store::Scope::Workspace) {
        ws_id = c.token.workspace_id;
        if (!ws_name.empty() && (!workspaces_.contains(ws_id) || workspaces_.at(ws_id).name != ws_name))
            return std::unexpected(bad("'workspace' must be your token's workspace"));
    } else {
        if (ws_name.empty()) return std::unexpected(bad("'workspace' is required with an org-admin token"));
        for (int pass = 0; pass < 2 && ws_id == 0; ++pass) {
            for (const auto& [id, w] : workspaces_)
                if (w.name == ws_name) ws_id = id;
            if (ws_id == 0 && pass == 0) refresh_workspaces();
        }
        if (ws_id == 0) return std::unexpected(bad("no workspace named '" + ws_name + "'"));
    }
    if (!workspaces_.contains(ws_id)) refresh_workspaces();
    if (!workspaces_.contains(ws_id)) return std::unexpected(bad("the token's workspace no longer exists"));
    // The pool.
    std::size_t pi = pools_.size();
    if (pool_name.empty()) pi = 0;
    for (std::size_t p = 0; p < pools_.size(); ++p)
        if (pools_[p]->rec.name == pool_name) pi = p;
    if (pi == pools_.size()) {
        std::string m = "no pool named '" + pool_name + "' (pools:";
        for (const auto& p : pools_) m += " " + p->rec.name;
        return std::unexpected(bad(m + ")"));
    }
    PoolState& pool = *pools_[pi];
    for (const auto& [id, r] : runs_)
        if (r->rec.workspace_id == ws_id && r->rec.name == name)
            return std::unexpected(ApiError{409, "a run named '" + name + "' already exists in workspace " + workspaces_.at(ws_id).name});
    const int gpus = static_cast<int>(workers * gpw);
    if (gpus > pool.gpus()) {
        std::string m = "no placement for " + str(workers) + " x " + str(gpw) + " GPUs: pool " + pool.rec.name +
                        " has " + str(pool.gpus()) + " GPUs";
        return std::unexpected(bad(m));
    }
    // A worker's GPUs are on one machine: a worker larger than every machine never fits.
    int largest = 0;
    for (const auto& m : pool.machines) largest = std::max(largest, m.gpus);
    if (gpw > largest)
        return std::unexpected(bad("no placement for " + str(workers) + " x " + str(gpw) + " GPUs: a worker's " +
                                   str(gpw) + " GPUs must be on one machine, and pool " + pool.rec.name +
                                   "'s largest machine has " + str(largest) + " GPUs"));
    const int u = pool.sched->tenant_index(workspaces_.at(ws_id).name);
    if (u < 0) return std::unexpected(ApiError{500, "workspace not known to the scheduler"});

    const Seconds now0 = clock_.now();
    begin(now0);
    catch_up(now0);
    const Seconds now = last_event_s_;
    const Seconds duration = sim > 0 ? sim : limit;
    auto j = pool.sched->submit(u, gpus, now, duration, static_cast<int>(gpw));
    if (!j) {
        commit();
        return std::unexpected(bad(j.error().message));
    }
    auto r = std::make_unique<RunMem>();
    r->rec.id = next_run_id_++;
    r->rec.workspace_id = ws_id;
    r->rec.pool_id = pool.rec.id;
    r->rec.name = name;
    r->rec.workers = static_cast<int>(workers);
    r->rec.gpus_per_worker = static_cast<int>(gpw);
    r->rec.time_limit_s = limit;
    r->rec.sim_duration_s = sim;
    r->rec.command = command;
    r->rec.image = image;
    r->rec.state = "pending";
    r->rec.submitted_s = now;
    r->rec.phase_since_s = now;
    r->pool = pi;
    r->job = *j;
    pool.job_run[*j] = r->rec.id;
    ledger_.set_run(static_cast<int>(r->rec.id), static_cast<int>(ws_id), static_cast<int>(pool.rec.id));
    for (int k = 0; k < workers; ++k) {
        r->w.push_back(counter_->add_worker(now, static_cast<int>(r->rec.id), static_cast<int>(gpw)));
        r->parts.emplace_back();
        r->gpu_index.emplace_back();
    }
    const store::Id id = r->rec.id;
    runs_[id] = std::move(r);
    touch(*runs_[id]);
    pool.dirty = true;
    // Logged before the round, so that its run.placed / run.launched lines follow it.
    log(LogLevel::Info, "run.submitted", {{"run", name}, {"workspace", workspaces_.at(ws_id).name},
                                          {"gpus", std::to_string(gpus)}});
    schedule(pi, now);
    commit();
    json out = run_json(*runs_[id]);
    wake_ = true;
    lk.unlock();
    cv_.notify_all();
    return out;
}

ApiResult<json> Service::list_runs(const Caller& c, const Params& q) {
    if (auto ok = check_runs_query(q); !ok) return std::unexpected(ok.error());
    auto st = q.find("state");
    std::lock_guard lk(mu_);
    auto ws = q.find("workspace");
    std::vector<const RunMem*> out;
    for (const auto& [id, r] : runs_) {
        if (!visible(c, *r)) continue;
        if (st != q.end() && r->rec.state != st->second) continue;
        if (ws != q.end()) {
            auto w = workspaces_.find(r->rec.workspace_id);
            if (w == workspaces_.end() || w->second.name != ws->second) continue;
        }
        out.push_back(r.get());
    }
    std::sort(out.begin(), out.end(), [](const RunMem* a, const RunMem* b) {
        return a->rec.submitted_s != b->rec.submitted_s ? a->rec.submitted_s > b->rec.submitted_s : a->rec.id > b->rec.id;
    });
    json arr = json::array();
    for (const RunMem* r : out) arr.push_back(run_json(*r));
    return json{{"runs", std::move(arr)}};
}

ApiResult<json> Service::show_run(const Caller& c, const std::string& name, const Params& q) {
    std::lock_guard lk(mu_);
    auto r = find_run(c, name, q);
    if (!r) return std::unexpected(r.error());
    return run_json(**r);
}

ApiResult<json> Service::stop_run(const Caller& c, const std::string& name, const Params& q) {
    std::unique_lock lk(mu_);
    auto found = find_run(c, name, q);
    if (!found) return std::unexpected(found.error());
    if (c.token.scope == store::Scope::Operator)
        return std::unexpected(ApiError{403, "cluster-operator tokens cannot stop runs"});
    const store::Id id = (*found)->rec.id;
    const Seconds now0 = clock_.now();
    begin(now0);
    catch_up(now0);
    const Seconds t = last_event_s_;
    RunMem& r = *runs_.at(id);
    touch(r);
    if (!r.ended()) {
        if (r.rec.state == "pending") {
            end_run(r, t, "stopped", "stopped");
        } else if (r.rec.state == "starting" || r.rec.state == "running") {
            if (r.rec.state == "running") r.rec.executed_s += t - r.rec.phase_since_s;
            for (int w : r.w) (void)counter_->stop(t, w, gp::Cause::Owner);
            exec_->stop(t, r.rec.id);
            r.rec.state = "stopping";
            r.rec.stop_cause = "owner";
            r.rec.phase_since_s = t;
            r.rec.lease_end_s = -1;
            pools_[r.pool]->sched->wind_down(r.job, t);  // leaving: no round may preempt or place it
            touch(r);
            cancel_launch(r, t);
        } else if (r.rec.state == "stopping" && r.rec.stop_cause == "preemption") {
            r.rec.stop_cause = "owner";
            pools_[r.pool]->sched->wind_down(r.job, t);  // waiting again in the rounds: no more
            touch(r);
        } else if (r.rec.state == "stopping" && r.rec.stop_cause == "failure") {
            end_run(r, t, "stopped", "failed");
        }
        log(LogLevel::Info, "run.stop", {{"run", r.rec.name}});
    }
    commit();
    json out = run_json(r);
    wake_ = true;
    lk.unlock();
    cv_.notify_all();
    return out;
}

std::set<store::Id> Service::runs_with_straggler(Seconds now) const {
    std::set<store::Id> out;
    for (int run : stragglers_.runs_with_straggler(now)) {
        auto it = runs_.find(run);
        if (it == runs_.end() || it->second->rec.state != "running") continue;
        auto at = progress_attempt_.find(run);
        if (at == progress_attempt_.end() || at->second != it->second->rec.attempts) continue;
        out.insert(run);
    }
    return out;
}

ApiResult<json> Service::report_progress(const Caller& c, const std::string& name,
                                         const Params& q, std::string_view body) {
    auto in = parse_progress_body(body);
    if (!in) return std::unexpected(in.error());
    std::unique_lock lk(mu_);
    auto found = find_run(c, name, q);
    if (!found) return std::unexpected(found.error());
    if (c.token.scope == store::Scope::Operator)
        return std::unexpected(ApiError{403, "cluster-operator tokens cannot report progress"});
    RunMem& r = **found;
    // (worker, step) pairs from either body form.
    auto parsed = progress_reports(*in, r.rec.workers);
    if (!parsed) return std::unexpected(parsed.error());
    const auto& reports = *parsed;
    if (r.rec.state != "running")
        return std::unexpected(ApiError{409, "run '" + name + "' is " + r.rec.state + ", not running"});
    const store::Id id = r.rec.id;
    const Seconds now0 = clock_.now();
    begin(now0);
    catch_up(now0);
    const Seconds t = last_event_s_;
    RunMem& run = *runs_.at(id);
    const int key = static_cast<int>(id);
    auto& attempt = progress_attempt_[id];
    if (attempt != run.rec.attempts) {  // a new attempt: only its own progress is judged
        stragglers_.set_gang(key, run.rec.workers);
        for (int w = 0; w < run.rec.workers; ++w) stragglers_.reset(key, w);
        attempt = run.rec.attempts;
    }
    for (const auto& [w, step] : reports) {
        (void)counter_->progress(t, run.w[static_cast<std::size_t>(w)], step);
        stragglers_.progress(key, w, t, step);
    }
    commit();
    const auto slow = stragglers_.stragglers(key, t);
    json workers = json::array();
    for (int w = 0; w < run.rec.workers; ++w) {
        const auto& st = counter_->status(run.w[static_cast<std::size_t>(w)]);
        workers.push_back({{"index", w},
                           {"stalled", st.phase == gp::Phase::Running && st.stalled},
                           {"straggler", std::find(slow.begin(), slow.end(), w) != slow.end()}});
    }
    return json{{"run", run.rec.name}, {"workers", std::move(workers)}};
}

}  // namespace astraeus::service
