// Service::shutdown (service.hpp): a clean stop (SIGTERM/SIGINT) of a service whose executor's
// workers do not outlive it (the local executor): their attempts are ended as preemptions, not
// failures, and recorded before the process exits (docs/operations.md, "Storage"; docs/agents.md).
#include <algorithm>
#include <vector>

#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

namespace gp = goodput;
using namespace detail;

void Service::shutdown() {
    if (!exec_->runs_commands()) return;  // simulated workers: nothing to stop
    // 1. At the signal: the attempts of running runs end as preemptions; their workers wind
    //    down (stopping, counted preemption while they hold their GPUs), as at a lease end.
    std::vector<store::Id> stopped;
    {
        std::lock_guard lk(mu_);
        const Seconds t = std::max(clock_.now(), last_event_s_);
        begin(t);
        advance_count(t);
        for (auto& [id, rp] : runs_) {
            RunMem& r = *rp;
            if (r.ended()) continue;
            const bool live = r.rec.state == "starting" || r.rec.state == "running";
            const bool preempting = r.rec.state == "stopping" && r.rec.stop_cause == "preemption";
            if (!live && !preempting) continue;  // pending, or leaving (owner, limit, failure): as is
            if (r.rec.state == "running") r.rec.executed_s += t - r.rec.phase_since_s;
            if (live) {
                preempt_attempt(r, t);
                r.rec.state = "stopping";
                r.rec.stop_cause = "preemption";
                r.rec.phase_since_s = t;
                touch(r);
            }
            stopped.push_back(id);
        }
    }
    // 2. The wind-down itself (checkpoint signal, grace), without the lock: the executor's
    //    thread may still call the wake callback, which takes it. A kill -9 during the grace
    //    leaves the store as it was before the signal: the restart counts the attempt failed.
    if (!exec_->shutdown()) return;
    // 3. Their workers are gone: the runs wait again (counted preemption), stored before exit.
    std::lock_guard lk(mu_);
    const Seconds t = std::max(clock_.now(), last_event_s_);
    advance_count(t);
    for (store::Id id : stopped) {
        RunMem& r = *runs_.at(id);
        for (int w : r.w)
            if (counter_->status(w).phase != gp::Phase::Waiting) (void)counter_->release(t, w);
        r.rec.state = "pending";
        r.rec.stop_cause.clear();
        r.rec.reason = "requeued: the service stopped (its workers got the checkpoint signal)";
        r.rec.phase_since_s = t;
        r.rec.lease_start_s = -1;
        r.rec.lease_end_s = -1;
        r.launch_pending = false;
        r.prev_alive = false;
        touch(r);
    }
    commit();
    log(LogLevel::Info, "shutdown.preempted", {{"runs", std::to_string(stopped.size())}});
}

}  // namespace astraeus::service
