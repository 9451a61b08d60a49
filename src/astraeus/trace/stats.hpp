// Summary statistics of a workload, for `astraeus trace stats`: job count, GPU-hours demanded,
// job sizes, run-time percentiles, time span, and per-tenant jobs and GPU-hours; as text for
// people and as JSON (nlohmann) for scripts. Thread safety: pure functions.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "astraeus/base/time.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/trace/skips.hpp"

namespace astraeus {

struct TraceStats {
    struct TenantRow {
        std::string name;  ///< "(none)" for jobs without a tenant
        std::int64_t jobs = 0;
        GpuSeconds gpu_seconds = 0;
    };
    std::int64_t jobs = 0;
    GpuSeconds gpu_seconds = 0;                ///< sum of gpus * duration_s (GPU-hours = / 3600)
    std::map<int, std::int64_t> jobs_by_gpus;  ///< GPU count -> jobs
    /// Run-time percentiles by the nearest-rank method: the p-th percentile of n sorted run
    /// times is the ceil(p * n / 100)-th smallest. All 0 for an empty workload.
    Seconds duration_p50_s = 0, duration_p90_s = 0, duration_p99_s = 0, duration_max_s = 0;
    Seconds first_submit_s = 0, last_submit_s = 0;  ///< since epoch_unix_s
    std::int64_t epoch_unix_s = 0;
    /// Tenants in tenant order (tenants without jobs included), then "(none)" if any job has
    /// no tenant.
    std::vector<TenantRow> tenants;
    bool none_row = false;  ///< tenants' last row is "(none)" (not a tenant: jobs without one)
    SkipCounts skipped;  ///< what the reader left out (filled by the caller, if known)

    double gpu_hours() const { return static_cast<double>(gpu_seconds) / 3600.0; }
};

TraceStats compute_stats(const Workload& w);

/// A few lines of text; calendar times (UTC) are shown when epoch_unix_s != 0.
std::string stats_text(const TraceStats& s);

/// {"jobs", "gpu_seconds", "gpu_hours", "jobs_by_gpus": [{"gpus", "jobs"}, ...] (ascending
/// GPUs), "duration_s": {"p50",
/// "p90", "p99", "max"}, "span": {"epoch_unix_s", "first_submit_s", "last_submit_s",
/// "first_submit_utc", "last_submit_utc"}, "tenants": [{"name", "jobs", "gpu_seconds",
/// "gpu_hours"}], "skipped": {"reason": n}}.
nlohmann::json stats_json(const TraceStats& s);

}  // namespace astraeus
