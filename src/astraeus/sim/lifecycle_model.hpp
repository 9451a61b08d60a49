// Lifecycle models for goodput in the simulator (docs/goodput-simulation.md): what makes the
// states of the goodput count happen to simulated jobs. Start-up time per placement (image,
// drives, the gang barrier), failures (an early failure with a probability per job plus a
// constant rate per GPU-hour and per job-hour of running), machine losses (a rate per machine,
// a repair time), stalls (a rate per job-hour of running; detected after the stall timeout),
// stragglers (a gang slowed to its slowest worker: its utilization scaled down) and the GPU
// utilization of running jobs (piecewise constant, drawn from Philly's per-GPU-minute CDF).
//
// Every draw comes from its own stream, derived from the run's seed, the job (or machine) and
// the purpose, never from the scheduler's generator: enabling goodput never changes the
// scheduler's own random draws, and a job's draws do not depend on the order of other events.
// Pure: no I/O, no clock. Thread safety: LifecycleConfig is a value; LifecycleModel is not
// thread-safe (one per simulation).
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/base/rng.hpp"
#include "astraeus/base/time.hpp"

namespace astraeus {

/// The lifecycle models' parameters. Defaults: "calibrated" (docs/goodput-simulation.md says
/// which figure each one comes from, or that it is an assumption).
struct LifecycleConfig {
    std::string name = "calibrated";           ///< "calibrated" or "none" (for the manifest)
    // Start-up per placement: startup_s + startup_per_doubling_s x ceil(log2(machines)).
    Seconds startup_s = 60;
    Seconds startup_per_doubling_s = 15;
    // Failures. A job fails early (in its first early_failure_window_s of running) with this
    // probability, and at any time at a constant rate per GPU-hour and per job-hour of running.
    double early_failure_p = 0.3036;           ///< fitted to Philly (cluster_summary.csv)
    Seconds early_failure_window_s = 600;
    double failure_rate_gpu_hour = 6.577e-5;   ///< fitted to Philly (cluster_summary.csv)
    double failure_rate_job_hour = 0;
    Seconds failure_hold_s = 180;              ///< holds its GPUs this long after a failure
    /// Jobs save their own checkpoint every this many seconds of work (0: never): a failure,
    /// stall or machine loss loses the work since the later of this and the lease's start.
    Seconds job_checkpoint_s = 3600;
    // Machine losses: a rate per machine-day; the machine comes back after repair_s.
    double machine_loss_rate_day = 0.01;
    Seconds repair_s = 4 * 3600;
    // Stalls: onset at a rate per job-hour of running; detected stall_timeout_s after the last
    // progress; the run is stopped (stall_stop_s holding its GPUs) and placed again.
    double stall_rate_job_hour = 0.001;
    Seconds stall_timeout_s = 600;
    Seconds stall_stop_s = 60;
    // Stragglers: per attempt, with this probability one worker slows the gang down from a
    // random time on: the gang's utilization is multiplied by straggler_factor.
    double straggler_p = 0.05;
    double straggler_factor = 0.5;
    /// Attempts per job: an attempt ends at a failure, a machine loss or a stall (a lease end
    /// or a preemption does not end it). The job whose max_attempts-th attempt fails fails for
    /// good: it holds its GPUs for the holding time, then ends in that state (never placed
    /// again). Bounds every simulation whatever the rates (1..kMaxAttemptsLimit).
    int max_attempts = 100;
    // Utilization: a level drawn from the CDF, redrawn after exponential segments of this mean.
    Seconds util_segment_s = 3600;
    bool full_utilization = false;             ///< none: every running minute is 100 %
    /// >= 0: every running minute is this level, percent (no flag: tests of the busy threshold's
    /// edge, 5.0 / 4.9 %); -1: the CDF (or 100 % with full_utilization, which wins).
    double fixed_utilization_pct = -1;

    /// --lifecycle none: start-up 0, no failures, losses, stalls or stragglers, 100 %.
    static LifecycleConfig none();
    /// By name: "calibrated" or "none"; else an error naming both.
    static Result<LifecycleConfig> named(const std::string& name);
};

/// The largest --max-attempts accepted.
inline constexpr int kMaxAttemptsLimit = 100;

/// The first parameter out of range, with a message naming its flag ("--early-failure: expected
/// a probability from 0 to 1, got 2"); nothing when all fit.
Result<void> check_lifecycle(const LifecycleConfig& c);

/// Philly's per-GPU-minute GPU utilization, as 101 quantiles (0 %, 1 %, ..., 100 % of the
/// samples), from data/goodput/philly_gpu_util_quantiles.csv.
const std::array<double, 101>& philly_gpu_util_quantiles();

/// A stream of draws: SplitMix64 seeded from (seed, purpose, id) through a mixing hash.
class Stream {
public:
    Stream(std::uint64_t seed, std::uint64_t purpose, std::uint64_t id);
    double uniform() { return rng_.uniform(); }
    /// Exponential with the given mean (> 0), in seconds, at least 1.
    Seconds exponential_s(double mean_s);

private:
    Rng rng_;
};

/// Stream purposes (separate sequences per job or machine).
enum class Draw : std::uint64_t { Failure = 1, Utilization = 2, Stall = 3, Machine = 4 };

class LifecycleModel {
public:
    LifecycleModel(const LifecycleConfig& c, std::uint64_t seed) : c_(c), seed_(seed) {}
    const LifecycleConfig& config() const { return c_; }
    std::uint64_t seed() const { return seed_; }

    /// Start-up seconds of a placement spanning `machines` machines (>= 1).
    Seconds startup_s(int machines) const;
    /// A utilization level (percent, 0..100) from the Philly CDF, given u uniform in [0, 1).
    double utilization_pct(double u) const;
    /// Running seconds until the next failure at a constant rate for a gang of `gpus` (a very
    /// large value when the rate is 0).
    Seconds rate_failure_after_s(Stream& s, int gpus) const;
    /// Running seconds until the next stall onset (very large when the rate is 0).
    Seconds stall_after_s(Stream& s) const;
    /// Seconds until machine loss (very large when the rate is 0).
    Seconds machine_loss_after_s(Stream& s) const;

private:
    LifecycleConfig c_;
    std::uint64_t seed_;
};

/// "never" for the draws above: far beyond any trace time.
inline constexpr Seconds kNever = Seconds{1} << 50;

}  // namespace astraeus
