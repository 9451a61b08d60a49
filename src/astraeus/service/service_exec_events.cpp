// What the executors report (service/executor.hpp ExecEvent), applied to the runs, the count
// and the rounds: the dispatcher (on_exec, one event under mu_ at its time), an attempt's life
// (Started, Finished, TimeLimit, StopDone, Failed, Released), machines lost and back, GPUs held
// outside the service (Foreign), a worker's own events, and what a resource manager's
// administrator did (Cancelled, Held, Unheld, Preempted; Withdrawn: a placement it did not start).
#include <algorithm>
#include <cstring>

#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

namespace gp = goodput;

namespace {

/// How a worker ended, in words: "worker 0 exited with code 7", "worker 1 was killed by signal 9
/// (SIGKILL)", "worker 2 ended without an exit status" (its machine's agent lost it).
std::string worker_exit_text(int worker, int exit_code, int signal) {
    const std::string who = "worker " + std::to_string(worker);
    if (signal > 0) {
        const char* abbrev = ::sigabbrev_np(signal);
        return who + " was killed by signal " + std::to_string(signal) +
               (abbrev ? std::string(" (SIG") + abbrev + ")" : std::string());
    }
    if (exit_code < 0) return who + " ended without an exit status";
    return who + " exited with code " + std::to_string(exit_code);
}

}  // namespace
using namespace detail;

void Service::on_exec(const ExecEvent& e) {
    if (e.kind == ExecEvent::Kind::MachineLost || e.kind == ExecEvent::Kind::MachineBack)
        return machine_event(e);
    if (e.kind == ExecEvent::Kind::Foreign) return foreign_event(e);
    auto it = runs_.find(e.run);
    if (it == runs_.end() || it->second->ended()) return;
    RunMem& r = *it->second;
    PoolState& pool = *pools_[r.pool];
    const Seconds t = e.t;
    touch(r);
    using K = ExecEvent::Kind;
    if (e.attempt > 0 && e.attempt != r.rec.attempts) {  // an event of an earlier attempt
        if (r.prev_alive && (e.kind == K::StopDone || e.kind == K::Released || e.kind == K::Finished)) {
            r.prev_alive = false;  // its processes are gone: the new attempt may start
            try_launch(r, t);
            // ...and so may other runs' launches waiting for these GPUs.
            for (RunMem* o : live_runs())  // (a launch waits in state starting: a live run)
                if (o->launch_pending) try_launch(*o, t);
        }
        return;
    }
    // An executor that holds GPUs from Started to the end event: the attempt ends there (the
    // segment's end as its resource manager recorded it), not at the decision that ended it.
    if (exec_->holds_from_start() && (e.kind == K::StopDone || e.kind == K::Released || e.kind == K::Finished) &&
        !r.rec.attempt_list.empty() && r.rec.attempt_list.back().ended_s >= 0 &&
        r.rec.attempt_list.back().number == r.rec.attempts)
        r.rec.attempt_list.back().ended_s = std::max(t, r.rec.attempt_list.back().started_s);
    switch (e.kind) {
        case K::WorkerStarted:
        case K::WorkerExited:
        case K::Progress:
        case K::Utilization: return on_worker_event(r, e);
        case K::Started:
            if (r.rec.state != "starting") break;
            for (std::size_t k = 0; k < r.w.size(); ++k) {
                const int w = r.w[k];
                if (exec_->holds_from_start() && counter_->status(w).phase == gp::Phase::Waiting)
                    (void)counter_->place(t, w, r.parts[k]);  // held from the allocation on
                (void)counter_->start(t, w);
                if (e.level >= 0) (void)counter_->utilization_level(t, w, e.level);
            }
            r.level = e.level;
            r.rec.state = "running";
            r.rec.phase_since_s = t;
            if (r.rec.started_s < 0) r.rec.started_s = t;
            if (exec_->holds_from_start() && !r.rec.attempt_list.empty())
                r.rec.attempt_list.back().started_s = t;
            break;
        case K::Finished:
            r.rec.executed_s += t - r.rec.phase_since_s;
            end_run(r, t, "succeeded", "succeeded");
            break;
        case K::TimeLimit:
            r.rec.executed_s += t - r.rec.phase_since_s;
            for (int w : r.w) (void)counter_->stop(t, w, gp::Cause::Owner);
            r.rec.state = "stopping";
            r.rec.stop_cause = "limit";
            r.rec.phase_since_s = t;
            r.rec.lease_end_s = -1;
            pool.sched->wind_down(r.job, t);
            break;
        case K::StopDone:
            if (r.rec.stop_cause == "preemption") {
                if (r.requeue_at_stop_done) pool.sched->requeue(r.job, t);  // a drain's stop
                r.requeue_at_stop_done = false;
                for (int w : r.w) (void)counter_->release(t, w);
                r.rec.state = "pending";
                r.rec.stop_cause.clear();
                r.rec.phase_since_s = t;
                pool.dirty = true;
            } else {
                end_run(r, t, "stopped", "stopped");
            }
            break;
        case K::Failed:
            if (r.rec.state == "running") r.rec.executed_s += t - r.rec.phase_since_s;
            for (int w : r.w) (void)counter_->fail(t, w);
            end_open_attempt(r.rec, t, "failed");
            r.rec.state = "stopping";
            r.rec.stop_cause = "failure";
            r.rec.phase_since_s = t;
            r.rec.lease_end_s = -1;
            pool.sched->wind_down(r.job, t);
            // Why, when the executor knows (a Slurm submission refused, a lost machine) or a
            // worker's exit says (its code or signal): the run's reason until it is placed
            // again, and once it has failed for good.
            {
                const std::string why =
                    !e.detail.empty() ? e.detail : (r.exit_attempt == r.rec.attempts ? r.exit_detail : "");
                if (!why.empty()) r.rec.reason = "attempt " + std::to_string(r.rec.attempts) + " failed: " + why;
                log(LogLevel::Warn, "run.failed",
                    {{"run", r.rec.name}, {"attempt", std::to_string(r.rec.attempts)}, {"detail", why}});
            }
            break;
        case K::Released:
            if (failures(r) >= cfg_.max_failures) {
                const std::string why = r.rec.reason.starts_with("attempt ") ? r.rec.reason : "";
                end_run(r, t, "failed", "failed");
                if (!why.empty()) r.rec.reason = why;
            } else {
                if (r.rec.reason.starts_with("attempt ")) r.rec.reason = "requeued: " + r.rec.reason;
                for (int w : r.w) (void)counter_->release(t, w);
                pool.sched->requeue(r.job, t);
                r.rec.state = "pending";
                r.rec.stop_cause.clear();
                r.rec.phase_since_s = t;
                pool.dirty = true;
            }
            break;
        case K::Cancelled:
        case K::Held:
        case K::Preempted:
        case K::Withdrawn:
        case K::Unheld: resource_manager_event(r, e); break;
        default: break;
    }
    // GPUs whose processes are gone may let waiting launches go.
    if (e.kind == K::StopDone || e.kind == K::Released || e.kind == K::Finished || e.kind == K::Cancelled ||
        e.kind == K::Preempted)
        for (RunMem* o : live_runs())  // (a launch waits in state starting: a live run)
            if (o->launch_pending) try_launch(*o, t);
}

void Service::resource_manager_event(RunMem& r, const ExecEvent& e) {
    PoolState& pool = *pools_[r.pool];
    const Seconds t = e.t;
    using K = ExecEvent::Kind;
    switch (e.kind) {
        case K::Cancelled:  // by the resource manager's administrator: never retried
            if (r.rec.state == "running") r.rec.executed_s += t - r.rec.phase_since_s;
            end_run(r, t, "cancelled", "cancelled");
            r.rec.reason = e.detail;
            log(LogLevel::Warn, "run.cancelled", {{"run", r.rec.name}, {"detail", e.detail}});
            break;
        case K::Held:  // waits, holding nothing, until Unheld
            if (r.rec.state != "starting" && r.rec.state != "pending") break;
            if (r.rec.state == "starting") {
                preempt_attempt(r, t);
                r.launch_pending = false;
                pool.sched->requeue(r.job, t);
            }
            pool.sched->wind_down(r.job, t);
            r.held_outside = true;
            r.rec.state = "pending";
            r.rec.reason = e.detail;
            r.rec.phase_since_s = t;
            r.rec.lease_end_s = -1;
            pool.dirty = true;
            log(LogLevel::Warn, "run.held", {{"run", r.rec.name}, {"detail", e.detail}});
            break;
        case K::Preempted:  // by the resource manager's administrator: not a failure, placed again
            if (r.rec.state != "starting" && r.rec.state != "running") break;
            if (r.rec.state == "running") r.rec.executed_s += t - r.rec.phase_since_s;
            preempt_attempt(r, t);
            for (int w : r.w)
                if (counter_->status(w).phase != gp::Phase::Waiting) (void)counter_->release(t, w);
            r.launch_pending = false;
            pool.sched->requeue(r.job, t);
            r.rec.state = "pending";
            r.rec.stop_cause.clear();
            r.rec.reason = e.detail;  // "requeued: ...": kept until it is placed again
            r.rec.phase_since_s = t;
            r.rec.lease_end_s = -1;
            pool.dirty = true;
            log(LogLevel::Warn, "run.preempted_outside", {{"run", r.rec.name}, {"detail", e.detail}});
            break;
        case K::Withdrawn:  // not started in time: waits (uncharged, no failure), placed again
            if (r.rec.state != "starting") break;
            end_open_attempt(r.rec, t, "not started");
            r.launch_pending = false;
            pool.sched->requeue(r.job, t);
            r.rec.state = "pending";
            r.rec.reason = "requeued: " + e.detail;  // kept until it is placed again
            r.rec.phase_since_s = t;
            r.rec.lease_end_s = -1;
            pool.dirty = true;
            log(LogLevel::Warn, "run.withdrawn", {{"run", r.rec.name}, {"attempt", std::to_string(r.rec.attempts)},
                                                  {"detail", e.detail}});
            break;
        case K::Unheld:
            if (!r.held_outside) break;
            r.held_outside = false;
            pool.sched->requeue(r.job, t);
            r.rec.reason.clear();
            pool.dirty = true;
            log(LogLevel::Info, "run.released", {{"run", r.rec.name}});
            break;
        default: break;
    }
}

void Service::machine_event(const ExecEvent& e) {
    auto mi = machine_index_.find(e.machine);
    if (mi == machine_index_.end()) return;
    const bool up = e.kind == ExecEvent::Kind::MachineBack && !drained_.contains(e.machine);
    PoolState& pool = *pools_[mi->second.first];
    pool.sched->set_machine_up(mi->second.second, up);
    pool.dirty = true;
    batch_.machine_up.push_back({e.machine, e.kind == ExecEvent::Kind::MachineBack});
    log(up ? LogLevel::Info : LogLevel::Warn, up ? "machine.back" : "machine.lost",
        {{"machine", machine_names_[e.machine]}});
    if (up) return;
    // Every run holding GPUs on the lost machine fails (its gang with it) and holds its GPUs
    // until the executor releases them.
    for (auto& [id, r] : runs_) {
        if (r->ended() || !(r->rec.state == "starting" || r->rec.state == "running" ||
                            (r->rec.state == "stopping" && r->rec.stop_cause != "failure" &&
                             r->rec.stop_cause != "preemption")))
            continue;
        bool on = false;
        for (const auto& parts : r->parts)
            for (const auto& p : parts) on = on || p.machine == e.machine;
        if (!on) continue;
        if (r->rec.stop_cause == "owner" || r->rec.stop_cause == "limit") {
            end_run(*r, e.t, "stopped", "stopped");  // it was winding down at its owner's wish
            continue;
        }
        ExecEvent failed{ExecEvent::Kind::Failed, e.t, id, 0, 0};
        failed.detail = "machine " + machine_names_[e.machine] + " was lost";
        on_exec(failed);
        exec_->restore(exec_run(*r), ExecPhase::Failed, e.t, r->rec.executed_s);
    }
}

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
            // The first bad exit of a starting or running attempt is its failure's cause (the
            // others follow: the gang's other workers are stopped by us).
            if ((e.exit_code != 0 || e.signal > 0) && (r.rec.state == "starting" || r.rec.state == "running") &&
                r.exit_attempt != r.rec.attempts) {
                r.exit_attempt = r.rec.attempts;
                r.exit_detail = worker_exit_text(e.worker, e.exit_code, e.signal);
            }
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

void Service::foreign_event(const ExecEvent& e) {
    auto mi = machine_index_.find(e.machine);
    if (mi == machine_index_.end()) return;
    PoolState& pool = *pools_[mi->second.first];
    pool.sched->set_foreign(mi->second.second, e.gpus);
    pool.dirty = true;
    if (e.gpus > 0) foreign_[e.machine] = e.detail;
    else foreign_.erase(e.machine);
    log(LogLevel::Info, "machine.foreign",
        {{"machine", machine_names_[e.machine]}, {"gpus", std::to_string(e.gpus)}, {"detail", e.detail}});
}

}  // namespace astraeus::service
