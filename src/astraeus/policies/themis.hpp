// Themis: finish-time fairness (Mahajan, Balasubramanian, Sivaraman, Shin, Hong, Shenker, Akella,
// Chawla, "Themis: Fair and Efficient GPU Cluster Scheduling", NSDI'20, sections 3-5), in the
// simplified form of spec/astraea.md section 8: rank by rho, let the worst (1 - f) bid first,
// short leases.
//
// rho_j = T_shared / T_ideal for a waiting job at time t: T_shared = (t - submit_j) + (d_j - E_j),
// its finish time if it ran from now on (d_j: its run time, known to the simulator); T_ideal =
// d_j * max(1, g_j * N / C), its run time on a 1/N share of the C GPUs, N the active (pending or
// running) jobs. Leases end on an auction clock, at multiples of params.themis_lease_s (default
// 300 s; a job's first lease runs to the first tick at least half a term away), so each tick is
// one auction over every GPU whose lease ends then (Themis's arbiter auctions periodically).
// At every round (auction ticks, arrivals, completions) the pending jobs are ranked by rho,
// worst (largest) first; the ceil((1 - f) * n) worst of the n pending bid: each in turn gets
// its gang if it fits (else it is skipped); leftover GPUs then go to the other pending jobs in
// submit order. No preemption mid-lease: a lease end is where the worst rho takes the GPUs.
// Deviations: no partial-allocation auction between app agents (the bidders are served in rho
// order), no placement preferences in the bids, oracle run times instead of estimates, rho per
// job (not per app of several jobs), leases aligned to the auction clock (per-job 300-s leases
// would cost an auction, over every waiting job, at almost every second of an overloaded trace).
// Thread safety: see Policy.
#pragma once
#include <vector>

#include "astraeus/sched/job_order.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus {

class ThemisPolicy final : public Policy {
public:
    explicit ThemisPolicy(const AstraeaOptions& opt) : opt_(opt) {}
    std::string_view name() const override { return "themis"; }
    bool predicts_run_times() const override { return true; }  ///< d_j - E_j / rho
    Seconds lease_s(const RoundInput& in, int j, Seconds restore_s) const override;
    void round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
               std::vector<Action>& actions) override;

    /// rho_j at in.now for a cluster of `total_gpus` GPUs.
    static double rho(const RoundInput& in, int j, int total_gpus);

private:
    AstraeaOptions opt_;
    LazyRanking by_rho_, leftover_;
    std::vector<char> bid_;
};

}  // namespace astraeus
