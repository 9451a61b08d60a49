// Astraeus's own trace format (docs/formats/native-trace.md): a CSV file that holds a Workload
// exactly, so that any trace can be converted once, sliced, given tenants, and simulated.
//   #astraeus-trace,1                      <- format name and version (first line)
//   #epoch_unix_s,1502092800               <- the epoch of the times below (UTC Unix seconds)
//   #epoch_utc,2017-08-07 08:00:00         <- the same instant, for people (checked on read)
//   #tenant,ee9e8c,1                       <- tenants in tenant order: name, weight
//   #share_order,0                         <- Workload::share_order
//   # free text                            <- a comment ('#' then a space)
//   job_id,tenant,gpus,submit_s,duration_s,weight[,name]
//   1506638472019014199,ee9e8c,8,0,3600,1,application_1506638472019_14199
// Times are integer seconds since the epoch; tenant is a tenant name (empty: no tenant);
// weights are written in the shortest form that reads back to the same double. Fields follow
// RFC 4180 quoting. Round trip: parse_native(write_native(w)) == w field by field for every
// valid workload (jobs sorted by submit; gpus >= 1; duration >= 0; weights finite and > 0;
// tenant names non-empty, unique and free of line breaks; job names free of line breaks).
// Thread safety: pure functions.
#pragma once
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"

namespace astraeus {

/// The first line of every native trace, without the version.
inline constexpr std::string_view kNativeMagic = "#astraeus-trace";
/// The version this build writes and reads.
inline constexpr int kNativeVersion = 1;

/// Serializes `w` in the native format (LF line ends). The name column is written only when a
/// job has a non-empty name.
std::string write_native(const Workload& w);

/// Parses native-format text; `source` names it in errors ("source:line: field 'x': ...").
/// Tenants come from the #tenant lines in order; a job naming an undeclared tenant adds it
/// (weight 1, appended to share_order). Without #share_order, share_order is the tenant order.
/// Jobs are sorted by submit time (stable).
Result<Workload> parse_native(std::string_view text, const std::string& source);

/// Reads a native trace file (may be gzip-compressed).
Result<Workload> read_native(const std::string& path);

}  // namespace astraeus
