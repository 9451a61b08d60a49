// Cutting a workload down to a time window: a fixed window, the busiest calendar days, and a cap
// on run time. All times are seconds relative to the workload's epoch_unix_s (UTC); calendar
// days are UTC days (00:00-24:00 UTC) of epoch_unix_s + submit_s. A trace without dates (epoch 0,
// e.g. RFold) therefore has "days" of 86400 s counted from its first arrival.
// Tenants, share_order, job ids and weights are kept as they are. Thread safety: pure functions.
#pragma once
#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"
#include "astraeus/model/workload.hpp"

namespace astraeus {

/// The jobs submitted in [from_s, to_s) (seconds since w's epoch), with times re-based to the
/// window start: submit_s -= from_s and epoch_unix_s += from_s (absolute instants unchanged);
/// a workload without dates (epoch 0) keeps epoch 0 (its slice has no dates either).
/// Jobs may run past to_s. from_s >= to_s gives no jobs.
Workload slice_window(const Workload& w, Seconds from_s, Seconds to_s);

/// A window of whole UTC calendar days and the GPU-time demanded by jobs submitted in it.
struct DayWindow {
    Seconds from_s = 0;                 ///< window start, seconds since the workload's epoch
    Seconds to_s = 0;                   ///< window end (exclusive) = from_s + days * 86400
    std::int64_t first_day_unix_s = 0;  ///< the first day's 00:00 UTC, Unix seconds
    int days = 0;
    GpuSeconds demand_gpu_seconds = 0;  ///< sum of gpus * duration_s of the jobs submitted in it
};

/// The `n_days` consecutive UTC days with the most demand (sum of gpus * duration_s over the
/// jobs submitted in them); on a tie the earliest window. Candidate windows start on each day
/// from the first job's day to the last job's day - n_days + 1 (or just the first day when the
/// trace spans fewer days). Errors: n_days < 1, a workload with no jobs.
Result<DayWindow> busiest_days(const Workload& w, int n_days);

/// Returns w with every duration_s capped at max_s (max_s >= 0).
Workload cap_duration(Workload w, Seconds max_s);

}  // namespace astraeus
