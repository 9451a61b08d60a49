// The service's side of the forecast (service/forecast.hpp): a pool's pending runs' positions
// and estimated starts, computed by a thread of their own from a fork of the pool's live
// adapter, the runs' time limits and their current leases, when a read finds the last one
// stale (a round or a change since). Only the fork is made under the service's lock: a flood
// of submissions or reads never makes the other callers wait for forecasts (issue 18).
#include <algorithm>
#include <chrono>
#include <unordered_map>

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

bool Service::forecast_current(const PoolState& pool) {
    return pool.forecast_published > 0 && !pool.forecast_stale && !pool.dirty;
}

void Service::add_forecast_json(nlohmann::json& j, const RunMem& r) const {
    if (r.rec.state != "pending" || r.ended() || r.pool >= pools_.size()) return;
    const PoolState& pool = *pools_[r.pool];
    if (!pool.sched->is_pending(r.job)) return;  // stopped while a preemption winds down
    if (!forecast_current(pool) && !pool.forecast_wanted) {
        pool.forecast_wanted = true;
        if (!forecaster_.joinable()) forecaster_ = std::thread([this] { forecast_loop(); });
        forecast_cv_.notify_all();
    }
    auto it = pool.forecast.find(r.job);
    if (it == pool.forecast.end()) return;
    j["position"] = it->second.position;
    j["estimated_start"] =
        it->second.start_s < 0 ? nlohmann::json(nullptr) : nlohmann::json(goodput::format_rfc3339(it->second.start_s));
}

void Service::await_forecasts() {
    std::unique_lock lk(mu_);
    for (std::size_t pi = 0; pi < pools_.size(); ++pi)
        if (pools_[pi]->sched->pending_total() > 0) await_forecast(lk, pi);
}

void Service::await_forecast(std::unique_lock<std::mutex>& lk, std::size_t pi) const {
    const PoolState& pool = *pools_[pi];
    if (forecast_current(pool)) return;
    const std::uint64_t after = pool.forecast_begun;  // one begun later sees the state of now
    pool.forecast_wanted = true;
    if (!forecaster_.joinable()) forecaster_ = std::thread([this] { forecast_loop(); });
    forecast_cv_.notify_all();
    forecast_cv_.wait_for(lk, std::chrono::seconds(kForecastWaitS), [&] {
        return forecaster_stop_ || forecast_current(pool) || pool.forecast_published > after;
    });
}

void Service::forecast_loop() const {
    using steady = std::chrono::steady_clock;
    std::unique_lock lk(mu_);
    while (!forecaster_stop_) {
        PoolState* pool = nullptr;
        auto next = steady::time_point::max();
        for (const auto& p : pools_) {
            if (!p->forecast_wanted) continue;
            if (forecast_current(*p)) {
                p->forecast_wanted = false;
            } else if (p->forecast_not_before <= steady::now()) {
                pool = p.get();
                break;
            } else {
                next = std::min(next, p->forecast_not_before);
            }
        }
        if (pool == nullptr) {
            if (next == steady::time_point::max()) forecast_cv_.wait(lk);
            else forecast_cv_.wait_until(lk, next);
            continue;
        }
        // Under mu_: the fork and the inputs (O(jobs + machines)).
        pool->forecast_wanted = false;
        const std::uint64_t number = ++pool->forecast_begun;
        const std::uint64_t rounds = pool->rounds;
        const bool dirty = pool->dirty;
        std::unordered_map<int, Seconds> work, lease_end;
        for (const std::vector<int>* jobs : {&pool->sched->running_jobs(), &pool->sched->pending_jobs()})
            for (int job : *jobs)
                if (const RunMem* r = pool->run_of_job(job); r != nullptr) {
                    const store::RunRec& rec = r->rec;
                    work[job] = rec.time_limit_s;
                    lease_end[job] = rec.lease_end_s;
                }
        ForecastInput in;
        in.now = std::max(last_event_s_, pool->sched->clock_s());
        in.work_s = [&work](int job) -> Seconds {
            auto it = work.find(job);
            return it == work.end() ? 0 : it->second;
        };
        in.lease_end_s = [&lease_end](int job) -> Seconds {
            auto it = lease_end.find(job);
            return it == lease_end.end() ? -1 : it->second;
        };
        std::unique_ptr<RoundAdapter> sim = pool->sched->fork();
        // Off mu_: the rounds run forward.
        lk.unlock();
        const auto began = steady::now();
        std::vector<RunForecast> result = forecast_pool(std::move(sim), in);
        const auto took = steady::now() - began;
        lk.lock();
        // Pools are made once, at load, and live as long as the service: `pool` is still valid.
        pool->forecast.clear();
        for (const RunForecast& f : result) pool->forecast[f.job] = f;
        pool->forecast_published = number;
        pool->forecast_stale = dirty || pool->rounds != rounds;  // a round due or made since: again
        // The next one waits as long as this one took (at most half of a core), and with a
        // backlog over kSyncRoundBacklog, as the rounds, up to kBacklogRestFactor times as long (a
        // tenth of a core: its rounds are O(pending) each) but no more than 2 s longer, so that a reader
        // waiting for a forecast (kForecastWaitS) still gets one.
        const auto rest = pool->sched->pending_total() > kSyncRoundBacklog
                              ? std::min<steady::duration>(kBacklogRestFactor * took, took + std::chrono::seconds(2))
                              : took;
        pool->forecast_not_before = steady::now() + rest;
        forecast_cv_.notify_all();
    }
}

}  // namespace astraeus::service
