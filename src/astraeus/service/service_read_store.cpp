// The read half of Service::load() (service.hpp): the store read into memory. The tenancy, the
// pools and machines the configuration names (added to the store first when new: the store is
// then read as it will be), the workspaces, alert rules, Idempotency-Keys and every run as stored;
// then, after the reconcile half (service_reconcile.cpp: the runs and the executor brought into
// agreement, the resumed counts written), the goodput ledger. Nothing here tells the executor
// anything or changes a run.
#include <algorithm>

#include "astraeus/goodput/calendar.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

namespace gp = goodput;
using namespace detail;

Result<void> Service::load() {
    Loaded got;
    if (auto ok = read_store(got); !ok) return ok;
    if (auto ok = reconcile_loaded(got); !ok) return ok;
    if (auto ok = read_ledger(got); !ok) return ok;
    for (auto& p : pools_) p->dirty = true;
    last_minute_s_ = gp::minute_start(clock_.now());
    const LogLevel loaded = read_only_ ? LogLevel::Debug : LogLevel::Info;  // (a follower reloads every few s)
    log(loaded, "service.loaded",
        {{"runs", std::to_string(runs_.size())}, {"rows", std::to_string(got.ledger_rows)},
         {"counted_to", gp::format_rfc3339(got.counted_to)}, {"policy", cfg_.policy}});
    return {};
}

Result<void> Service::read_store(Loaded& got) {
    // Tenancy: create what the config names when the store is empty.
    auto orgs = store_->orgs();
    if (!orgs) return std::unexpected(orgs.error());
    if (orgs->empty() && read_only_) return fail("the database holds no organisation yet (the leader creates it)");
    if (orgs->empty()) {
        auto ids = store_->init(cfg_.organization, cfg_.cluster);
        if (!ids) return std::unexpected(ids.error());
        orgs = store_->orgs();
        if (!orgs) return std::unexpected(orgs.error());
        log(LogLevel::Info, "store.initialised",
            {{"organization", cfg_.organization}, {"cluster", cfg_.cluster}});
    }
    auto clusters = store_->clusters();
    if (!clusters) return std::unexpected(clusters.error());
    const store::ClusterRec* found = nullptr;
    for (const auto& c : *clusters)
        if (c.name == cfg_.cluster) found = &c;
    if (!found && clusters->size() == 1) found = &clusters->front();
    if (!found) return fail("the store has no cluster named '" + cfg_.cluster + "'");
    cluster_ = *found;
    for (const auto& o : *orgs)
        if (o.id == cluster_.org_id) org_ = o;
    // Pools and machines: the configuration's, when it names them, is the inventory (new
    // pools and machines are added; the store's others are retired: not scheduled, their runs
    // reconciled below); otherwise the store's (the default pool only for an empty store).
    auto have_pools = store_->pools(cluster_.id);
    if (!have_pools) return std::unexpected(have_pools.error());
    const bool from_config = cfg_.pools_given || have_pools->empty();
    std::set<std::string> keep_pools, keep_machines;
    if (from_config && read_only_) {
        // A snapshot adds nothing: the names the leader keeps, to retire the same others.
        for (const PoolConfig& pc : cfg_.pools) {
            keep_pools.insert(pc.name);
            int k = 0;
            if (!agent_machines_)
                for (const MachineGroup& g : pc.machines)
                    for (int i = 0; i < g.count; ++i) keep_machines.insert(pc.name + "-" + std::to_string(++k));
        }
    } else if (from_config)
        for (const PoolConfig& pc : cfg_.pools) {
            auto pid = store_->add_pool(cluster_.id, pc.name);
            if (!pid) return std::unexpected(pid.error());
            keep_pools.insert(pc.name);
            if (agent_machines_) continue;  // with node agents, machines come from their agents
            auto ms = store_->machines(cluster_.id);
            if (!ms) return std::unexpected(ms.error());
            int k = 0;
            for (const MachineGroup& g : pc.machines)
                for (int i = 0; i < g.count; ++i) {
                    const std::string name = pc.name + "-" + std::to_string(++k);
                    keep_machines.insert(name);
                    auto m = std::find_if(ms->begin(), ms->end(), [&](auto& x) { return x.name == name; });
                    if (m == ms->end()) {
                        auto mid = store_->add_machine(*pid, name, g.gpus);
                        if (!mid) return std::unexpected(mid.error());
                    } else if ((m->gpus != g.gpus && cfg_.local_gpus == 0) || m->pool_id != *pid) {
                        // (the local executor's one machine takes the GPUs found now: below)
                        return fail("the configuration's machine " + name + " (" + std::to_string(g.gpus) +
                                    " GPUs) is in the data directory with " + std::to_string(m->gpus) +
                                    " GPUs (or in another pool): a machine cannot change; give the pool a new name");
                    }
                }
        }
    auto pools = store_->pools(cluster_.id);
    if (!pools) return std::unexpected(pools.error());
    auto machines = store_->machines(cluster_.id);
    if (!machines) return std::unexpected(machines.error());
    auto opt = scheduler_options(cfg_.policy, cfg_.lease_s, cfg_.starvation_s, cfg_.scheduler);
    if (!opt) return std::unexpected(opt.error());
    for (const auto& m : *machines) machine_names_[m.id] = m.name;
    for (const auto& p : *pools) {
        auto ps = std::make_unique<PoolState>();
        ps->rec = p;
        for (const auto& m : *machines)
            if (m.pool_id == p.id && (!cfg_.pools_given || agent_machines_ || keep_machines.contains(m.name)))
                ps->machines.push_back(m);
        if (cfg_.local_gpus > 0) {  // the local executor: this machine only, its GPUs
            if (!pools_.empty()) ps->machines.clear();
            if (ps->machines.size() > 1) ps->machines.resize(1);
            if (!ps->machines.empty()) ps->machines.front().gpus = cfg_.local_gpus;
        }
        if ((ps->machines.empty() && !agent_machines_) || (cfg_.pools_given && !keep_pools.contains(p.name))) {
            retired_pools_[p.id] = p.name;  // (an agents pool waits for its machines)
            continue;
        }
        ClusterSpec spec;
        for (std::size_t k = 0; k < ps->machines.size(); ++k) {
            spec.machine_gpus.push_back(ps->machines[k].gpus);
            machine_index_[ps->machines[k].id] = {pools_.size(), static_cast<int>(k)};
        }
        auto sched = RoundAdapter::make(spec, *opt, cfg_.placer);
        if (!sched) return std::unexpected(sched.error());
        ps->sched = std::move(*sched);
        pools_.push_back(std::move(ps));
    }
    if (pools_.empty()) return fail("the cluster has no pool with machines");
    refresh_workspaces();

    // Alerts.
    std::vector<gp::ThresholdRule> rules;
    for (const ThresholdConfig& t : cfg_.thresholds) {
        gp::ThresholdRule r;
        r.metric = t.metric;
        auto what = gp::parse_metric(t.metric);
        if (!what) return std::unexpected(what.error());
        r.what = *what;
        auto op = gp::parse_op(t.op);
        if (!op) return std::unexpected(op.error());
        r.op = *op;
        r.value = t.value;
        r.for_s = t.for_s;
        r.scope_id = -1;
        if (!t.scope.empty()) {
            if (r.what.scope == gp::ScopeKind::Workspace)
                for (const auto& [id, w] : workspaces_)
                    if (w.name == t.scope) r.scope_id = static_cast<int>(id);
            if (r.what.scope == gp::ScopeKind::Pool)
                for (const auto& p : pools_)
                    if (p->rec.name == t.scope) r.scope_id = static_cast<int>(p->rec.id);
            if (r.what.scope == gp::ScopeKind::Machine)
                for (const auto& [id, name] : machine_names_)
                    if (name == t.scope) r.scope_id = static_cast<int>(id);
            if (r.scope_id < 0) return fail("threshold alert: no " + std::string(gp::to_string(r.what.scope)) + " named '" + t.scope + "'");
        }
        rules.push_back(std::move(r));
    }
    alerts_ = std::make_unique<gp::AlertEngine>(
        gp::DropConfig{cfg_.drop_below, cfg_.drop_points,
                       static_cast<GpuSeconds>(cfg_.drop_min_held_gpu_hours * 3600.0)},
        std::move(rules));

    // Idempotency-Keys of the last day (their replies stay in the store).
    auto keys = store_->idempotency_keys();
    if (!keys) return std::unexpected(keys.error());
    idem_.load(*keys);
    limiter_.set_rate(cfg_.limits.submissions_per_minute);

    // Runs, as stored (reconciled and restored by the reconcile half), and the count's clock.
    auto runs = store_->runs();
    if (!runs) return std::unexpected(runs.error());
    auto counted = store_->meta("counted_to_s");
    if (!counted) return std::unexpected(counted.error());
    auto last = store_->meta("last_event_s");
    if (!last) return std::unexpected(last.error());
    got.counted_to = counted->value_or(0);
    last_event_s_ = last->value_or(0);
    // Stores written before open waits counted every waiting worker at every minute.
    auto open_waits = store_->meta("open_waits");
    if (!open_waits) return std::unexpected(open_waits.error());
    open_waits_stored_ = open_waits->value_or(0) == 1;
    ledger_.counted_to(got.counted_to);
    for (auto& rec : *runs) {
        next_run_id_ = std::max(next_run_id_, rec.id + 1);
        got.order.push_back(rec.id);
        auto r = std::make_unique<RunMem>();
        r->rec = std::move(rec);
        for (std::size_t p = 0; p < pools_.size(); ++p)
            if (pools_[p]->rec.id == r->rec.pool_id) r->pool = p;
        ledger_.set_run(static_cast<int>(r->rec.id), static_cast<int>(r->rec.workspace_id),
                        static_cast<int>(r->rec.pool_id));
        run_names_[{r->rec.workspace_id, r->rec.name}] = r->rec.id;
        ws_runs_[r->rec.workspace_id][r->rec.id] = r.get();
        runs_[r->rec.id] = std::move(r);
    }
    got.machines = std::move(*machines);
    got.opt = *opt;
    return {};
}

Result<void> Service::read_ledger(Loaded& got) {
    auto rows = store_->goodput_rows();
    if (!rows) return std::unexpected(rows.error());
    for (const auto& g : *rows)
        ledger_.add({static_cast<int>(g.run_id), static_cast<int>(g.machine_id), g.hour,
                     static_cast<gp::Category>(g.category), g.held, g.gpu_s});
    got.ledger_rows = rows->size();
    auto al = store_->alerts();
    const LogLevel loaded = read_only_ ? LogLevel::Debug : LogLevel::Info;  // (a follower reloads every few s)
    if (al) log(loaded, "alerts.loaded", {{"count", std::to_string(al->size())}});
    return {};
}

}  // namespace astraeus::service
