// Service::reconcile_run (service.hpp): at start, a run whose pool or machine is no longer in the
// configuration is requeued or ended with a reason (docs/operations.md "Changing the inventory").
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

}  // namespace astraeus::service
