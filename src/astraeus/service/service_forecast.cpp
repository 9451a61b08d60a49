// The service's side of the forecast (service/forecast.hpp): a pool's pending runs' positions
// and estimated starts, computed on the first read after a round (or a change that calls for
// one) from the pool's live adapter, the runs' time limits and their current leases.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

std::string Service::machine_reason_name(const PoolState& pool, int m) const {
    if (m < 0 || static_cast<std::size_t>(m) >= pool.machines.size()) return "machine " + std::to_string(m);
    const store::MachineRec& rec = pool.machines[static_cast<std::size_t>(m)];
    return rec.name + (drained_.contains(rec.id) ? " (drained)" : " (lost)");
}

std::string Service::foreign_reason(const PoolState& pool, int m) const {
    const std::string gpus = std::to_string(pool.sched->foreign_gpus(m)) + " GPUs of ";
    if (m < 0 || static_cast<std::size_t>(m) >= pool.machines.size())
        return gpus + "machine " + std::to_string(m) + " are held by jobs outside Astraeus";
    const store::MachineRec& rec = pool.machines[static_cast<std::size_t>(m)];
    if (auto it = foreign_.find(rec.id); it != foreign_.end()) return it->second;
    return gpus + rec.name + " are held by jobs outside Astraeus";
}

void Service::add_forecast_json(nlohmann::json& j, const RunMem& r) const {
    if (r.rec.state != "pending" || r.ended() || r.pool >= pools_.size()) return;
    const PoolState& pool = *pools_[r.pool];
    if (!pool.sched->is_pending(r.job)) return;  // stopped while a preemption winds down
    if (pool.forecast_stale || pool.dirty) {
        ForecastInput in;
        in.now = std::max(last_event_s_, pool.sched->clock_s());
        in.work_s = [&](int job) -> Seconds {
            auto it = pool.job_run.find(job);
            return it == pool.job_run.end() ? 0 : runs_.at(it->second)->rec.time_limit_s;
        };
        in.lease_end_s = [&](int job) -> Seconds {
            auto it = pool.job_run.find(job);
            return it == pool.job_run.end() ? -1 : runs_.at(it->second)->rec.lease_end_s;
        };
        pool.forecast.clear();
        for (const RunForecast& f : forecast_pool(*pool.sched, in)) pool.forecast[f.job] = f;
        pool.forecast_stale = pool.dirty;  // a round is due: computed again after it
    }
    auto it = pool.forecast.find(r.job);
    if (it == pool.forecast.end()) return;
    j["position"] = it->second.position;
    j["estimated_start"] =
        it->second.start_s < 0 ? nlohmann::json(nullptr) : nlohmann::json(goodput::format_rfc3339(it->second.start_s));
}

}  // namespace astraeus::service
