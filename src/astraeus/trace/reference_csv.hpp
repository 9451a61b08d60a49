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

namespace astraeus {

/// What to do with a job whose tenant has no weight.
enum class UnknownTenant {
    Error,  ///< default mode: an error naming the row
    Drop,   ///< compat: keep the job with tenant = -1; the simulator drops it at admission
};

/// Reads tenants (weights file, optional name list) into w.tenants and w.share_order.
Result<Workload> read_reference_tenants(const std::string& share_path,
                                        const std::string& names_path);

/// Reads the jobs CSV into `tenants` (from read_reference_tenants); jobs sorted by submit time,
/// ties in file order.
Result<Workload> read_reference_jobs(const std::string& trace_path, Workload tenants,
                                     UnknownTenant unknown);

}  // namespace astraeus
