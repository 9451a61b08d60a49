#include "astraeus/trace/tenants.hpp"

#include <algorithm>
#include <map>

namespace astraeus {

int intern_tenant(Workload& w, const std::string& name) {
    for (std::size_t u = 0; u < w.tenants.size(); ++u)
        if (w.tenants[u].name == name) return static_cast<int>(u);
    w.share_order.push_back(static_cast<int>(w.tenants.size()));
    w.tenants.push_back({name, 1.0});
    return static_cast<int>(w.tenants.size() - 1);
}

Workload workload_from_dated(std::vector<DatedJob> rows) {
    Workload w;
    if (!rows.empty())
        w.epoch_unix_s = std::min_element(rows.begin(), rows.end(), [](const DatedJob& a,
                                                                       const DatedJob& b) {
                             return a.submit_unix < b.submit_unix;
                         })->submit_unix;
    for (DatedJob& r : rows) {
        r.job.tenant = intern_tenant(w, r.vc);
        r.job.submit_s = r.submit_unix - w.epoch_unix_s;
        w.jobs.push_back(std::move(r.job));
    }
    sort_by_submit(w);
    return w;
}

Result<Workload> apply_tenants(Workload w, const TenantTable& table, UnknownTenant unknown,
                               const std::string& source, const std::string& table_source) {
    std::map<std::string, int> index;
    for (std::size_t u = 0; u < table.tenants.size(); ++u)
        index[table.tenants[u].name] = static_cast<int>(u);
    const std::vector<Tenant> old = std::move(w.tenants);
    w.tenants = table.tenants;
    w.share_order = table.share_order;
    for (Job& job : w.jobs) {
        if (job.tenant < 0) {
            if (unknown == UnknownTenant::Drop) continue;
            return fail(source + ": job " + std::to_string(job.id) +
                        " has no tenant; assign tenants first (astraeus trace assign-tenants)");
        }
        const std::string& name = old[job.tenant].name;
        auto it = index.find(name);
        if (it != index.end()) {
            job.tenant = it->second;
        } else if (unknown == UnknownTenant::Drop) {
            job.tenant = -1;
        } else if (unknown == UnknownTenant::DefaultWeight) {
            job.tenant = intern_tenant(w, name);
            index[name] = job.tenant;
        } else {
            return fail(source + ": job " + std::to_string(job.id) + ": tenant '" + name +
                        "' has no weight in the tenants file" + (table_source.empty() ? "" : " " + table_source) +
                        " (add it, or use "
                        "--unknown-tenant default-weight)");
        }
    }
    return w;
}

}  // namespace astraeus
