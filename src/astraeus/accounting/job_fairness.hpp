// Job-level Long-Term GPU-time Fairness (LTGF), after ASTRAEA (Ye et al., "ASTRAEA: A Fair Deep
// Learning Scheduler for Multi-tenant GPU Clusters", IEEE TPDS 2022) as its reference simulator
// computes it (spec/astraea.md sections 2 and 4). Pure functions; thread-safe.
#pragma once
#include "astraeus/base/time.hpp"
#include "astraeus/model/run_state.hpp"
#include "astraeus/model/workload.hpp"

namespace astraeus {

/// Job j's fair share inside its tenant: w_j / sum_k w_k * Q_u GPUs (k over the tenant's active
/// jobs, weights summing to `active_weight`); Q_u / n when all weights are 1.
/// Computed as (1 / n) * Q in the equal-weight case, as the reference does, for bit equality.
inline double job_fair_share(double job_weight, double active_weight, int active_jobs,
                             double quota) {
    if (active_weight == static_cast<double>(active_jobs) && job_weight == 1.0)
        return 1.0 / active_jobs * quota;
    return job_weight / active_weight * quota;
}

/// Adds `dt_s` of deserved service: D_j += min(g_j, share) * dt_s.
inline void accrue_deserved(RunState& run, int gpus, double share, Seconds dt_s) {
    const double g = static_cast<double>(gpus);
    run.deserved_gpu_s += (g < share ? g : share) * static_cast<double>(dt_s);
}

/// Fairness class of F_j (spec section 2): 0 if x = 0, else
/// K - floor(((phi + 1) / 2) / (1 / K)), phi = -ln x / sqrt(1 + ln^2 x). K = 5 gives the
/// boundaries 0.47, 0.82, 1.23, 2.12.
int fairness_class(double x, int k = 5);

/// Sets F_j = U_j / D_j (0 while D_j = 0).
inline void refresh_fairness(RunState& run) {
    run.fairness = run.deserved_gpu_s > 0 ? run.utilized_gpu_s / run.deserved_gpu_s : 0.0;
}

/// Themis-style finish-time fairness used by the `themis` job order (spec section 4):
/// rho' = T_life / (E * U/D + (T_life - E) + (d - E)); 1 while D_j = 0.
double finish_time_fairness(const RunState& run, Seconds duration_s);

}  // namespace astraeus
