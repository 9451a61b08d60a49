#include "astraeus/goodput_io/ledger_json.hpp"

#include "astraeus/goodput_io/rfc3339.hpp"

namespace astraeus::goodput {

nlohmann::json ledger_json(const Counts& c) {
    nlohmann::json j;
    nlohmann::json all = nlohmann::json::object(), held = nlohmann::json::object();
    for (Category k : kAllCategories) {
        const std::string key(to_string(k));
        all[key] = gpu_hours(c.total_of(k));
        if (k != Category::Waiting) held[key] = gpu_hours(c.held_of(k));
    }
    const Figures f = figures(c);
    j["gpu_hours"] = std::move(all);
    j["held_gpu_hours"] = std::move(held);
    j["allocated_gpu_hours"] = gpu_hours(f.allocated);
    j["productive_gpu_hours"] = gpu_hours(f.productive);
    j["lost_gpu_hours"] = gpu_hours(f.lost);
    j["waiting_gpu_hours"] = gpu_hours(f.waiting);
    if (f.goodput) j["goodput"] = *f.goodput;
    if (c.unmeasured != 0) j["unmeasured_gpu_hours"] = gpu_hours(c.unmeasured);
    return j;
}

nlohmann::json rows_json(std::string_view by, Seconds start_s, Seconds end_s,
                         const std::vector<NamedCounts>& rows) {
    nlohmann::json out;
    out["by"] = std::string(by);
    out["start"] = format_rfc3339(start_s);
    out["end"] = format_rfc3339(end_s);
    nlohmann::json arr = nlohmann::json::array();
    Counts total;
    for (const auto& r : rows) {
        nlohmann::json row;
        row[std::string(by)] = r.name;
        row.update(ledger_json(r.counts));
        arr.push_back(std::move(row));
        total += r.counts;
    }
    out["rows"] = std::move(arr);
    out["total"] = ledger_json(total);
    return out;
}

}  // namespace astraeus::goodput
