#include "astraeus/trace/rfold_csv.hpp"

#include <cmath>
#include <set>

#include "astraeus/trace/civil_time.hpp"
#include "astraeus/trace/csv.hpp"

namespace astraeus {

Result<Workload> read_rfold(const std::string& path, SkipCounts* skips) {
    const std::string kId = "#job id", kArrival = "arrival time (sec)", kSize = "size",
                      kDuration = "duration (sec)";
    auto table = CsvTable::read(path, {kId, kArrival, kSize, kDuration});
    if (!table) return std::unexpected(table.error());
    SkipCounts local_skips;
    SkipCounts& skip = skips ? *skips : local_skips;
    auto seconds = [&](std::size_t r, const std::string& col) -> Result<std::int64_t> {
        const auto text = table->field(r, col);
        const auto v = parse_double(text);
        if (!v || *v < 0 || *v > static_cast<double>(kMaxTraceTime))
            return fail(table->where(r, col) + ": expected seconds from 0 to " +
                        std::to_string(kMaxTraceTime) + ", got '" + std::string(text) + "'");
        return std::llround(*v);
    };
    Workload w;
    std::set<std::int64_t> ids;
    for (std::size_t r = 0; r < table->rows(); ++r) {
        const auto id = parse_int(table->field(r, kId));
        if (!id || *id < 0)
            return fail(table->where(r, kId) + ": expected an integer >= 0, got '" +
                        std::string(table->field(r, kId)) + "'");
        const auto size = parse_int(table->field(r, kSize));
        if (!size || *size < 0 || *size > kMaxGang)
            return fail(table->where(r, kSize) + ": expected a GPU count from 0 to " +
                        std::to_string(kMaxGang) + ", got '" +
                        std::string(table->field(r, kSize)) + "'");
        auto arrival = seconds(r, kArrival);
        if (!arrival) return std::unexpected(arrival.error());
        auto duration = seconds(r, kDuration);
        if (!duration) return std::unexpected(duration.error());
        if (!ids.insert(*id).second)
            return fail(table->where(r, kId) + ": duplicate job id " + std::to_string(*id));
        if (*size == 0) {
            skip.add("size = 0");
            continue;
        }
        Job job;
        job.id = *id;
        job.gpus = static_cast<int>(*size);
        job.submit_s = *arrival;
        job.duration_s = *duration;
        w.jobs.push_back(job);
    }
    sort_by_submit(w);
    return w;
}

Result<Workload> read_rfold_philly(const std::string& path, SkipCounts* skips) {
    auto w = read_rfold(path, skips);
    if (!w) return w;
    const std::int64_t start_local = *parse_civil(kRfoldPhillyStartLocal);
    w->epoch_unix_s = local_to_utc(start_local, TimeZone::UsPacific);
    for (Job& j : w->jobs)
        j.submit_s = local_to_utc(start_local + j.submit_s, TimeZone::UsPacific) - w->epoch_unix_s;
    sort_by_submit(*w);
    return w;
}

}  // namespace astraeus
