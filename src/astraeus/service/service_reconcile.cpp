// The reconcile half of Service::load() (service.hpp; the read half: service_read_store.cpp):
// memory, the store and the executor (node agents included) brought into agreement at start.
// The machines the executor starts with (every one up, in the store too), then each run not ended:
// requeued or ended with a reason when its pool or a machine it holds is no longer in the
// configuration (reconcile_run; docs/operations.md "Changing the inventory"), and rebuilt
// (restore_run, service_restore.cpp); the resumed counts written; the rounds' fairness history
// replayed.
#include <algorithm>

#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

namespace gp = goodput;
using namespace detail;

Result<void> Service::reconcile_run(store::RunRec& rec, Seconds t) {
    if (rec.ended_s >= 0) return {};
    std::string gone;  // why the run cannot stay where it is
    bool pool_gone = true;
    for (const auto& p : pools_) pool_gone = pool_gone && p->rec.id != rec.pool_id;
    if (pool_gone) {
        auto it = retired_pools_.find(rec.pool_id);
        gone = "pool ";
        gone += it == retired_pools_.end() ? std::to_string(rec.pool_id) : it->second;
        gone += " was removed from the configuration";
    } else {
        for (const auto& k : rec.worker_list)
            for (const auto& part : parse_parts(k.parts))
                if (gone.empty() && !machine_index_.contains(part.machine))
                    gone = "machine " + machine_names_[part.machine] + " was removed from the configuration";
        if (gone.empty()) return {};
    }
    end_open_attempt(rec, t, "failed");
    store::Batch b;
    const bool winding_down = rec.state == "stopping" && (rec.stop_cause == "owner" || rec.stop_cause == "limit");
    const auto failed = std::count_if(rec.attempt_list.begin(), rec.attempt_list.end(),
                                      [](const auto& a) { return a.outcome == "failed"; });
    if (pool_gone || winding_down || failed >= cfg_.max_failures) {
        // It can never run again (or was stopping at its owner's wish): it ends, counted up to
        // the last count before the restart (the store's counted_to), nothing after.
        rec.state = winding_down ? "stopped" : "failed";
        if (winding_down && !rec.attempt_list.empty() && rec.attempt_list.back().ended_s == t)
            rec.attempt_list.back().outcome = "stopped";
        rec.ended_s = t;
        for (auto& k : rec.worker_list) {
            // An open wait (a pending run) was counted up to where it opened: up to t now.
            if (open_waits_stored_ && k.phase == static_cast<int>(gp::Phase::Waiting) && k.counted_s >= 0 &&
                k.decided_s >= k.counted_s) {
                const Seconds from = std::max(rec.submitted_s, open_wait_start(k));
                const gp::WorkerStatus ws{gp::Phase::Waiting, static_cast<gp::Cause>(k.cause), 0, false};
                for (Seconds h = gp::hour_start(from); h < t; h += kHour) {
                    const Seconds secs = std::min(t, h + kHour) - std::max(from, h);
                    if (secs > 0)
                        b.goodput.push_back(goodput_row({static_cast<int>(rec.id), -1, h, gp::categorize(ws, false),
                                                         false, GpuSeconds{rec.gpus_per_worker} * secs}));
                }
            }
            k.phase = static_cast<int>(gp::Phase::Ended);
            k.parts.clear();
        }
        log(LogLevel::Warn, "run.reconciled", {{"run", rec.name}, {"state", rec.state}, {"reason", gone}});
    } else {
        // Requeued as after a failure of its attempt (its GPUs on the removed machine are gone):
        // its workers wait to be placed again, counted as failure (not held) meanwhile.
        rec.state = "pending";
        rec.reason = "requeued: " + gone;
        for (auto& k : rec.worker_list) {
            // Counted up to the store's counted_to in its state then (it held GPUs): it goes on
            // from there, not from its stored count as an open wait would.
            if (k.phase != static_cast<int>(gp::Phase::Waiting) && k.counted_s < t) k.counted_s = -1;
            k.phase = static_cast<int>(gp::Phase::Waiting);
            k.cause = static_cast<int>(gp::Cause::Failure);
            k.parts.clear();
            k.level = -1;
        }
        log(LogLevel::Warn, "run.reconciled", {{"run", rec.name}, {"state", "pending"}, {"reason", gone}});
    }
    rec.stop_cause.clear();
    rec.phase_since_s = t;
    rec.lease_start_s = -1;
    rec.lease_end_s = -1;
    b.runs.push_back(rec);
    return store_->apply(b);
}

Result<void> Service::reconcile_loaded(const Loaded& got) {
    std::vector<std::int64_t> ids;
    for (const auto& [id, where] : machine_index_) ids.push_back(id);
    {  // the executor starts with every machine up: so does the store
        store::Batch up;
        for (const auto& m : got.machines)
            if (!m.up) up.machine_up.push_back({m.id, true});
        // The local executor runs one machine with the GPUs found now (not the configuration's
        // list): recorded, so that what reads the store (trace export) sees the machine that
        // ran (0: the store's machines are the ones that run).
        const bool local = cfg_.local_gpus > 0 && !pools_.front()->machines.empty();
        up.meta.push_back({"local_machine_id", local ? pools_.front()->machines.front().id : 0});
        up.meta.push_back({"local_machine_gpus", local ? cfg_.local_gpus : 0});
        if (!read_only_)
            if (auto ok = store_->apply(up); !ok) return ok;
    }
    exec_->set_machines(ids, clock_.now());
    for (const auto& m : got.machines) {
        if (m.drained) drained_.insert(m.id);
        auto at = machine_index_.find(m.id);
        if (at == machine_index_.end()) continue;
        PoolState& ps = *pools_[at->second.first];
        if (agents_) {  // up once its agent has registered (again)
            agents_->add_machine(m.id, m.name, m.gpus, m.addr, clock_.now());
            ps.sched->set_machine_up(at->second.second, false);
        } else if (m.drained || (read_only_ && !m.up)) {
            ps.sched->set_machine_up(at->second.second, false);
        }
    }
    // Each run not ended: reconciled with the inventory (reconcile_run, stored), then its
    // scheduler job, count and executor state rebuilt (restore_run), in the store's order.
    for (store::Id id : got.order) {
        RunMem& r = *runs_.at(id);
        if (!read_only_)  // (a snapshot shows the runs as the leader stored them)
            if (auto ok = reconcile_run(r.rec, std::max(r.rec.submitted_s, got.counted_to)); !ok) return ok;
        if (!r.ended())
            if (auto ok = restore_run(r, got.counted_to); !ok) return ok;
        if (!r.ended()) live_.emplace(r.rec.id, &r);
    }
    if (read_only_) resumed_ = store::Batch{};  // the leader writes them
    else if (auto ok = save_resumed_count(); !ok) return ok;
    // The rounds' fairness history (tenant LTGF windows, jobs' deserved service), replayed from
    // the runs and their attempts up to the stored clock; the first round goes on from there.
    {
        const Seconds to = last_event_s_;
        Seconds from = (to / got.opt.bucket_s - got.opt.window_buckets) * got.opt.bucket_s;
        std::vector<std::vector<RoundAdapter::PastRun>> past(pools_.size());
        Seconds first = to;
        for (const auto& [id, r] : runs_) {
            if (pools_[r->pool]->rec.id != r->rec.pool_id || (r->rec.ended_s >= 0 && r->rec.ended_s <= from))
                continue;
            auto ws = workspaces_.find(r->rec.workspace_id);
            if (ws == workspaces_.end()) continue;
            RoundAdapter::PastRun p;
            p.tenant = pools_[r->pool]->sched->tenant_index(ws->second.name);
            p.gpus = r->rec.workers * r->rec.gpus_per_worker;
            p.submit_s = r->rec.submitted_s;
            p.end_s = r->rec.ended_s;
            for (const store::AttemptRec& a : r->rec.attempt_list) p.held.push_back({a.started_s, a.ended_s});
            p.job = r->ended() ? -1 : r->job;
            first = std::min(first, p.submit_s);
            past[r->pool].push_back(std::move(p));
        }
        from = std::max(from, first);
        for (std::size_t p = 0; p < pools_.size(); ++p) pools_[p]->sched->replay_history(past[p], from, to);
    }
    return {};
}

}  // namespace astraeus::service
