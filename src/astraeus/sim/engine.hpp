// The trace-driven simulator: a virtual clock drives the ASTRAEA scheduler over a workload on a
// simulated cluster. Deterministic: the same workload, configuration and seed give identical
// results. No I/O; progress is reported through a callback. Thread safety: one call per thread.
//
// Both modes share the scheduler (sched/), the ledgers (accounting/) and the placers; they
// differ in how time moves (docs/modes.md):
//  - compat advances in fixed ticks (10 s) in the reference simulator's exact step order
//    (spec/astraea.md section 6b), quirks included, so results can be held against it;
//  - default is event-driven: rounds at arrivals, completions, lease ends and starvation
//    thresholds, with checkpoint/restore costs and the quirks of spec section 6 fixed.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/model/cluster.hpp"
#include "astraeus/sim/lifecycle_model.hpp"
#include "astraeus/model/run_state.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/sched/options.hpp"

namespace astraeus {

struct SimConfig {
    ClusterSpec cluster = ClusterSpec::uniform(40, 8);
    std::string cluster_name = "40x8";  ///< as given on the command line (for the manifest)
    std::string placement = "consolidate";
    AstraeaOptions options;
    /// Goodput accounting (default mode only): the lifecycle models to simulate; none = off.
    /// When on, start-up times, failures, stalls and machine losses change the schedule
    /// (docs/goodput-simulation.md); with it off nothing changes.
    std::optional<LifecycleConfig> goodput;
};

struct GoodputResult;  // sim/goodput_recorder.hpp

/// One tenant at one instant (sampled at every bucket boundary).
struct TenantSample {
    Seconds time_s;
    int tenant;
    double fairness;     ///< F_u over the window
    double index;        ///< R_u over the window
    int used_gpus;
    int pending_gpus;
};

struct SimResult {
    std::vector<RunState> runs;        ///< one per workload job, same index
    std::vector<int> quotas;           ///< Q_u per tenant
    std::vector<TenantSample> tenant_series;
    std::vector<double> tenant_fairness;  ///< F_u per tenant over the whole run
    Seconds end_s = 0;                 ///< last completion (makespan when the first submit is 0)
    GpuSeconds busy_gpu_s = 0;         ///< GPU-seconds held by running jobs
    GpuSeconds overhead_gpu_s = 0;     ///< of which spent checkpointing and restoring
    std::size_t dropped_too_big = 0;   ///< default mode: gangs larger than the whole cluster
    std::size_t dropped_over_static_quota = 0;  ///< default mode, static quotas: g > Q_u
    long rounds = 0;
    std::shared_ptr<const GoodputResult> goodput;  ///< with SimConfig::goodput only
};

struct Progress {
    Seconds now_s;
    std::size_t jobs_done;
    std::size_t jobs_total;
};
using ProgressFn = std::function<void(const Progress&)>;

/// Per-tenant GPU quotas Q_u from weights for C GPUs. compat: floor(C * s_u / sum s) in floating
/// point (sum in declaration order), an error if any quota is 0 (the reference divides by it);
/// default: largest-remainder rounding so that the quotas sum to C (zero quotas are legal).
Result<std::vector<int>> tenant_quotas(const Workload& w, int total_gpus, Mode mode);

/// The bounds of the options given in seconds (inclusive); check_options and the command line
/// use the same ones. They keep every product of seconds and GPUs far from overflow.
struct SecondsBounds {
    Seconds lo, hi;
};
inline constexpr SecondsBounds kLeaseBounds{1, 1'000'000'000};
inline constexpr SecondsBounds kStarvationBounds{1, kMaxTraceTime};
inline constexpr SecondsBounds kDelayBounds{0, 1'000'000'000};
inline constexpr SecondsBounds kCheckpointCostBounds{0, 1'000'000};
inline constexpr SecondsBounds kRestoreCostBounds{0, 1'000'000};

/// The first option out of range, with a message naming it and its bounds; none if all fit.
std::optional<Error> check_options(const AstraeaOptions& o);

/// Simulates `workload` to completion. `progress` (optional) is called every few thousand rounds.
Result<SimResult> simulate(const Workload& workload, const SimConfig& config,
                           const ProgressFn& progress = {});

}  // namespace astraeus
