// Reader for the ASTRAEA reference simulator's inputs (spec/astraea.md section 7):
//  - jobs CSV with header `job_id,user,num_gpu,submit_time,...,duration,...` (other columns
//    ignored); times in seconds since the trace start (no time zone); `user` is the tenant;
//    rows with num_gpu = 0 are skipped, as the reference does;
//  - tenant weights CSV `name,share` (share > 0, any scale);
//  - optional name list (one tenant a line; LF, CRLF or CR endings) giving the tenant order;
//    without it, the weights file's order is the tenant order.
// Files may be gzip-compressed. Bad rows are errors naming file, line and field.
#pragma once
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/trace/skips.hpp"
#include "astraeus/trace/tenants.hpp"

namespace astraeus {

/// Reads the weights file and the optional name list into a TenantTable.
Result<TenantTable> read_reference_tenants(const std::string& share_path,
                                           const std::string& names_path);

/// Reads the jobs CSV; tenants are the `user` values in first-appearance order (weight 1);
/// jobs sorted by submit time, ties in file order; epoch 0 (times are relative seconds).
/// `skips` (optional) counts the rows left out (num_gpu = 0).
Result<Workload> read_reference_jobs(const std::string& trace_path, SkipCounts* skips = nullptr);

}  // namespace astraeus
