#include "astraeus/trace/reference_csv.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "astraeus/trace/csv.hpp"

namespace astraeus {

Result<TenantTable> read_reference_tenants(const std::string& share_path,
                                           const std::string& names_path) {
    auto table = CsvTable::read(share_path, {"name", "share"});
    if (!table) return std::unexpected(table.error());
    std::vector<Tenant> declared;
    std::map<std::string, std::size_t> by_name;
    for (std::size_t r = 0; r < table->rows(); ++r) {
        std::string name(table->field(r, "name"));
        if (name.empty()) return fail(table->where(r, "name") + ": empty tenant name");
        auto w = parse_double(table->field(r, "share"));
        if (!w || *w < 0 || *w > kMaxWeight)
            return fail(table->where(r, "share") + ": expected a number from 0 to 1e15, got '" +
                        std::string(table->field(r, "share")) + "'");
        if (!by_name.emplace(name, declared.size()).second)
            return fail(table->where(r, "name") + ": tenant '" + name + "' declared twice");
        declared.push_back({name, *w});
    }
    if (declared.empty()) return fail(share_path + ": no tenants");

    TenantTable w;
    if (names_path.empty()) {
        w.tenants = declared;
        for (std::size_t i = 0; i < declared.size(); ++i) w.share_order.push_back(int(i));
        return w;
    }
    auto text = read_text_file(names_path);
    if (!text) return std::unexpected(text.error());
    std::map<std::string, int> order;
    const auto lines = split_lines(*text);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string name(lines[i]);
        while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
        if (name.empty()) continue;
        if (!by_name.contains(name))
            return fail(names_path + ":" + std::to_string(i + 1) + ": tenant '" + name +
                        "' has no weight in " + share_path);
        if (!order.emplace(name, int(w.tenants.size())).second)
            return fail(names_path + ":" + std::to_string(i + 1) + ": tenant '" + name +
                        "' listed twice");
        w.tenants.push_back(declared[by_name[name]]);
    }
    for (const auto& t : declared) {
        if (!order.contains(t.name))
            return fail(share_path + ": tenant '" + t.name + "' is missing from " + names_path);
        w.share_order.push_back(order[t.name]);
    }
    return w;
}

Result<Workload> read_reference_jobs(const std::string& trace_path, SkipCounts* skips) {
    Workload w;
    auto table = CsvTable::read(trace_path, {"job_id", "user", "num_gpu", "submit_time", "duration"});
    if (!table) return std::unexpected(table.error());
    std::set<std::int64_t> ids;
    auto integer = [&](std::size_t r, const std::string& col, std::int64_t min,
                       std::int64_t max) -> Result<std::int64_t> {
        auto v = parse_int(table->field(r, col));
        if (!v || *v < min || *v > max)
            return fail(table->where(r, col) + ": expected an integer from " + std::to_string(min) +
                        " to " + std::to_string(max) + ", got '" +
                        std::string(table->field(r, col)) + "'");
        return *v;
    };
    for (std::size_t r = 0; r < table->rows(); ++r) {
        if (table->field(r, "num_gpu") == "0") {  // the reference skips these rows
            if (skips) skips->add("num_gpu = 0");
            continue;
        }
        Job job;
        auto id = integer(r, "job_id", 0, std::numeric_limits<std::int64_t>::max());
        auto g = integer(r, "num_gpu", 1, kMaxGang);
        auto submit = integer(r, "submit_time", 0, kMaxTraceTime);
        auto duration = integer(r, "duration", 0, kMaxTraceTime);
        for (auto* v : {&id, &g, &submit, &duration})
            if (!*v) return std::unexpected(v->error());
        if (!ids.insert(*id).second)
            return fail(table->where(r, "job_id") + ": duplicate job id " + std::to_string(*id));
        const std::string user(table->field(r, "user"));
        if (user.empty()) return fail(table->where(r, "user") + ": empty tenant name");
        job.id = *id;
        job.tenant = intern_tenant(w, user);
        job.gpus = static_cast<int>(*g);
        job.submit_s = *submit;
        job.duration_s = *duration;
        w.jobs.push_back(job);
    }
    sort_by_submit(w);
    return w;
}

}  // namespace astraeus
