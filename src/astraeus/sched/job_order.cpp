#include "astraeus/sched/job_order.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "astraeus/accounting/job_fairness.hpp"

namespace astraeus {

void order_candidates(JobOrder order, std::span<const Job> jobs, std::span<const RunState> runs,
                      std::vector<int>& pending, std::vector<int>& delay,
                      std::span<double> themis_rho, Rng& rng) {
    auto sort_by = [&](std::vector<int>& v, auto key) {
        std::stable_sort(v.begin(), v.end(), [&](int a, int b) { return key(a) < key(b); });
    };
    auto submit = [&](int j) { return jobs[j].submit_s; };
    switch (order) {
        case JobOrder::Fairness:
            sort_by(pending, [&](int j) { return std::pair(runs[j].fairness, submit(j)); });
            sort_by(delay, [&](int j) { return std::pair(-runs[j].fairness, -submit(j)); });
            return;
        case JobOrder::DiscFairness:
            sort_by(pending, [&](int j) { return std::pair(runs[j].fairness_class, submit(j)); });
            sort_by(delay, [&](int j) { return std::pair(-runs[j].fairness_class, -submit(j)); });
            return;
        case JobOrder::JobReward: {
            // reward = -p_j / g_j with p_j = chance to finish within the next lease; the
            // reference ships an empty duration histogram, so p_j = 1.
            auto reward = [&](int j) { return -1.0 / jobs[j].gpus; };
            sort_by(pending, [&](int j) {
                return std::tuple(runs[j].fairness_class, reward(j), submit(j));
            });
            sort_by(delay, [&](int j) {
                return std::tuple(-runs[j].fairness_class, -reward(j), -submit(j));
            });
            return;
        }
        case JobOrder::Themis:
            for (int j : pending) themis_rho[j] = finish_time_fairness(runs[j], jobs[j].duration_s);
            sort_by(pending, [&](int j) { return -themis_rho[j]; });
            sort_by(delay, [&](int j) { return themis_rho[j]; });
            return;
        case JobOrder::Fifo:
            sort_by(pending, [&](int j) { return submit(j); });
            break;
        case JobOrder::SmallestFirst:
            sort_by(pending, [&](int j) { return std::pair(jobs[j].gpus, submit(j)); });
            break;
        case JobOrder::Las:
            sort_by(pending, [&](int j) { return std::pair(runs[j].executed_s, submit(j)); });
            break;
        case JobOrder::Srtf:
            sort_by(pending, [&](int j) {
                return std::pair(jobs[j].duration_s - runs[j].executed_s, submit(j));
            });
            break;
        case JobOrder::Random:
            for (std::size_t i = pending.size(); i > 1; --i)
                std::swap(pending[i - 1], pending[rng.below(i)]);
            break;
    }
    delay.clear();
}

}  // namespace astraeus
