#include "astraeus/policies/themis.hpp"

#include <algorithm>
#include <cmath>

#include "astraeus/policies/common.hpp"

namespace astraeus {

double ThemisPolicy::rho(const RoundInput& in, int j, int total_gpus) {
    const Job& job = in.jobs[j];
    const double shared =
        static_cast<double>(in.now - job.submit_s + (job.duration_s - in.runs[j].executed_s));
    const double n = std::max(1, in.active_jobs);
    const double slowdown = std::max(1.0, job.gpus * n / std::max(1, total_gpus));
    const double ideal = std::max(1.0, static_cast<double>(job.duration_s) * slowdown);
    return shared / ideal;
}

Seconds ThemisPolicy::lease_s(const RoundInput& in, int, Seconds restore_s) const {
    // Leases end on the auction clock (multiples of the lease term): the first one at least half
    // a term away (and longer than the checkpoint and restore costs).
    const Seconds term = opt_.params.themis_lease_s;
    const Seconds shortest = std::max(term / 2, restore_s + opt_.checkpoint_s + 1);
    Seconds end = (in.now / term + 1) * term;
    while (end - in.now < shortest) end += term;
    return end - in.now;
}

void ThemisPolicy::round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng&,
                         std::vector<Action>& actions) {
    actions.clear();
    if (cluster.free_gpus() == 0) return;  // no preemption mid-lease
    const std::size_t n = in.pending_all.size();
    by_rho_.clear();
    for (int j : in.pending_all)
        by_rho_.add({-rho(in, j, cluster.total_gpus()), double(in.jobs[j].submit_s), 0, j, j});
    const auto bidders = static_cast<std::size_t>(
        std::ceil((1.0 - opt_.params.themis_fairness_knob) * static_cast<double>(n) - 1e-9));
    bid_.resize(in.jobs.size(), 0);
    std::size_t k = 0;
    for (; k < std::min(bidders, n) && cluster.free_gpus() > 0; ++k) {
        const int j = by_rho_[k];
        bid_[j] = 1;
        policy_detail::try_start(in, cluster, placer, j, actions);
    }
    if (cluster.free_gpus() > 0 && k < n) {
        // Leftover GPUs: the jobs that did not bid, in submit order.
        leftover_.clear();
        for (int j : in.pending_all)
            if (!bid_[j]) leftover_.add({double(in.jobs[j].submit_s), 0, 0, j, j});
        for (std::size_t i = 0; i < leftover_.size() && cluster.free_gpus() > 0; ++i)
            policy_detail::try_start(in, cluster, placer, leftover_[i], actions);
    }
    for (std::size_t i = 0; i < k; ++i) bid_[by_rho_[i]] = 0;
}

}  // namespace astraeus
