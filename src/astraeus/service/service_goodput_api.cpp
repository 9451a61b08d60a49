#include "astraeus/service/service.hpp"

#include <algorithm>
#include <cstdlib>

#include "astraeus/goodput_io/prometheus_text.hpp"
#include "astraeus/service/token.hpp"
#include "astraeus/goodput/calendar.hpp"
#include "astraeus/goodput_io/ledger_json.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/service/goodput_rows_order.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/request_parse.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

using nlohmann::json;
namespace gp = goodput;
using namespace detail;

// The REST operations on goodput: ledgers by workspace/run/machine/pool over a period, weekly,
// one run, the organisation view, the Prometheus exposition and the alerts (service.hpp).

// --- goodput -------------------------------------------------------------------------------------

ApiResult<json> Service::goodput_for(const Caller& c, const Params& q, int workspace) {
    (void)c;
    Params rest = q;
    auto order = take_goodput_rows_order(rest);
    if (!order) return std::unexpected(order.error());
    auto w = parse_goodput_window(rest, clock_.now());
    if (!w) return std::unexpected(w.error());
    std::lock_guard lk(mu_);
    auto rows = ledger_.query(w->by, gp::Period{w->start, w->end}, workspace);
    if (w->by == gp::By::Run) add_held_runs(rows, w->start, w->end, workspace);
    return ordered_rows_json(w->by, w->start, w->end, rows, *order);
}

json Service::ordered_rows_json(gp::By by, Seconds start_s, Seconds end_s, const std::vector<gp::Row>& rows,
                                const GoodputRowsOrder& o) const {
    std::vector<std::string> names, workspaces;
    names.reserve(rows.size());
    for (const gp::Row& r : rows) {
        names.push_back(by_name(by, r.id));
        if (by == gp::By::Run) workspaces.push_back(by_name(gp::By::Workspace, ledger_.workspace_of(r.id)));
    }
    std::vector<OrderedRow> keyed;
    keyed.reserve(rows.size());
    gp::Counts total;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        keyed.push_back({names[i], by == gp::By::Run ? std::string_view(workspaces[i]) : std::string_view(), rows[i].counts});
        total += rows[i].counts;
    }
    std::vector<gp::NamedCounts> named;
    std::vector<gp::Row> shown;
    for (std::size_t i : order_goodput_rows(keyed, o)) {
        named.push_back({names[i], rows[i].counts});
        shown.push_back(rows[i]);
    }
    json out = gp::rows_json(gp::to_string(by), start_s, end_s, named);
    out["total"] = gp::ledger_json(total);
    out["rows_total"] = rows.size();
    if (by == gp::By::Run) add_run_workspaces(out, shown);
    return out;
}

void Service::add_held_runs(std::vector<gp::Row>& rows, Seconds start_s, Seconds end_s,
                            int workspace) const {
    // A run counts at minute ends: one that has held GPUs in the period for less than a minute
    // so far has no ledger row yet. It gets one (zeros until its first count), as `--run NAME`
    // shows it: a run with any held time in the period has a row.
    const Seconds from = gp::hour_start(start_s);
    each_run_of(workspace, [&](const RunMem& r) {
        const int run = static_cast<int>(r.rec.id);
        bool held = false;
        for (const store::AttemptRec& a : r.rec.attempt_list)
            held = held || (a.started_s <= end_s && (a.ended_s < 0 || a.ended_s >= from));
        if (!held) return;
        auto at = std::lower_bound(rows.begin(), rows.end(), run,
                                   [](const gp::Row& x, int v) { return x.id < v; });
        if (at == rows.end() || at->id != run) rows.insert(at, gp::Row{run, gp::Counts{}});
    });
}

void Service::add_run_workspaces(json& doc, const std::vector<gp::Row>& rows) const {
    // Run names are unique per workspace only: each run row names its workspace.
    auto& arr = doc["rows"];
    for (std::size_t i = 0; i < rows.size() && i < arr.size(); ++i)
        arr[i]["workspace"] = by_name(gp::By::Workspace, ledger_.workspace_of(rows[i].id));
}

ApiResult<json> Service::goodput(const Caller& c, const Params& q) {
    const auto m = q.find("machine");
    if (m == q.end()) return goodput_for(c, q, ws_scope(c));
    // by=run&machine=NAME: each run's time on that machine (held only: waiting belongs to no
    // machine), for a machine's page: one pass over the ledger (GoodputLedger::query_on_machine).
    Params rest = q;
    rest.erase("machine");
    auto order = take_goodput_rows_order(rest);
    if (!order) return std::unexpected(order.error());
    auto w = parse_goodput_window(rest, clock_.now());
    if (!w) return std::unexpected(w.error());
    if (w->by != gp::By::Run)
        return std::unexpected(bad("'machine' goes with by=run (each run's time on that machine)"));
    if (m->second.empty()) return std::unexpected(bad("'machine' is empty"));
    std::lock_guard lk(mu_);
    const gp::Period period{w->start, w->end};
    const int visible = ws_scope(c);
    int machine = -1;
    for (const gp::Row& r : ledger_.query(gp::By::Machine, period, visible))
        if (by_name(gp::By::Machine, r.id) == m->second) machine = r.id;
    std::vector<gp::Row> rows;
    if (machine >= 0) rows = ledger_.query_on_machine(machine, period, visible);
    json out = ordered_rows_json(gp::By::Run, w->start, w->end, rows, *order);
    out["machine"] = m->second;
    return out;
}

ApiResult<json> Service::cluster_goodput(const Caller& c, const std::string& org,
                                         const std::string& cluster, const Params& q) {
    if (!c.admin()) return std::unexpected(ApiError{403, "organisation admins only"});
    if (org != org_.name || cluster != cluster_.name)
        return std::unexpected(not_found("no cluster '" + cluster + "' in organisation '" + org + "'"));
    return goodput_for(c, q, gp::kAllWorkspaces);
}

ApiResult<json> Service::goodput_weekly(const Caller& c, const Params& q) {
    auto wq = parse_weekly_query(q);
    if (!wq) return std::unexpected(wq.error());
    const gp::By by = wq->by;
    const int weeks = wq->weeks;
    std::lock_guard lk(mu_);
    const Seconds now = clock_.now();
    auto res = ledger_.weekly(by, now, weeks, ws_scope(c));
    if (!res) return std::unexpected(bad(res.error().message));
    json arr = json::array();
    // With a limit: each week's most held rows (as the pages show them), the total over all.
    const GoodputRowsOrder order{wq->limit > 0 ? "held" : "", true, wq->limit};
    for (const auto& wk : *res) {
        json one = ordered_rows_json(by, wk.week_start_s, wk.week_start_s + gp::kWeek, wk.rows, order);
        one.erase("by");
        json entry;
        entry["week"] = gp::iso_week_label(wk.week_start_s);
        entry.update(one);
        arr.push_back(std::move(entry));
    }
    return json{{"by", std::string(gp::to_string(by))}, {"weeks", std::move(arr)}};
}

ApiResult<json> Service::run_goodput(const Caller& c, const std::string& name, const Params& q) {
    std::lock_guard lk(mu_);
    auto r = find_run(c, name, q);
    if (!r) return std::unexpected(r.error());
    json out;
    out["run"] = (*r)->rec.name;
    out["workspace"] = by_name(gp::By::Workspace, static_cast<int>((*r)->rec.workspace_id));
    out.update(gp::ledger_json(ledger_.run_total(static_cast<int>((*r)->rec.id))));
    return out;
}

ApiResult<std::string> Service::metrics(const Caller& c) {
    std::lock_guard lk(mu_);
    const Seconds now = clock_.now();
    const int f = ws_scope(c);
    gp::MetricsSnapshot s;
    s.is_operator = c.operator_();
    const std::pair<gp::MetricWindow, gp::Period> windows[] = {
        {gp::MetricWindow::Hour, {gp::hour_start(now), now + 1}},
        {gp::MetricWindow::Day, {now - gp::kDay, now + 1}}};
    for (const auto& [win, period] : windows) {
        const std::pair<gp::MetricScope, gp::By> scopes[] = {
            {gp::MetricScope::Workspace, gp::By::Workspace},
            {gp::MetricScope::Machine, gp::By::Machine},
            {gp::MetricScope::Pool, gp::By::Pool}};
        gp::Counts cluster_total;
        for (const auto& [scope, by] : scopes)
            for (const auto& row : ledger_.query(by, period, f)) {
                s.goodput.push_back({scope, by_name(by, row.id), win, row.counts});
                if (by == gp::By::Workspace) cluster_total += row.counts;
            }
        // The cluster's series only for tokens that see the whole cluster: a workspace token's
        // total would be its own time under the real cluster series' labels (docs/api.md).
        if (c.token.scope != store::Scope::Workspace)
            s.goodput.push_back({gp::MetricScope::Cluster, cluster_.name, win, cluster_total});
    }
    std::map<store::Id, std::int64_t> stalled;
    for (const auto& [id, w] : workspaces_)
        if (c.token.scope != store::Scope::Workspace || id == c.token.workspace_id) stalled[id] = 0;
    each_run_of(f, [&](const RunMem& r) {
        if (r.ended() || !visible(c, r)) return;
        const std::string ns = by_name(gp::By::Workspace, static_cast<int>(r.rec.workspace_id));
        s.runs.push_back({ns, r.rec.name, ledger_.run_total(static_cast<int>(r.rec.id))});
        for (int w : r.w)
            if (counter_->status(w).phase == gp::Phase::Running && counter_->status(w).stalled)
                ++stalled[r.rec.workspace_id];
    });
    std::map<store::Id, std::int64_t> straggling;
    for (store::Id id : runs_with_straggler(now)) {
        const RunMem& r = *runs_.at(id);
        if (visible(c, r)) ++straggling[r.rec.workspace_id];
    }
    for (const auto& [id, n] : stalled) {
        const std::string ns = by_name(gp::By::Workspace, static_cast<int>(id));
        s.workers_stalled.push_back({ns, n});
        s.runs_with_straggler.push_back({ns, straggling[id]});
    }
    if (s.is_operator)
        for (const auto& [metric, n] : alerts_->firing_by_metric()) s.threshold_alerts_firing.push_back({metric, n});
    if (leader_metrics_) return gp::prometheus_text(s) + leader_metrics_();
    return gp::prometheus_text(s);
}

ApiResult<json> Service::alerts(const Caller& c) {
    std::lock_guard lk(mu_);
    json arr = json::array();
    for (const auto& a : alerts_->alerts()) {
        const bool threshold = a.rule >= 0;
        if (threshold && !c.operator_()) continue;
        if (c.token.scope == store::Scope::Workspace &&
            !(a.scope == gp::ScopeKind::Workspace && a.scope_id == static_cast<int>(c.token.workspace_id)))
            continue;
        const gp::By by = a.scope == gp::ScopeKind::Workspace ? gp::By::Workspace
                          : a.scope == gp::ScopeKind::Pool    ? gp::By::Pool
                                                              : gp::By::Machine;
        json j;
        j["name"] = std::string(alerts_->name_of(a));
        j["scope"] = std::string(gp::to_string(a.scope));
        j["target"] = a.scope == gp::ScopeKind::Cluster ? cluster_.name : by_name(by, a.scope_id);
        j["state"] = std::string(gp::to_string(a.state));
        j["since"] = gp::format_rfc3339(a.since);
        j["value"] = a.value;
        arr.push_back(std::move(j));
    }
    return json{{"alerts", std::move(arr)}};
}

}  // namespace astraeus::service
