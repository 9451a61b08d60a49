// The figures every run reports (spec/astraea.md section 9), computed from a SimResult.
// Pure; thread-safe.
#pragma once
#include <vector>

#include "astraeus/model/workload.hpp"
#include "astraeus/sim/engine.hpp"

namespace astraeus {

struct Distribution {
    double mean = 0, p50 = 0, p95 = 0, p99 = 0, min = 0, max = 0;
};

struct Summary {
    std::size_t jobs_total = 0, jobs_admitted = 0, jobs_dropped = 0, jobs_done = 0;
    Distribution jct_s, queueing_delay_s;
    Distribution longest_wait_s;     ///< each finished job's longest stretch pending
    Seconds makespan_s = 0;          ///< last end - first submit
    double gpu_utilization = 0;      ///< busy GPU-seconds / (C x makespan)
    long preemptions = 0, lease_expiries = 0, checkpoints = 0, resumes = 0;
    // job-level fairness over finished jobs that deserved some GPU-time (D_j > 0: F_j is
    // undefined for a job of a zero-quota tenant or one that ended the instant it arrived)
    std::size_t jobs_without_fairness = 0;
    double share_fair = 0, share_loss = 0, share_benefit = 0;  ///< F_j in [0.95, 1/0.95] / below / above
    double fj_min = 0, fj_p5 = 0, fj_median = 0, fj_max = 0, fj_jain = 0;
    // tenant-level fairness: F_u over the whole run, over tenants that had jobs
    double fu_max_dev = 0;           ///< max |F_u - 1|
    double fu_min = 0;               ///< the worst-served tenant's F_u
    double fu_max_shortfall = 0;     ///< max(0, 1 - min F_u): how far below its due the worst
                                     ///< tenant falls (F_u > 1 is borrowing idle GPUs, not harm)
    double fu_max_over_min = 0;      ///< max F_u / min F_u
    double fu_jain = 0;
    double fu_worst_over_time = 0;   ///< min windowed F_u over the hourly samples
};

/// Percentile with linear interpolation between closest ranks (numpy's default); q in [0, 100].
double percentile(std::vector<double> v, double q);
/// The same on a list already sorted ascending (no copy, no sort).
double percentile_of_sorted(const std::vector<double>& sorted, double q);
/// Jain's fairness index (sum x)^2 / (n sum x^2); 1 for an empty or all-zero list.
double jain_index(const std::vector<double>& x);

Summary summarize(const Workload& w, const SimResult& r, int total_gpus);

}  // namespace astraeus
