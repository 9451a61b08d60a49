// Submissions per minute per workspace (issue 18; docs/operations.md "Per-workspace limits"): a
// token bucket per workspace holding up to `per_minute` submissions, refilled evenly (one every
// 60 / per_minute seconds) on the real monotonic clock, not the service's (a time_scale test
// clock must not lift it). O(log workspaces) per call. Thread safety: none (the service calls it
// under its lock).
#pragma once
#include <cstdint>
#include <map>

namespace astraeus::service {

class SubmitLimiter {
public:
    explicit SubmitLimiter(int per_minute = 600) : per_minute_(per_minute) {}
    void set_rate(int per_minute) { per_minute_ = per_minute; }
    /// Takes one submission of workspace `ws` at `now_s` (monotonic seconds): 0 when it may go;
    /// else the whole seconds (>= 1) until one may (Retry-After), and nothing is taken.
    int take(std::int64_t ws, double now_s);

private:
    struct Bucket {
        double tokens = 0;
        double at_s = 0;
    };
    int per_minute_;
    std::map<std::int64_t, Bucket> buckets_;
};

}  // namespace astraeus::service
