#include "astraeus/trace/helios_csv.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "astraeus/trace/civil_time.hpp"
#include "astraeus/trace/csv.hpp"
#include "astraeus/trace/tenants.hpp"

namespace astraeus {

Result<Workload> read_helios(const std::string& path, SkipCounts* skips) {
    auto table = CsvTable::read(path, {"job_id", "vc", "gpu_num", "submit_time", "duration"});
    if (!table) return std::unexpected(table.error());
    SkipCounts local_skips;
    SkipCounts& skip = skips ? *skips : local_skips;
    auto integer = [&](std::size_t r, const std::string& col,
                       std::int64_t min) -> Result<std::int64_t> {
        auto v = parse_int(table->field(r, col));
        if (!v || *v < min)
            return fail(table->where(r, col) + ": expected an integer >= " + std::to_string(min) +
                        ", got '" + std::string(table->field(r, col)) + "'");
        return *v;
    };

    std::vector<DatedJob> rows;
    std::set<std::int64_t> ids;
    for (std::size_t r = 0; r < table->rows(); ++r) {
        auto id = integer(r, "job_id", 0);
        if (!id) return std::unexpected(id.error());
        auto gpus = integer(r, "gpu_num", 0);
        if (!gpus) return std::unexpected(gpus.error());
        if (*gpus > kMaxGang)
            return fail(table->where(r, "gpu_num") + ": expected at most " +
                        std::to_string(kMaxGang) + " GPUs, got " + std::to_string(*gpus));
        const std::string vc(table->field(r, "vc"));
        if (vc.empty()) return fail(table->where(r, "vc") + ": empty virtual cluster name");
        const auto submit_text = table->field(r, "submit_time");
        const auto local = parse_civil(submit_text);
        if (!local)
            return fail(table->where(r, "submit_time") +
                        ": expected a time like 2020-06-09 18:41:01, got '" +
                        std::string(submit_text) + "'");
        const auto duration_text = table->field(r, "duration");
        std::int64_t duration = 0;
        if (!duration_text.empty()) {
            const auto d = parse_double(duration_text);
            if (!d || *d < 0 || *d > static_cast<double>(kMaxTraceTime))
                return fail(table->where(r, "duration") + ": expected seconds from 0 to " +
                            std::to_string(kMaxTraceTime) + ", got '" +
                            std::string(duration_text) + "'");
            duration = std::llround(*d);
        }
        if (!ids.insert(*id).second)
            return fail(table->where(r, "job_id") + ": duplicate job id " + std::to_string(*id));
        if (*gpus == 0) {
            skip.add("CPU job (gpu_num = 0)");
            continue;
        }
        if (duration_text.empty()) {
            skip.add("no duration");
            continue;
        }
        DatedJob row;
        row.job.id = *id;
        row.job.gpus = static_cast<int>(*gpus);
        row.job.duration_s = duration;
        row.submit_unix = local_to_utc(*local, TimeZone::AsiaShanghai);
        row.vc = vc;
        rows.push_back(std::move(row));
    }

    return workload_from_dated(std::move(rows));
}

}  // namespace astraeus
