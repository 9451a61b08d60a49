#include "astraeus/sched/job_order.hpp"

#include <algorithm>
#include <utility>

#include "astraeus/accounting/job_fairness.hpp"

namespace astraeus {
namespace {

/// Sort key: up to three numbers, then the position in the list, so that an unstable sort
/// gives the stable order the reference's Python sorts give.
struct Keyed {
    double k1, k2, k3;
    int pos;
    int job;
    bool operator<(const Keyed& o) const {
        if (k1 != o.k1) return k1 < o.k1;
        if (k2 != o.k2) return k2 < o.k2;
        if (k3 != o.k3) return k3 < o.k3;
        return pos < o.pos;
    }
};

/// Sorts v by key(j) -> Keyed{k1, k2, k3} ascending, ties in list order.
template <class Key>
void sort_by(std::vector<int>& v, Key key) {
    thread_local std::vector<Keyed> items;
    items.clear();
    for (std::size_t i = 0; i < v.size(); ++i) {
        Keyed k = key(v[i]);
        k.pos = static_cast<int>(i);
        k.job = v[i];
        items.push_back(k);
    }
    std::sort(items.begin(), items.end());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = items[i].job;
}

}  // namespace

void order_candidates(JobOrder order, std::span<const Job> jobs, std::span<const RunState> runs,
                      std::vector<int>& pending, std::vector<int>& delay,
                      std::span<double> themis_rho, Rng& rng) {
    auto submit = [&](int j) { return static_cast<double>(jobs[j].submit_s); };
    auto f = [&](int j) { return runs[j].fairness; };
    auto cls = [&](int j) { return static_cast<double>(fairness_class(runs[j].fairness)); };
    // job_reward: reward = -p_j / g_j with p_j = chance to finish within the next lease; the
    // reference ships an empty duration histogram, so p_j = 1.
    auto reward = [&](int j) { return -1.0 / jobs[j].gpus; };
    switch (order) {
        case JobOrder::Fairness:
            sort_by(pending, [&](int j) { return Keyed{f(j), submit(j), 0, 0, 0}; });
            sort_by(delay, [&](int j) { return Keyed{-f(j), -submit(j), 0, 0, 0}; });
            return;
        case JobOrder::DiscFairness:
            sort_by(pending, [&](int j) { return Keyed{cls(j), submit(j), 0, 0, 0}; });
            sort_by(delay, [&](int j) { return Keyed{-cls(j), -submit(j), 0, 0, 0}; });
            return;
        case JobOrder::JobReward:
            sort_by(pending, [&](int j) { return Keyed{cls(j), reward(j), submit(j), 0, 0}; });
            sort_by(delay, [&](int j) { return Keyed{-cls(j), -reward(j), -submit(j), 0, 0}; });
            return;
        case JobOrder::Themis:
            for (int j : pending) themis_rho[j] = finish_time_fairness(runs[j], jobs[j].duration_s);
            sort_by(pending, [&](int j) { return Keyed{-themis_rho[j], 0, 0, 0, 0}; });
            sort_by(delay, [&](int j) { return Keyed{themis_rho[j], 0, 0, 0, 0}; });
            return;
        case JobOrder::Fifo:
            sort_by(pending, [&](int j) { return Keyed{submit(j), 0, 0, 0, 0}; });
            break;
        case JobOrder::SmallestFirst:
            sort_by(pending, [&](int j) { return Keyed{double(jobs[j].gpus), submit(j), 0, 0, 0}; });
            break;
        case JobOrder::Las:
            sort_by(pending,
                    [&](int j) { return Keyed{double(runs[j].executed_s), submit(j), 0, 0, 0}; });
            break;
        case JobOrder::Srtf:
            sort_by(pending, [&](int j) {
                return Keyed{double(jobs[j].duration_s - runs[j].executed_s), submit(j), 0, 0, 0};
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
