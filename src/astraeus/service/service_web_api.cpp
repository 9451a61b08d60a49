#include <algorithm>

#include "astraeus/base/count_text.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

using nlohmann::json;
namespace gp = goodput;
using namespace detail;

// The read-only views the web pages need beyond the runs and goodput calls (service.hpp,
// docs/api.md "Fairness", "Attempts", "Stalls"): the ASTRAEA fairness ledgers per pool and
// workspace, a run's attempts and its workers' progress, and what is stalled now.

namespace {

double gpu_hours(GpuSeconds s) { return static_cast<double>(s) / 3600.0; }

json sums_json(const TenantServiceSums& s) {
    json j{{"received_gpu_hours", gpu_hours(s.utilized)},
           {"deserved_gpu_hours", gpu_hours(s.deserved)},
           {"entitled_gpu_hours", gpu_hours(s.entitled)},
           {"demand_gpu_hours", gpu_hours(s.demand)}};
    if (s.deserved > 0) j["fairness"] = static_cast<double>(s.utilized) / static_cast<double>(s.deserved);
    return j;
}

}  // namespace

ApiResult<json> Service::fairness(const Caller& c) {
    std::unique_lock lk(mu_);
    // Bring the scheduler's ledgers up to now: the due events first (as every operation does),
    // then each pool's clock, so that the window ends now and not at the pool's last event.
    begin(clock_.now());
    catch_up(clock_.now());
    for (auto& p : pools_) p->sched->advance(last_event_s_);
    commit();
    wake_ = true;
    cv_.notify_all();
    const bool ws_only = c.token.scope == store::Scope::Workspace;
    std::string own;
    if (ws_only) {
        auto w = workspaces_.find(c.token.workspace_id);
        own = w == workspaces_.end() ? "" : w->second.name;
    }
    json pools = json::array();
    Seconds window_s = 0, bucket_s = 3600;
    for (const auto& p : pools_) {
        const RoundAdapter& a = *p->sched;
        bucket_s = a.bucket_s();
        window_s = a.bucket_s() * a.window_buckets();
        const Seconds clock = a.clock_s() < 0 ? clock_.now() : a.clock_s();
        const Seconds bucket_start = clock - (((clock % bucket_s) + bucket_s) % bucket_s);
        json rows = json::array();
        for (const TenantView& v : a.tenant_views()) {
            if (ws_only && v.name != own) continue;
            json row = sums_json(v.window);
            row["workspace"] = v.name;
            row["weight"] = v.weight;
            row["quota_gpus"] = v.quota_gpus;
            row["used_gpus"] = v.used_gpus;
            row["demand_gpus"] = v.demand_gpus;
            json hist = json::array();
            const auto n = static_cast<Seconds>(v.buckets.size());
            for (Seconds k = 0; k < n; ++k) {
                json h = sums_json(v.buckets[static_cast<std::size_t>(k)]);
                h["start"] = gp::format_rfc3339(bucket_start - (n - k) * bucket_s);
                hist.push_back(std::move(h));
            }
            json cur = sums_json(v.current);
            cur["start"] = gp::format_rfc3339(bucket_start);
            cur["partial"] = true;
            hist.push_back(std::move(cur));
            row["history"] = std::move(hist);
            rows.push_back(std::move(row));
        }
        pools.push_back({{"pool", p->rec.name},
                         {"gpus", p->gpus()},
                         {"free_gpus", a.free_gpus()},
                         {"policy", a.policy_name()},
                         {"at", gp::format_rfc3339(clock)},
                         {"workspaces", std::move(rows)}});
    }
    // Why each pending run waits, with the figures behind the scheduler's reason.
    json pending = json::array();
    for (const auto& [id, r] : runs_) {
        if (r->rec.state != "pending" || !visible(c, *r)) continue;
        const PoolState& pool = *pools_[r->pool];
        auto w = workspaces_.find(r->rec.workspace_id);
        const std::string ws = w == workspaces_.end() ? "" : w->second.name;
        const int gpus = r->rec.workers * r->rec.gpus_per_worker;
        std::string why;
        for (const TenantView& v : pool.sched->tenant_views()) {
            if (v.name != ws) continue;
            if (r->rec.reason.rfind("waiting for quota", 0) == 0)
                why = "workspace " + ws + " holds " + str(v.used_gpus) + " of its " + str(v.quota_gpus) +
                      "-GPU share of pool " + pool.rec.name + " and this run needs " + str(gpus) +
                      " more: it starts when the workspace's own runs release GPUs, or when GPUs other "
                      "workspaces leave unused can be lent to it";
            else if (r->rec.reason.rfind("waiting for GPUs:", 0) == 0)
                why = "workspace " + ws + " is the only one holding or asking for GPUs in pool " + pool.rec.name +
                      ", so its share is the whole pool; its own runs hold " + count_text(v.used_gpus, "GPU") +
                      " of it and this run needs " + count_text(gpus, "GPU") + " free: it starts when enough of "
                      "them end or give their GPUs back at their lease end";
            else if (!r->rec.reason.empty())
                why = "pool " + pool.rec.name + " has " + count_text(pool.sched->free_gpus(), "GPU") + " free; this run needs " +
                      str(r->rec.workers) + " x " + str(r->rec.gpus_per_worker) + " GPUs placed together";
        }
        json j{{"run", r->rec.name},     {"workspace", ws}, {"pool", pool.rec.name},
               {"gpus", gpus},           {"reason", r->rec.reason.empty() ? "waiting for the next round" : r->rec.reason},
               {"waiting_since", gp::format_rfc3339(r->rec.phase_since_s)}};
        if (!why.empty()) j["explanation"] = why;
        pending.push_back(std::move(j));
    }
    return json{{"organization", org_.name},
                {"cluster", cluster_.name},
                {"window_s", window_s},
                {"bucket_s", bucket_s},
                {"pools", std::move(pools)},
                {"pending", std::move(pending)}};
}

ApiResult<json> Service::run_attempts(const Caller& c, const std::string& name, const Params& q) {
    std::lock_guard lk(mu_);
    auto found = find_run(c, name, q);
    if (!found) return std::unexpected(found.error());
    const RunMem& r = **found;
    const Seconds now = clock_.now();
    json attempts = json::array();
    for (const auto& a : r.rec.attempt_list) {
        json j{{"number", a.number}, {"started_at", gp::format_rfc3339(a.started_s)}};
        if (a.ended_s >= 0) j["ended_at"] = gp::format_rfc3339(a.ended_s);
        if (!a.outcome.empty()) j["outcome"] = a.outcome;
        attempts.push_back(std::move(j));
    }
    const int key = static_cast<int>(r.rec.id);
    auto at = progress_attempt_.find(r.rec.id);
    const bool judged = r.rec.state == "running" && at != progress_attempt_.end() && at->second == r.rec.attempts;
    const auto slow = judged ? stragglers_.stragglers(key, now) : std::vector<int>{};
    json workers = run_json(r)["worker_list"];
    for (auto& w : workers) {
        const int k = w["index"].get<int>();
        const bool has = static_cast<std::size_t>(k) < r.w.size();
        const auto& st = has ? counter_->status(r.w[static_cast<std::size_t>(k)]) : gp::WorkerStatus{};
        w["stalled"] = has && st.phase == gp::Phase::Running && st.stalled;
        w["straggler"] = std::find(slow.begin(), slow.end(), k) != slow.end();
        if (judged) {
            if (const auto step = stragglers_.last_step(key, k); step >= 0) w["step"] = step;
            if (const double rate = stragglers_.rate(key, k, now); rate >= 0) w["steps_per_s"] = rate;
        }
    }
    json out{{"run", r.rec.name},
             {"workspace", workspaces_.contains(r.rec.workspace_id) ? workspaces_.at(r.rec.workspace_id).name : ""},
             {"state", r.rec.state},
             {"submitted_at", gp::format_rfc3339(r.rec.submitted_s)},
             {"now", gp::format_rfc3339(now)},
             {"attempts", std::move(attempts)},
             {"workers", std::move(workers)}};
    if (r.rec.ended_s >= 0) out["ended_at"] = gp::format_rfc3339(r.rec.ended_s);
    return out;
}

ApiResult<json> Service::whoami(const Caller& c) {
    // Not under mu_: org_ and cluster_ are set once by load(), the names are published.
    json j{{"scope", store::to_string(c.token.scope)},
           {"token", c.token.name},
           {"organization", org_.name},
           {"cluster", cluster_.name}};
    if (c.token.scope == store::Scope::Workspace) {
        const auto names = workspace_names();
        auto w = names->find(c.token.workspace_id);
        j["workspace"] = w == names->end() ? "" : w->second;
    }
    return j;
}

ApiResult<json> Service::stalls(const Caller& c) {
    std::lock_guard lk(mu_);
    const Seconds now = clock_.now();
    const std::set<store::Id> slow_runs = runs_with_straggler(now);
    json stalled = json::array(), stragglers = json::array();
    for (const auto& [id, r] : runs_) {
        if (r->rec.state != "running" || !visible(c, *r)) continue;
        const std::string ws = workspaces_.contains(r->rec.workspace_id) ? workspaces_.at(r->rec.workspace_id).name : "";
        json idx = json::array();
        for (std::size_t k = 0; k < r->w.size(); ++k) {
            const auto& st = counter_->status(r->w[k]);
            if (st.phase == gp::Phase::Running && st.stalled) idx.push_back(k);
        }
        if (!idx.empty()) stalled.push_back({{"run", r->rec.name}, {"workspace", ws}, {"workers", std::move(idx)}});
        if (slow_runs.contains(id))
            stragglers.push_back({{"run", r->rec.name},
                                  {"workspace", ws},
                                  {"workers", stragglers_.stragglers(static_cast<int>(id), now)}});
    }
    return json{{"stalled", std::move(stalled)}, {"stragglers", std::move(stragglers)}};
}

}  // namespace astraeus::service
