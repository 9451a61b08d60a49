// Tenant configuration files: weights (or quotas) and tenant order.
//  - CSV `name,share` (the reference simulator's share.csv), with an optional name list for the
//    order (trace/reference_csv.hpp);
//  - JSON: {"tenants": [{"name": "a", "weight": 2}, {"name": "b", "quota_gpus": 64}, ...]}.
//    Order = file order. A quota is used as the weight (quotas summing to the cluster's GPUs
//    give exactly those quotas under largest-remainder rounding). See docs/tenants.md.
// Thread safety: reads one file per call.
#pragma once
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/trace/tenants.hpp"

namespace astraeus {

/// Reads a tenants file by extension (.json, else CSV); `names_path` only for CSV.
Result<TenantTable> read_tenant_config(const std::string& path, const std::string& names_path);

}  // namespace astraeus
