// Forecast of a pool's pending runs: when each will start and its place in the pool's order,
// found by running the pool's own scheduler (a fork of its RoundAdapter: the same policy,
// placer, ledgers and lists) forward from the live state, as the simulator runs a trace: the
// running runs end when their time limits say (or, where unknown, an estimate from how long
// they have run), leases end and renew, starving runs are promoted, and every round decides as
// the live one would. Machines that are lost or drained stay so (no one knows when they return).
// Cost: bounded by rounds and by work (kForecastWorkBudget), see forecast_pool. Thread
// safety: pure over its arguments (the live adapter is read, never changed).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "astraeus/base/time.hpp"
#include "astraeus/service/round_adapter.hpp"

namespace astraeus::service {

/// Expected run time of a job without a time limit: as long again as it has run, at least this.
inline constexpr Seconds kUnknownRunS = 3600;

/// Default work budget of one forecast, in job-rounds: the sum over the rounds it runs of the
/// jobs (pending + running) each round sees. A round costs about 0.1 us per job (100,000
/// pending runs: about 10 ms), so 4,000,000 job-rounds bound a forecast to about 0.4 s
/// whatever the backlog: 40 rounds at 100,000 jobs, 200 at 20,000, the 4,096-round cap below
/// 976 jobs. The service runs it off its lock (service_forecast.cpp: only the fork is made
/// under it), at most half of one core.
inline constexpr long long kForecastWorkBudget = 4'000'000;

/// How long a run's own read (GET /v1/runs/{run}) waits for its pool's forecast, seconds of
/// real time; past it the last published one is shown.
inline constexpr int kForecastWaitS = 5;

struct ForecastInput {
    Seconds now = 0;  ///< the live state's time (the adapter's last event)
    /// Job j's work in all, seconds (its time limit); <= 0: unknown (estimated: see kUnknownRunS).
    std::function<Seconds(int job)> work_s;
    /// A running job's current lease end, seconds (-1: none, kNoLeaseEnd: none).
    std::function<Seconds(int job)> lease_end_s;
    Seconds horizon_s = 30 * 86400;  ///< starts later than now + horizon are unknown
    int max_rounds = -1;             ///< -1: 64 + 4 x (pending + running jobs), at most 4,096
    /// Work bound, job-rounds: a round runs only if the jobs it sees (pending + running, after
    /// the events at its time), added to those of the rounds before, stay within this. Runs
    /// not started within it (or max_rounds) get start_s -1. Deterministic (counts, not time).
    long long work_budget = kForecastWorkBudget;
};

/// One pending job's forecast.
struct RunForecast {
    int job = -1;
    int position = 0;      ///< 1-based place in the pool's order (by forecast start, then wait order)
    Seconds start_s = -1;  ///< estimated start (Unix seconds); -1: unknown (past the horizon or bound)
};

/// The forecast of every job pending in `live` at in.now, in position order. Jobs winding
/// down give their GPUs back at in.now. Cost: one fork of the adapter (O(jobs + machines)) and
/// at most max_rounds rounds of the pool's policy, each as costly as one live round, their jobs
/// summed at most in.work_budget (default 4,000,000 job-rounds: about 0.4 s at any backlog),
/// plus O(log n) per event; it stops as soon as every pending job has started.
std::vector<RunForecast> forecast_pool(const RoundAdapter& live, const ForecastInput& in);

/// The same from `sim`, a fork of the live adapter (RoundAdapter::fork()) taken earlier, which
/// it runs forward and consumes: the fork is made under the service's lock, this runs off it.
std::vector<RunForecast> forecast_pool(std::unique_ptr<RoundAdapter> sim, const ForecastInput& in);

}  // namespace astraeus::service
