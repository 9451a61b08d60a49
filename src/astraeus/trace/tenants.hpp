// Tenant weights and order, and applying them to a workload read from a trace.
// Thread safety: pure functions.
#pragma once
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"

namespace astraeus {

/// Tenants in tenant order with their weights; share_order = declaration order of the weights.
struct TenantTable {
    std::vector<Tenant> tenants;
    std::vector<int> share_order;
};

/// What to do with a job whose tenant has no weight.
enum class UnknownTenant {
    Error,          ///< an error naming the job and tenant (default mode)
    Drop,           ///< keep the job with tenant = -1; the simulator drops it (compat quirk 2)
    DefaultWeight,  ///< add the tenant at the end of the order with weight 1
};

/// Replaces w's tenants by `table` and remaps every job's tenant by name. `source` names the
/// trace in error messages, `table_source` (when given) the tenants file.
Result<Workload> apply_tenants(Workload w, const TenantTable& table, UnknownTenant unknown,
                               const std::string& source, const std::string& table_source = "");

/// A job read from a dated trace, before the epoch is known: its submit time in Unix seconds
/// and its tenant's name.
struct DatedJob {
    Job job;
    std::int64_t submit_unix = 0;
    std::string vc;
};

/// The workload of dated jobs: epoch = the earliest submit (UTC), submit times relative to it,
/// tenants interned in row order (weight 1), jobs sorted by submit.
Workload workload_from_dated(std::vector<DatedJob> rows);

/// Index of the tenant called `name` in `w`, adding it (weight 1) if absent.
int intern_tenant(Workload& w, const std::string& name);

}  // namespace astraeus
