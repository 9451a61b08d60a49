#include "astraeus/trace/slice.hpp"

#include <algorithm>
#include <map>

#include "astraeus/trace/civil_time.hpp"

namespace astraeus {

Workload slice_window(const Workload& w, Seconds from_s, Seconds to_s) {
    Workload out;
    out.tenants = w.tenants;
    out.share_order = w.share_order;
    // A trace without calendar dates (epoch 0) stays without them: moving its epoch would give
    // it a date in 1970 that stats, slice and the native header then show as real.
    out.epoch_unix_s = w.epoch_unix_s == 0 ? 0 : w.epoch_unix_s + from_s;
    for (const Job& j : w.jobs) {
        if (j.submit_s < from_s || j.submit_s >= to_s) continue;
        Job k = j;
        k.submit_s -= from_s;
        out.jobs.push_back(std::move(k));
    }
    return out;
}

Result<DayWindow> busiest_days(const Workload& w, int n_days) {
    if (n_days < 1)
        return fail("busiest days: the number of days must be >= 1, got " + std::to_string(n_days));
    if (w.jobs.empty()) return fail("busiest days: the workload has no jobs");
    std::map<std::int64_t, GpuSeconds> demand;  // UTC day number -> GPU-seconds submitted
    for (const Job& j : w.jobs)
        demand[floor_div(w.epoch_unix_s + j.submit_s, kDay)] +=
            static_cast<GpuSeconds>(j.gpus) * j.duration_s;
    const std::int64_t first = demand.begin()->first, last = demand.rbegin()->first;
    const std::int64_t last_start = std::max(first, last - n_days + 1);
    auto sum = [&](std::int64_t from_day) {
        GpuSeconds s = 0;
        for (auto it = demand.lower_bound(from_day);
             it != demand.end() && it->first < from_day + n_days; ++it)
            s += it->second;
        return s;
    };
    DayWindow best;
    best.days = n_days;
    std::int64_t best_day = first;
    best.demand_gpu_seconds = sum(first);
    GpuSeconds current = best.demand_gpu_seconds;
    for (std::int64_t d = first + 1; d <= last_start; ++d) {  // slide by one day
        auto out = demand.find(d - 1);
        auto in = demand.find(d + n_days - 1);
        if (out != demand.end()) current -= out->second;
        if (in != demand.end()) current += in->second;
        if (current > best.demand_gpu_seconds) {
            best.demand_gpu_seconds = current;
            best_day = d;
        }
    }
    best.first_day_unix_s = best_day * kDay;
    best.from_s = best.first_day_unix_s - w.epoch_unix_s;
    best.to_s = best.from_s + static_cast<Seconds>(n_days) * kDay;
    return best;
}

Workload cap_duration(Workload w, Seconds max_s) {
    for (Job& j : w.jobs) j.duration_s = std::min(j.duration_s, max_s);
    return w;
}

}  // namespace astraeus
