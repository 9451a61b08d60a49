// The workload a scheduler serves: tenants (virtual clusters) with weights, and jobs (gangs).
// Plain values, no I/O; built by the trace readers in trace/. Thread safety: immutable once built.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/time.hpp"

namespace astraeus {

/// Largest gang, trace time (a submit time or a run time, in seconds: about 317 years) and
/// tenant weight accepted anywhere: bounds that keep GPU-seconds far from integer overflow.
inline constexpr int kMaxGang = 1'000'000;
inline constexpr Seconds kMaxTraceTime = 10'000'000'000;
inline constexpr double kMaxWeight = 1e15;

/// A tenant (virtual cluster, workspace): a name and a weight s_u > 0 (spec/astraea.md section 1).
struct Tenant {
    std::string name;
    double weight = 1.0;
};

/// A job's own name from the trace, when it has one (most jobs have none: the id names them).
/// One pointer wide, so that a Job stays small (the simulator holds millions); copies are deep.
class JobName {
public:
    JobName() = default;
    JobName(std::string_view s) { *this = s; }  // NOLINT: implicit, like std::string
    JobName(const char* s) { *this = std::string_view(s); }  // NOLINT
    JobName(const JobName& o) { *this = o.str(); }
    JobName(JobName&&) noexcept = default;
    JobName& operator=(const JobName& o) { return *this = std::string_view(o.str()); }
    JobName& operator=(JobName&&) noexcept = default;
    JobName& operator=(std::string_view s) {
        if (s.empty()) text_.reset();
        else text_ = std::make_unique<std::string>(s);
        return *this;
    }
    JobName& operator=(const std::string& s) { return *this = std::string_view(s); }
    JobName& operator=(const char* s) { return *this = std::string_view(s); }
    bool empty() const { return !text_; }
    /// The name ("" when none).
    const std::string& str() const {
        static const std::string kNone;
        return text_ ? *text_ : kNone;
    }
    operator std::string_view() const { return str(); }  // NOLINT: reads like a string
    bool operator==(std::string_view s) const { return str() == s; }

private:
    std::unique_ptr<std::string> text_;
};

/// A job is a gang: it needs all `gpus` at once for its whole life, and runs `duration_s`
/// seconds of work once started (run time from the trace; placement does not change speed).
struct Job {
    std::int64_t id = 0;      ///< id from the trace (unique)
    int tenant = -1;          ///< index into Workload::tenants
    int gpus = 1;             ///< g_j > 0
    Seconds submit_s = 0;     ///< arrival, seconds since trace start
    Seconds duration_s = 0;   ///< d_j, seconds of work
    double weight = 1.0;      ///< w_j, job weight inside its tenant
    JobName name;             ///< the trace's own job id when not an integer (e.g. Philly
                              ///< "application_..."); empty otherwise
    int gpus_per_worker = 0;  ///< 0: no worker shape (trace jobs: the placer may split the gang
                              ///< anywhere); > 0: gpus / gpus_per_worker workers, each on one
                              ///< machine (sched/gang_placement.hpp)
};

/// Tenants in tenant order (the order phase 2 visits them) and jobs sorted by submit time
/// (stable: ties keep trace order). `share_order` lists tenant indexes in the order the weights
/// were declared (the reference simulator breaks phase-1 ties in that order).
/// Times are seconds since `epoch_unix_s` (UTC): a trace reader sets the epoch so that the
/// earliest submit of the trace is near 0 (0 when the trace has no calendar dates).
/// A trace reader returns the tenants it found (weight 1, first-appearance order); weights and
/// order come from a tenants file afterwards (trace/tenants.hpp). tenant = -1: no tenant.
struct Workload {
    std::vector<Tenant> tenants;
    std::vector<int> share_order;
    std::vector<Job> jobs;
    std::int64_t epoch_unix_s = 0;
};

/// Sorts jobs by submit time, keeping the order of equal submits.
void sort_by_submit(Workload& w);

}  // namespace astraeus
