#include "astraeus/service/service.hpp"

#include <algorithm>
#include <chrono>
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

namespace {
/// A write the store refused at its commit: not acknowledged (it may be lost in a crash before
/// the store takes writes again).
ApiError not_stored() {
    return {507, "the change was not stored: the store refused the write (a full disk?); it is kept in memory "
                 "and written when the store takes writes again, but is not acknowledged: check later",
            10};
}
}  // namespace

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
    return caller_of_token(std::string(rest));
}

Result<std::optional<store::TokenRec>> Service::token_by_hash(const std::string& hash) {
    if (auth_store_) {
        std::lock_guard a(auth_mu_);
        return auth_store_->token_by_hash(hash);
    }
    std::lock_guard lk(mu_);
    return store_->token_by_hash(hash);
}

ApiResult<Caller> Service::caller_of_token(const std::string& token) {
    const std::string hash = sha256_hex(token);
    auto t = token_by_hash(hash);
    if (!t) return std::unexpected(ApiError{500, t.error().message});
    if (!*t) return std::unexpected(ApiError{401, "invalid token"});
    if ((*t)->revoked) return std::unexpected(ApiError{401, "the token was revoked"});
    // org_ is set once, by load(), before any call.
    if ((*t)->org_id != org_.id) return std::unexpected(ApiError{401, "the token is not for this organisation"});
    if ((*t)->scope == store::Scope::Workspace && !workspace_names()->contains((*t)->workspace_id)) {
        std::lock_guard lk(mu_);
        if (!workspaces_.contains((*t)->workspace_id)) refresh_workspaces();
    }
    return Caller{**t};
}

bool Service::visible(const Caller& c, const RunMem& r) const {
    if (c.token.scope == store::Scope::Workspace) return r.rec.workspace_id == c.token.workspace_id;
    return true;  // org admins and the cluster's operators: the whole organisation
}

int Service::ws_scope(const Caller& c) const {
    if (c.token.scope != store::Scope::Workspace) return gp::kAllWorkspaces;
    return static_cast<int>(c.token.workspace_id);
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

json Service::run_head_json(const RunMem& r, bool forecast) const {
    json j;
    j["name"] = r.rec.name;
    auto ws = workspaces_.find(r.rec.workspace_id);
    j["workspace"] = ws == workspaces_.end() ? "" : ws->second.name;
    j["pool"] = by_name(gp::By::Pool, static_cast<int>(r.rec.pool_id));
    j["workers"] = r.rec.workers;
    j["gpus_per_worker"] = r.rec.gpus_per_worker;
    j["state"] = r.rec.state;
    if ((r.rec.state == "pending" || r.rec.state == "cancelled" || r.rec.state == "failed") && !r.rec.reason.empty()) j["reason"] = r.rec.reason;
    if (forecast) add_forecast_json(j, r);
    j["submitted_at"] = gp::format_rfc3339(r.rec.submitted_s);
    if (r.rec.started_s >= 0) j["started_at"] = gp::format_rfc3339(r.rec.started_s);
    if (r.rec.ended_s >= 0) j["ended_at"] = gp::format_rfc3339(r.rec.ended_s);
    if (r.rec.time_limit_s > 0) j["time_limit_s"] = r.rec.time_limit_s;
    return j;
}

json Service::run_json(const RunMem& r, bool forecast) const {
    json j = run_head_json(r, forecast);
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

ApiResult<json> Service::submit(const Caller& c, std::string_view body, std::string_view idempotency_key) {
    if (c.token.scope == store::Scope::Operator)
        return std::unexpected(ApiError{403, "cluster-operator tokens cannot submit runs"});
    const std::string key(idempotency_key);
    std::string body_sha;
    if (!key.empty()) {
        if (const std::string why = idempotency_key_problem(key); !why.empty()) return std::unexpected(bad(why));
        body_sha = sha256_hex(std::string(body));
    }
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
    if (auto w = writable(); !w) return std::unexpected(w.error());  // the store refuses writes: 507
    // A replay of an Idempotency-Key: the first reply again, or 422 for another body. Checked
    // under the lock that creates runs, so two concurrent requests with one key make one run.
    if (!key.empty()) {
        if (const auto* e = idem_.find(c.token.id, key)) {
            if (e->body_sha256 != body_sha)
                return std::unexpected(ApiError{422, "Idempotency-Key '" + key + "' was used with another body "
                                                     "(a new submission needs a new key)"});
            auto rec = store_->idempotency_key(c.token.id, key);
            if (!rec) return std::unexpected(ApiError{500, rec.error().message});
            if (*rec) {
                json first = json::parse((*rec)->reply, nullptr, false);
                if (!first.is_discarded()) return first;
            }
            return std::unexpected(ApiError{500, "the first reply of Idempotency-Key '" + key + "' is not readable"});
        }
    }
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
    if (run_names_.contains({ws_id, name}))
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
    // Per-workspace limits (docs/operations.md): pending runs over every pool, then the rate.
    const std::string& ws_label = workspaces_.at(ws_id).name;
    std::size_t pending = 0;
    for (const auto& p : pools_) pending += p->sched->pending_count(p->sched->tenant_index(ws_label));
    if (pending >= static_cast<std::size_t>(cfg_.limits.pending_runs))
        return std::unexpected(ApiError{429, "workspace " + ws_label + " has " + str(static_cast<std::int64_t>(pending)) +
                                                 " pending runs, its limit (workspace_limits.pending_runs): "
                                                 "submit again when some have started or ended",
                                        60});
    const double mono_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    if (const int wait_s = limiter_.take(ws_id, mono_s); wait_s > 0)
        return std::unexpected(ApiError{429, "workspace " + ws_label + " submitted " +
                                                 str(cfg_.limits.submissions_per_minute) +
                                                 " runs in the last minute, its limit "
                                                 "(workspace_limits.submissions_per_minute): retry in " +
                                                 str(wait_s) + " s",
                                        wait_s});

    const Seconds now0 = clock_.now();
    begin(now0);
    // A pool whose backlog is large runs its round in the loop, not here (see below).
    catch_up(now0, pool.sched->pending_total() <= kSyncRoundBacklog);
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
    pool.set_job_mem(*j, r.get());
    ledger_.set_run(static_cast<int>(r->rec.id), static_cast<int>(ws_id), static_cast<int>(pool.rec.id));
    for (int k = 0; k < workers; ++k) {
        r->w.push_back(counter_->add_worker(now, static_cast<int>(r->rec.id), static_cast<int>(gpw)));
        r->parts.emplace_back();
        r->gpu_index.emplace_back();
    }
    const store::Id id = r->rec.id;
    ws_runs_[ws_id][id] = r.get();
    runs_[id] = std::move(r);
    run_names_[{ws_id, name}] = id;
    touch(*runs_[id]);
    pool.dirty = true;
    // Logged before the round, so that its run.placed / run.launched lines follow it.
    log(LogLevel::Info, "run.submitted", {{"run", name}, {"workspace", workspaces_.at(ws_id).name},
                                          {"gpus", std::to_string(gpus)}});
    // A round now while the backlog is small (the reply shows the placement or the reason);
    // with a large one the loop's next round places it, one round for a burst of submissions
    // (a round is O(pending): one per submission would make a burst quadratic).
    if (pool.sched->pending_total() <= kSyncRoundBacklog) schedule(pi, now);
    // The reply is the state the commit stores (its history noted now, as commit() would).
    // Without a forecast: the new run is in none yet, and a submission does not ask for one
    // (a forecast is O(backlog): readers ask, GET /v1/runs/{run} waits for it).
    runs_[id]->note_state();
    json out = run_json(*runs_[id], false);
    if (!key.empty()) {
        store::IdempotencyRec k{c.token.id, key, body_sha, id, 201,
                                 out.dump(-1, ' ', false, json::error_handler_t::replace), now};
        idem_.add(k);
        batch_.idempotency.push_back(std::move(k));
    }
    const bool durable = commit();
    wake_ = true;
    lk.unlock();
    cv_.notify_all();
    if (!durable) return std::unexpected(not_stored());
    return out;
}

json Service::run_summary_json(const RunMem& r) const {
    json j = run_head_json(r);
    j["attempts"] = r.rec.attempts;
    // The machines its workers hold now (distinct, in worker order).
    json machines = json::array();
    for (std::size_t k = 0; k < r.w.size() && k < r.parts.size(); ++k) {
        if (r.parts[k].empty() || !gp::holds_gpus(counter_->status(r.w[k]))) continue;
        const std::string m = by_name(gp::By::Machine, r.parts[k].front().machine);
        if (std::find(machines.begin(), machines.end(), m) == machines.end()) machines.push_back(m);
    }
    j["machines"] = std::move(machines);
    // Goodput since submitted (every kept hour of the run's ledger; absent when nothing was
    // held), so that a list of runs needs no goodput request of its own.
    if (const auto g = gp::figures(ledger_.run_total(static_cast<int>(r.rec.id))).goodput) j["goodput"] = *g;
    return j;
}

namespace {
/// ASCII case-insensitive substring test (run names are ASCII).
bool contains_nocase(const std::string& hay, const std::string& needle) {
    const auto low = [](char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch; };
    return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                       [&](char a, char b) { return low(a) == low(b); }) != hay.end();
}
}  // namespace

ApiResult<json> Service::list_runs(const Caller& c, const Params& params) {
    auto q = parse_runs_query(params);
    if (!q) return std::unexpected(q.error());
    std::lock_guard lk(mu_);
    // The list's order: newest first (submitted_s descending, then id descending). A page is the
    // `limit` first runs after the cursor: one pass over the runs (cheap comparisons), then a
    // partial sort of the matches; only the page's runs are turned into JSON.
    const auto before = [](const RunMem* a, const RunMem* b) {
        return a->rec.submitted_s != b->rec.submitted_s ? a->rec.submitted_s > b->rec.submitted_s
                                                        : a->rec.id > b->rec.id;
    };
    store::Id ws_id = -1;  // -1: any workspace; 0: a name no workspace has
    if (!q->workspace.empty()) {
        ws_id = 0;
        for (const auto& [id, w] : workspaces_)
            if (w.name == q->workspace) ws_id = id;
    }
    store::Id pool_id = -1;
    if (!q->pool.empty()) {
        pool_id = 0;
        for (const auto& p : pools_)
            if (p->rec.name == q->pool) pool_id = p->rec.id;
    }
    std::vector<const RunMem*> hits;
    std::size_t matches = 0;  // on every page, the cursor aside
    // The runs to look at: the workspace's own (ws_runs_) when the query or the token names
    // one, else every run.
    const store::Id scope = ws_id > 0 ? ws_id
                            : c.token.scope == store::Scope::Workspace ? c.token.workspace_id
                                                                       : -1;
    if (ws_id != 0 && pool_id != 0) {
        each_run_of(scope, [&](const RunMem& r) {
            const store::RunRec& rec = r.rec;
            if (!visible(c, r)) return;
            if (!q->state.empty() && rec.state != q->state) return;
            if (ws_id > 0 && rec.workspace_id != ws_id) return;
            if (pool_id > 0 && rec.pool_id != pool_id) return;
            if (!q->name.empty() && !contains_nocase(rec.name, q->name)) return;
            ++matches;
            if (q->has_cursor && !(rec.submitted_s < q->cursor_submitted_s ||
                                   (rec.submitted_s == q->cursor_submitted_s && rec.id < q->cursor_id)))
                return;
            hits.push_back(&r);
        });
    }
    const bool more = hits.size() > q->limit;
    const std::size_t n = std::min(hits.size(), q->limit);
    std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(n), hits.end(), before);
    json arr = json::array();
    for (std::size_t k = 0; k < n; ++k) arr.push_back(run_summary_json(*hits[k]));
    json out{{"runs", std::move(arr)}, {"matches", matches}};
    if (more) out["next_cursor"] = runs_cursor(hits[n - 1]->rec.submitted_s, hits[n - 1]->rec.id);
    return out;
}

ApiResult<json> Service::run_history(const Caller& c, const std::string& name, const Params& q) {
    std::lock_guard lk(mu_);
    auto r = find_run(c, name, q);
    if (!r) return std::unexpected(r.error());
    const json full = run_json(**r);
    return json{{"run", full["name"]}, {"workspace", full["workspace"]}, {"state", full["state"]},
                {"history", full["history"]}};
}

ApiResult<json> Service::show_run(const Caller& c, const std::string& name, const Params& q) {
    std::unique_lock lk(mu_);
    auto r = find_run(c, name, q);
    if (!r) return std::unexpected(r.error());
    if ((*r)->rec.state == "pending" && !(*r)->ended() && (*r)->pool < pools_.size()) {
        await_forecast(lk, (*r)->pool);  // releases mu_ meanwhile: look the run up again
        r = find_run(c, name, q);
        if (!r) return std::unexpected(r.error());
    }
    return run_json(**r);
}

ApiResult<json> Service::stop_run(const Caller& c, const std::string& name, const Params& q) {
    std::unique_lock lk(mu_);
    auto found = find_run(c, name, q);
    if (!found) return std::unexpected(found.error());
    if (c.token.scope == store::Scope::Operator)
        return std::unexpected(ApiError{403, "cluster-operator tokens cannot stop runs"});
    if (auto w = writable(); !w) return std::unexpected(w.error());
    const store::Id id = (*found)->rec.id;
    const Seconds now0 = clock_.now();
    begin(now0);
    catch_up(now0);
    const Seconds t = last_event_s_;
    RunMem& r = *runs_.at(id);
    touch(r);
    if (!r.ended()) {
        if (r.rec.state == "pending") {
            r.rec.stop_cause = "owner";  // its history's "stopped" says why (no "stopping" before it)
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
    const bool durable = commit();
    json out = run_json(r);
    wake_ = true;
    lk.unlock();
    cv_.notify_all();
    if (!durable) return std::unexpected(not_stored());
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
    if (auto w = writable(); !w) return std::unexpected(w.error());
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
