// What a restart rebuilds of a run not ended (Service::load): its scheduler job and past, its
// goodput count, its executor state (restore_run); and the count's place across a restart
// (spec/goodput.md "The count": every second between a run's submission and its end counted
// exactly once, in the state it was really in).
//
// Every store write of a run carries, per worker, where its count stands: the hourly rows hold
// its time up to `counted_s`, `pending` holds the Deltas of [counted_s, decided_s) that its next
// minute count would emit, and from decided_s on it was in the stored state (the counter decides
// time only at the worker's own events, and every state change is written). After a restart
// (kill -9 included), a worker whose record is at least as new as the store's last count goes on
// from decided_s and its pending Deltas are added once; otherwise a later count emitted them and
// it goes on from that count (counted_to_s). Before this, a restart re-counted the time since the
// last minute in the worker's final state: an attempt that ran and failed inside that minute was
// counted as waiting (slurm_serve_restart: 160 held GPU-s missing).
#include <algorithm>

#include "astraeus/goodput_io/pending_count.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

namespace gp = goodput;
using namespace detail;

Seconds detail::open_wait_start(const store::WorkerRec& k) {
    // Nothing pending at the write: its wait was open from its count (GoodputCounter::reschedule);
    // else the next boundary's count emitted the pending time and opened its wait there.
    if (k.pending.empty() && k.decided_s == k.counted_s) return k.counted_s;
    return gp::minute_start(k.counted_s) + gp::kMinute;
}

Result<void> Service::restore_run(RunMem& r, Seconds counted_to) {
    PoolState& pool = *pools_[r.pool];
    const store::RunRec& rec = r.rec;
    auto ws = workspaces_.find(rec.workspace_id);
    const int u = ws == workspaces_.end() ? -1 : pool.sched->tenant_index(ws->second.name);
    if (u < 0) return fail("run " + rec.name + ": unknown workspace");
    const Seconds duration = rec.sim_duration_s > 0 ? rec.sim_duration_s : rec.time_limit_s;
    auto j = pool.sched->submit(u, rec.workers * rec.gpus_per_worker, rec.submitted_s, duration,
                                rec.gpus_per_worker);
    if (!j) return std::unexpected(j.error());
    r.job = *j;
    pool.job_run[*j] = rec.id;
    pool.set_job_mem(*j, &r);
    // Its past as the rounds knew it: work done and preemptions (a run that ran is not brand new).
    int preemptions = 0;
    for (const store::AttemptRec& a : rec.attempt_list) preemptions += a.outcome == "preempted" ? 1 : 0;
    pool.sched->restore_job(r.job, rec.executed_s, preemptions);
    // The count: each worker goes on in its stored state from where its stored count stands
    // (count_resume_point), the pending time before that added to the ledger once.
    const std::vector<gp::HeldPart> dummy{{static_cast<int>(pool.machines.front().id), 1}};
    Placement held;
    for (const store::WorkerRec& k : rec.worker_list) {
        auto from = count_resume_point(rec, k, counted_to);
        if (!from) return fail("run " + rec.name + ": cannot restore its count: " + from.error().message);
        const Seconds t0 = *from;
        const int w = counter_->add_worker(t0, static_cast<int>(rec.id), rec.gpus_per_worker);
        r.w.push_back(w);
        auto parts = parse_parts(k.parts.substr(0, k.parts.find('@')));
        r.parts.push_back(parts);
        r.gpu_index.push_back(parse_gpu_index(k.parts));
        if (k.attempt > 0 && !parts.empty()) {  // where this worker's attempt ran (its log's shipper)
            auto& at = r.attempt_parts[k.attempt];
            at.resize(rec.worker_list.size());
            at[r.parts.size() - 1] = parts;
        }
        const auto phase = static_cast<gp::Phase>(k.phase);
        const auto cause = static_cast<gp::Cause>(k.cause);
        const auto& use = parts.empty() ? dummy : parts;
        Result<void> ok;
        const int before = k.attempt - (phase == gp::Phase::Waiting && k.attempt == 0 ? 0 : 1);
        for (int a = 0; a < before && ok; ++a) {
            ok = counter_->place(t0, w, dummy);
            if (ok) ok = counter_->fail(t0, w);
            if (ok) ok = counter_->release(t0, w);
        }
        if (ok && k.attempt > 0) {
            switch (phase) {
                case gp::Phase::Waiting:
                    ok = counter_->place(t0, w, dummy);
                    if (ok && cause == gp::Cause::Failure) ok = counter_->fail(t0, w);
                    else if (ok) ok = counter_->stop(t0, w, cause);
                    if (ok) ok = counter_->release(t0, w);
                    break;
                case gp::Phase::Placed: ok = counter_->place(t0, w, use); break;
                case gp::Phase::Running:
                    ok = counter_->place(t0, w, use);
                    if (ok) ok = counter_->start(t0, w);
                    if (ok && k.level >= 0) ok = counter_->utilization_level(t0, w, k.level);
                    break;
                case gp::Phase::Stopping:
                    ok = counter_->place(t0, w, use);
                    if (ok) ok = counter_->stop(t0, w, cause);
                    break;
                case gp::Phase::Failed:
                    ok = counter_->place(t0, w, use);
                    if (ok) ok = counter_->fail(t0, w);
                    break;
                case gp::Phase::Ended: break;
            }
        }
        if (!ok) return fail("run " + rec.name + ": cannot restore its count: " + ok.error().message);
        if (k.level >= 0) r.level = k.level;
        if (r.holding())
            for (const auto& p : parts) {
                auto it = machine_index_.find(p.machine);
                if (it != machine_index_.end()) held.parts.push_back({it->second.second, p.gpus});
            }
    }
    if (r.holding()) {
        // The lease clock: its stored start, else its attempt's start (not the phase's: the
        // phase moves at start-up's end); its stored end, else re-derived from the start.
        Seconds lease_start = rec.lease_start_s;
        if (lease_start < 0 && !rec.attempt_list.empty() && rec.attempt_list.back().ended_s < 0)
            lease_start = rec.attempt_list.back().started_s;
        if (lease_start < 0) lease_start = rec.phase_since_s;
        pool.sched->restore_running(r.job, held, lease_start, rec.executed_s);
        if (rec.lease_end_s < 0 && (rec.state == "starting" || rec.state == "running") &&
            rec.stop_cause.empty()) {
            const Seconds lease = pool.sched->lease_s(r.job);
            if (lease < kNoLeaseEnd) {
                r.rec.lease_start_s = lease_start;
                r.rec.lease_end_s = lease_start + lease;
            }
        }
        const ExecRun er = exec_run(r);
        ExecPhase ph = ExecPhase::Starting;
        if (rec.state == "running") ph = ExecPhase::Running;
        if (rec.state == "stopping") ph = rec.stop_cause == "failure" ? ExecPhase::Failed : ExecPhase::Stopping;
        exec_->restore(er, ph, rec.phase_since_s, rec.executed_s);
    } else if (rec.state == "stopping") {  // a preemption winding down: the policy's GPUs are free
        exec_->restore(exec_run(r), ExecPhase::Stopping, rec.phase_since_s, rec.executed_s);
    }
    // A run stopping for good or after a failure (owner, limit, failure) is leaving: the rounds
    // after the restart must not preempt, renew or place it (RoundAdapter::wind_down).
    if (rec.state == "stopping" && rec.stop_cause != "preemption")
        pool.sched->wind_down(r.job, std::max(counted_to, rec.phase_since_s));
    return {};
}

void Service::write_workers(RunMem& r) {
    r.rec.worker_list.clear();
    for (std::size_t k = 0; k < r.w.size(); ++k) {
        const int w = r.w[k];
        const gp::WorkerStatus& s = counter_->status(w);
        const bool parts = gp::holds_gpus(s) || (r.holding() && exec_->holds_from_start() && !r.parts[k].empty());
        store::WorkerRec rec;
        rec.index = static_cast<int>(k);
        rec.phase = static_cast<int>(s.phase);
        rec.cause = static_cast<int>(s.cause);
        rec.attempt = s.attempt;
        if (parts) rec.parts = parts_text(r.parts[k]) + gpu_index_text(r.gpu_index, k);
        rec.level = s.phase == gp::Phase::Running ? r.level : -1;
        gp::PendingCount pending;
        counter_->pending(w, pending);
        rec.counted_s = counter_->last_count(w);
        rec.decided_s = counter_->decided_to(w);
        rec.pending = pending.text();
        r.rec.worker_list.push_back(std::move(rec));
    }
}

Result<Seconds> Service::count_resume_point(const store::RunRec& rec, const store::WorkerRec& k,
                                            Seconds counted_to) {
    if (k.counted_s < 0 || k.decided_s < k.counted_s) return std::max(rec.submitted_s, counted_to);
    if (k.counted_s < counted_to) {
        if (open_waits_stored_ && k.phase == static_cast<int>(gp::Phase::Waiting))
            return std::max(rec.submitted_s, open_wait_start(k));
        return std::max(rec.submitted_s, counted_to);
    }
    auto rows = gp::parse_pending_count(k.pending, static_cast<int>(rec.id));
    if (!rows) return std::unexpected(rows.error());
    for (const gp::Delta& d : *rows) resumed_.goodput.push_back(goodput_row(d));
    return std::max(rec.submitted_s, k.decided_s);
}

Result<void> Service::save_resumed_count() {
    if (open_waits_stored_ && resumed_.goodput.empty()) return {};
    if (!open_waits_stored_) {
        resumed_.meta.push_back({"open_waits", 1});
        open_waits_stored_ = true;
    }
    // The live runs' workers now stand where the restored counter does (their pending time is
    // in the rows): a second restart must not add it again.
    for (const auto& [id, live] : live_) {
        RunMem& r = *live;
        write_workers(r);
        resumed_.runs.push_back(r.rec);
    }
    auto ok = store_->apply(resumed_);
    if (ok)
        log(LogLevel::Info, "goodput.resumed",
            {{"rows", std::to_string(resumed_.goodput.size())}, {"runs", std::to_string(resumed_.runs.size())}});
    resumed_ = store::Batch{};
    return ok;
}

}  // namespace astraeus::service
