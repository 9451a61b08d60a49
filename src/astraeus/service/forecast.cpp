#include "astraeus/service/forecast.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace astraeus::service {

std::vector<RunForecast> forecast_pool(const RoundAdapter& live, const ForecastInput& in) {
    return forecast_pool(live.fork(), in);
}

std::vector<RunForecast> forecast_pool(std::unique_ptr<RoundAdapter> sim, const ForecastInput& in) {
    // Copies: the fork's lists change as it runs forward.
    const std::vector<int> waiting = sim->pending_jobs();
    const std::vector<int> running = sim->running_jobs();
    std::vector<RunForecast> out;
    if (waiting.empty()) return out;
    std::unordered_map<int, std::size_t> slot;  // pending job -> index in out (wait order)
    for (int j : waiting) {
        slot.emplace(j, out.size());
        out.push_back({j, 0, -1});
    }
    int rounds = in.max_rounds;
    if (rounds < 0)
        rounds = static_cast<int>(std::min<std::size_t>(
            4096, 64 + 4 * (waiting.size() + running.size())));
    const Seconds horizon = in.now + in.horizon_s;

    // Events: (time, job) of running jobs' ends and lease ends.
    std::set<std::pair<Seconds, int>> ends, leases;
    std::unordered_map<int, Seconds> end_of, lease_of;
    auto remaining = [&](int j, Seconds t) {
        const Seconds done = sim->executed_s(j, t);
        const Seconds work = in.work_s ? in.work_s(j) : 0;
        if (work > 0) return std::max<Seconds>(0, work - done);
        return std::max(done, kUnknownRunS);
    };
    auto track = [&](int j, Seconds t, Seconds lease_end) {
        const Seconds e = t + remaining(j, t);
        ends.insert({e, j});
        end_of[j] = e;
        if (lease_end >= 0 && lease_end < kNoLeaseEnd && lease_end < e) {
            leases.insert({lease_end, j});
            lease_of[j] = lease_end;
        }
    };
    auto untrack = [&](int j) {
        if (auto it = end_of.find(j); it != end_of.end()) {
            ends.erase({it->second, j});
            end_of.erase(it);
        }
        if (auto it = lease_of.find(j); it != lease_of.end()) {
            leases.erase({it->second, j});
            lease_of.erase(it);
        }
    };
    for (int j : running) track(j, in.now, in.lease_end_s ? in.lease_end_s(j) : -1);
    for (int j : sim->winding_down_jobs()) sim->remove(j, in.now);

    std::size_t left = out.size();
    Seconds t = in.now;
    long long work = 0;  // job-rounds spent (see ForecastInput::work_budget)
    for (int r = 0; r < rounds; ++r) {
        work += static_cast<long long>(sim->pending_jobs().size() + sim->running_jobs().size());
        if (work > in.work_budget) break;
        for (const Decision& d : sim->round(t)) {
            untrack(d.job);
            if (d.kind != Decision::Kind::Start) continue;
            track(d.job, t, d.lease_end_s);
            if (auto it = slot.find(d.job); it != slot.end() && out[it->second].start_s < 0) {
                out[it->second].start_s = t;
                --left;
            }
        }
        if (left == 0) break;
        Seconds next = sim->next_wake_s();
        if (!ends.empty()) next = std::min(next, ends.begin()->first);
        if (!leases.empty()) next = std::min(next, leases.begin()->first);
        if (next == kNoWake || next > horizon) break;
        t = std::max(t, next);
        while (!ends.empty() && ends.begin()->first <= t) {
            const int j = ends.begin()->second;
            untrack(j);
            sim->remove(j, t);
        }
        while (!leases.empty() && leases.begin()->first <= t) {
            const int j = leases.begin()->second;
            untrack(j);
            sim->lease_end(j, t);
        }
    }
    // Position: by forecast start (unknown last), ties in the order they began to wait.
    std::stable_sort(out.begin(), out.end(), [](const RunForecast& a, const RunForecast& b) {
        const bool ka = a.start_s >= 0, kb = b.start_s >= 0;
        if (ka != kb) return ka;
        return ka && a.start_s < b.start_s;
    });
    for (std::size_t k = 0; k < out.size(); ++k) out[k].position = static_cast<int>(k) + 1;
    return out;
}

}  // namespace astraeus::service
