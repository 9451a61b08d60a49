#include "astraeus/trace_export/run_history_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "astraeus/trace/native_trace.hpp"

namespace astraeus::trace_export {
namespace {

// The running time of a run's attempts: sum of (ended - started), open ones up to now_s.
Seconds work_of(const store::RunRec& r, Seconds now_s) {
    Seconds total = 0;
    for (const auto& a : r.attempt_list) {
        const Seconds end = a.ended_s >= 0 ? a.ended_s : std::max(now_s, a.started_s);
        total += std::max<Seconds>(0, end - a.started_s);
    }
    return total;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

}  // namespace

Result<RunExport> export_run_history(const RunHistory& h) {
    RunExport ex;
    std::map<store::Id, int> tenant_of;  // workspace id -> tenant index
    for (const auto& ws : h.workspaces) {
        tenant_of[ws.id] = static_cast<int>(ex.workload.tenants.size());
        ex.workload.tenants.push_back({ws.name, ws.weight});
        ex.workload.share_order.push_back(tenant_of[ws.id]);
    }
    std::vector<const store::RunRec*> kept;
    for (const auto& r : h.runs) {
        if (h.since_s && r.submitted_s < *h.since_s) continue;
        if (h.until_s && r.submitted_s >= *h.until_s) continue;
        if (r.attempt_list.empty()) {
            ++ex.never_started;
            continue;
        }
        if (!tenant_of.contains(r.workspace_id))
            return fail(fmt::format("run {} ('{}'): workspace id {} is not in the store", r.id,
                                    r.name, r.workspace_id));
        kept.push_back(&r);
    }
    if (kept.empty())
        return fail(fmt::format("no run that started is submitted in the window ({} never "
                                "started)", ex.never_started));
    Seconds epoch = kept.front()->submitted_s;
    for (const auto* r : kept) epoch = std::min(epoch, r->submitted_s);
    ex.workload.epoch_unix_s = epoch;
    std::string flags;
    for (const auto* r : kept) {
        Job j;
        j.id = r->id;
        j.tenant = tenant_of[r->workspace_id];
        j.gpus = r->workers * r->gpus_per_worker;
        j.submit_s = r->submitted_s - epoch;
        j.duration_s = work_of(*r, h.now_s);
        j.name = r->name;
        ex.workload.jobs.push_back(j);
        if (r->state == "succeeded") {
            ++ex.succeeded;
            continue;
        }
        const bool open = std::any_of(r->attempt_list.begin(), r->attempt_list.end(),
                                      [](const store::AttemptRec& a) { return a.ended_s < 0; });
        if (open) ++ex.running;
        else if (r->state == "failed") ++ex.failed;
        else ++ex.stopped;
        flags += fmt::format("# run {} ({}): {}; duration_s = its work so far ({} s)\n", r->id,
                             r->state, open ? "still running" : "did not finish",
                             j.duration_s);
    }
    sort_by_submit(ex.workload);
    std::string trace = write_native(ex.workload);
    const auto first_line = trace.find('\n') + 1;
    const std::string head = fmt::format(
        "# exported from the service's run history: {} runs ({} succeeded, {} running, {} "
        "failed, {} stopped; {} never started, left out)\n",
        kept.size(), ex.succeeded, ex.running, ex.failed, ex.stopped, ex.never_started);
    ex.trace_csv = trace.substr(0, first_line) + head + flags + trace.substr(first_line);

    nlohmann::json tj = {{"tenants", nlohmann::json::array()}};
    for (const auto& t : ex.workload.tenants)
        tj["tenants"].push_back({{"name", t.name}, {"weight", t.weight}});
    ex.tenants_json = tj.dump(2) + "\n";

    std::map<store::Id, std::string> pool_name;
    for (const auto& p : h.pools) pool_name[p.id] = p.name;
    ex.machines_csv = "machine,pool,gpus,up\n";
    for (const auto& m : h.machines) {
        const std::string pool = pool_name.contains(m.pool_id) ? pool_name[m.pool_id] : "";
        ex.machines_csv += fmt::format("{},{},{},{}\n", csv_field(pool + "/" + m.name),
                                       csv_field(pool), m.gpus, m.up ? 1 : 0);
    }
    return ex;
}

Result<RunExport> export_data_dir(const std::string& data_dir, std::optional<Seconds> since_s,
                                  std::optional<Seconds> until_s) {
    auto st = store::open_sqlite_read_only(data_dir);
    if (!st) return std::unexpected(st.error());
    auto& s = **st;
    auto orgs = s.orgs();
    if (!orgs) return std::unexpected(orgs.error());
    auto clusters = s.clusters();
    if (!clusters) return std::unexpected(clusters.error());
    if (orgs->empty() || clusters->empty())
        return fail(data_dir + ": the store has no organisation/cluster (run `astraeus admin init`)");
    const auto& cluster = clusters->front();
    RunHistory h;
    h.since_s = since_s;
    h.until_s = until_s;
    auto runs = s.runs();
    if (!runs) return std::unexpected(runs.error());
    h.runs = std::move(*runs);
    auto ws = s.workspaces(cluster.org_id, cluster.id);
    if (!ws) return std::unexpected(ws.error());
    h.workspaces = std::move(*ws);
    auto pools = s.pools(cluster.id);
    if (!pools) return std::unexpected(pools.error());
    h.pools = std::move(*pools);
    auto machines = s.machines(cluster.id);
    if (!machines) return std::unexpected(machines.error());
    h.machines = std::move(*machines);
    // A service with the local executor ran one machine with its own GPU count (recorded at
    // its start, Service::load): the cluster is that machine, not the configuration's list.
    auto local_id = s.meta("local_machine_id");
    if (!local_id) return std::unexpected(local_id.error());
    auto local_gpus = s.meta("local_machine_gpus");
    if (!local_gpus) return std::unexpected(local_gpus.error());
    if (local_id->value_or(0) > 0 && local_gpus->value_or(0) > 0) {
        std::erase_if(h.machines, [&](const store::MachineRec& m) { return m.id != **local_id; });
        for (auto& m : h.machines) m.gpus = static_cast<int>(**local_gpus);
    }
    auto last = s.meta("last_event_s");
    if (!last) return std::unexpected(last.error());
    h.now_s = last->value_or(0);
    for (const auto& r : h.runs)  // the clock is at least every time the store holds
        for (const auto& a : r.attempt_list) h.now_s = std::max({h.now_s, a.started_s, a.ended_s});
    return export_run_history(h);
}

}  // namespace astraeus::trace_export
