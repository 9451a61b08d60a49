#include "astraeus/sim/lifecycle_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace astraeus {

LifecycleConfig LifecycleConfig::none() {
    LifecycleConfig c;
    c.name = "none";
    c.startup_s = 0;
    c.startup_per_doubling_s = 0;
    c.early_failure_p = 0;
    c.failure_rate_gpu_hour = 0;
    c.failure_rate_job_hour = 0;
    c.machine_loss_rate_day = 0;
    c.stall_rate_job_hour = 0;
    c.straggler_p = 0;
    c.full_utilization = true;
    return c;
}

Result<LifecycleConfig> LifecycleConfig::named(const std::string& name) {
    if (name == "calibrated") return LifecycleConfig{};
    if (name == "none") return none();
    return fail("--lifecycle: expected calibrated or none, got '" + name + "'");
}

Result<void> check_lifecycle(const LifecycleConfig& c) {
    // Each message names the command-line flag (or, for the three without one, the
    // LifecycleConfig field) and the value as given.
    auto secs = [](const char* flag, Seconds v, Seconds lo, Seconds hi) -> Result<void> {
        if (v >= lo && v <= hi) return {};
        return fail(fmt::format("{}: expected seconds from {} to {}, got {}", flag, lo, hi, v));
    };
    auto prob = [](const char* flag, double v) -> Result<void> {
        if (std::isfinite(v) && v >= 0 && v <= 1) return {};
        return fail(fmt::format("{}: expected a probability from 0 to 1, got {}", flag, v));
    };
    auto rate = [](const char* flag, double v, double hi, const char* per) -> Result<void> {
        if (std::isfinite(v) && v >= 0 && v <= hi) return {};
        return fail(fmt::format("{}: expected a rate from 0 to {} per {}, got {}", flag, hi, per,
                                v));
    };
    for (auto r : {secs("--startup", c.startup_s, 0, 86400),
                   secs("--startup-per-doubling", c.startup_per_doubling_s, 0, 86400),
                   secs("early_failure_window_s", c.early_failure_window_s, 0, 86400),
                   secs("--failure-hold", c.failure_hold_s, 0, 86400),
                   secs("--job-checkpoint", c.job_checkpoint_s, 0, 365 * 86400),
                   secs("--repair-time", c.repair_s, 0, 365 * 86400),
                   secs("stall_stop_s", c.stall_stop_s, 0, 86400),
                   secs("--stall-timeout", c.stall_timeout_s, 60, 86400),
                   secs("--util-segment", c.util_segment_s, 60, 30 * 86400),
                   prob("--early-failure", c.early_failure_p),
                   rate("--failure-rate", c.failure_rate_gpu_hour, 10, "GPU-hour"),
                   rate("--failure-rate-job", c.failure_rate_job_hour, 10, "job-hour"),
                   rate("--machine-loss-rate", c.machine_loss_rate_day, 100, "machine-day"),
                   rate("--stall-rate", c.stall_rate_job_hour, 10, "job-hour"),
                   prob("--straggler-p", c.straggler_p),
                   prob("straggler_factor", c.straggler_factor)})
        if (!r) return r;
    if (!(c.fixed_utilization_pct == -1 || (c.fixed_utilization_pct >= 0 && c.fixed_utilization_pct <= 100)))
        return fail(fmt::format("fixed_utilization_pct: expected -1 or a percent from 0 to 100, got {}",
                                c.fixed_utilization_pct));
    if (c.max_attempts < 1 || c.max_attempts > kMaxAttemptsLimit)
        return fail(fmt::format("--max-attempts: expected a whole number from 1 to {}, got {}",
                                kMaxAttemptsLimit, c.max_attempts));
    return {};
}

const std::array<double, 101>& philly_gpu_util_quantiles() {
    // data/goodput/philly_gpu_util_quantiles.csv (a test checks that the two agree).
    static const std::array<double, 101> q{
        0,       0,       0,       0,       0,       0,       0,       0,       0,
        0,       0,       0,       0,       0,       0,       0,       0,       0,
        0,       0,       0,       0,       0,       0,       0,       0,       0,
        0,       0,       0,       0,       0,       0,       1.6,     3.7667,  6.2,
        9.2,     12.35,   15.5,    18.8333, 22.1667, 25.3333, 28.5,    31.6667, 34.5333,
        37.2,    39.8667, 42.25,   44.55,   46.6667, 48.5667, 50.5333, 52.475,  54.4833,
        56.5833, 58.5667, 60.6667, 62.8667, 65,      67.2,    69.4,    71.55,   73.55,
        75.6,    77.55,   79.4667, 81.2667, 83,      84.6,    86,      87.3667, 88.6333,
        89.75,   90.6667, 91.5333, 92,      93,      94,      94.9,    95.6667, 96.4833,
        97,      97.4667, 97.9333, 98,      98.3,    98.6,    98.95,   99,      99.0333,
        99.2833, 99.5,    99.7333, 100,     100,     100,     100,     100,     100,
        100,     100};
    return q;
}

namespace {
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
}  // namespace

Stream::Stream(std::uint64_t seed, std::uint64_t purpose, std::uint64_t id)
    : rng_(mix(mix(mix(seed ^ 0x676f6f6470757421ULL) ^ purpose) ^ id)) {}

Seconds Stream::exponential_s(double mean_s) {
    const double u = rng_.uniform();  // [0, 1)
    const double x = -std::log1p(-u) * mean_s;
    if (!(x < static_cast<double>(kNever))) return kNever;
    return std::max<Seconds>(1, static_cast<Seconds>(std::llround(x)));
}

Seconds LifecycleModel::startup_s(int machines) const {
    int doublings = 0;
    while ((1 << doublings) < machines) ++doublings;
    return c_.startup_s + c_.startup_per_doubling_s * doublings;
}

double LifecycleModel::utilization_pct(double u) const {
    if (c_.full_utilization) return 100.0;
    if (c_.fixed_utilization_pct >= 0) return c_.fixed_utilization_pct;
    const auto& q = philly_gpu_util_quantiles();
    const double x = u * 100.0;
    const auto i = static_cast<std::size_t>(std::min(99.0, std::floor(x)));
    const double f = x - static_cast<double>(i);
    return std::clamp(q[i] + (q[i + 1] - q[i]) * f, 0.0, 100.0);
}

Seconds LifecycleModel::rate_failure_after_s(Stream& s, int gpus) const {
    const double per_hour = c_.failure_rate_gpu_hour * gpus + c_.failure_rate_job_hour;
    if (!(per_hour > 0)) return kNever;
    return s.exponential_s(3600.0 / per_hour);
}

Seconds LifecycleModel::stall_after_s(Stream& s) const {
    if (!(c_.stall_rate_job_hour > 0)) return kNever;
    return s.exponential_s(3600.0 / c_.stall_rate_job_hour);
}

Seconds LifecycleModel::machine_loss_after_s(Stream& s) const {
    if (!(c_.machine_loss_rate_day > 0)) return kNever;
    return s.exponential_s(86400.0 / c_.machine_loss_rate_day);
}

}  // namespace astraeus
