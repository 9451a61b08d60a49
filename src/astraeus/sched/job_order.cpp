#include "astraeus/sched/job_order.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "astraeus/accounting/job_fairness.hpp"

namespace astraeus {

int LazyRanking::operator[](std::size_t k) {
    auto later = [](const RankKey& a, const RankKey& b) { return b < a; };
    if (!built_) {
        std::make_heap(heap_.begin(), heap_.end(), later);
        built_ = true;
    }
    while (k >= ordered_.size()) {
        if (ordered_.size() >= kHeapReads) {
            // Read this far, a round usually reads on (phase 1 walks a queue past every gang
            // too big for the free GPUs): the rest sorted at once is cheaper than a pop each.
            // RankKey's order is total (pos is unique), so the order is the heap's.
            std::sort(heap_.begin(), heap_.end());
            for (const RankKey& key : heap_) ordered_.push_back(key.job);
            heap_.clear();
            break;
        }
        std::pop_heap(heap_.begin(), heap_.end(), later);
        ordered_.push_back(heap_.back().job);
        heap_.pop_back();
    }
    return ordered_[k];
}

namespace {

double submit(std::span<const Job> jobs, int j) { return static_cast<double>(jobs[j].submit_s); }
double fclass(std::span<const RunState> runs, int j) {
    return static_cast<double>(fairness_class(runs[j].fairness));
}
// job_reward: reward = -p_j / g_j with p_j = chance to finish within the next lease; the
// reference ships an empty duration histogram, so p_j = 1.
double reward(std::span<const Job> jobs, int j) { return -1.0 / jobs[j].gpus; }
// fairness order with a gang weight gamma: F_j * g_j^gamma (gamma = 0: F_j).
double weighted_fairness(std::span<const Job> jobs, std::span<const RunState> runs, int j,
                         double gamma) {
    const double f = runs[j].fairness;
    if (gamma == 0 || f == 0) return f;
    const double g = static_cast<double>(jobs[j].gpus);
    return gamma == 1 ? f * g : f * std::pow(g, gamma);
}

// due_first: a job below its due (F_j < 1: it received less than its deserved GPU-time).
bool below_due(std::span<const RunState> runs, int j) { return runs[j].fairness < 1.0; }

}  // namespace

void rank_pending(JobOrder order, std::span<const Job> jobs, std::span<const RunState> runs,
                  const std::vector<int>& pending, LazyRanking& out, std::span<double> themis_rho,
                  Rng& rng, double gang_weight, bool due_first) {
    out.clear();
    auto key = [&](int j) -> RankKey {
        const RunState& r = runs[j];
        switch (order) {
            case JobOrder::Fairness:
                if (due_first)
                    return {below_due(runs, j) ? 0.0 : 1.0, weighted_fairness(jobs, runs, j, gang_weight),
                            submit(jobs, j)};
                return {weighted_fairness(jobs, runs, j, gang_weight), submit(jobs, j)};
            case JobOrder::DiscFairness: return {fclass(runs, j), submit(jobs, j)};
            case JobOrder::JobReward: return {fclass(runs, j), reward(jobs, j), submit(jobs, j)};
            case JobOrder::Themis:
                themis_rho[j] = finish_time_fairness(r, jobs[j].duration_s);
                return {-themis_rho[j]};
            case JobOrder::Fifo: return {submit(jobs, j)};
            case JobOrder::SmallestFirst: return {double(jobs[j].gpus), submit(jobs, j)};
            case JobOrder::Las: return {double(r.executed_s), submit(jobs, j)};
            case JobOrder::Srtf:
                return {double(jobs[j].duration_s - r.executed_s), submit(jobs, j)};
            case JobOrder::Random: return {};
        }
        return {};
    };
    if (order == JobOrder::Random) {
        thread_local std::vector<int> shuffled;
        shuffled = pending;
        for (std::size_t i = shuffled.size(); i > 1; --i)
            std::swap(shuffled[i - 1], shuffled[rng.below(i)]);
        for (std::size_t i = 0; i < shuffled.size(); ++i)
            out.add({0, 0, 0, static_cast<int>(i), shuffled[i]});
        return;
    }
    for (std::size_t i = 0; i < pending.size(); ++i) {
        RankKey k = key(pending[i]);
        k.pos = static_cast<int>(i);
        k.job = pending[i];
        out.add(k);
    }
}

void order_victims(JobOrder order, std::span<const Job> jobs, std::span<const RunState> runs,
                   std::vector<int>& delay, std::span<const double> themis_rho,
                   double gang_weight, bool due_first) {
    if (delay.empty()) return;
    auto key = [&](int j) -> RankKey {
        switch (order) {
            case JobOrder::Fairness:
                if (due_first)
                    return {below_due(runs, j) ? 1.0 : 0.0, -weighted_fairness(jobs, runs, j, gang_weight),
                            -submit(jobs, j)};
                return {-weighted_fairness(jobs, runs, j, gang_weight), -submit(jobs, j)};
            case JobOrder::DiscFairness: return {-fclass(runs, j), -submit(jobs, j)};
            case JobOrder::JobReward:
                return {-fclass(runs, j), -reward(jobs, j), -submit(jobs, j)};
            case JobOrder::Themis: return {themis_rho[j]};
            default: return {};
        }
    };
    switch (order) {
        case JobOrder::Fairness:
        case JobOrder::DiscFairness:
        case JobOrder::JobReward:
        case JobOrder::Themis: break;
        default: delay.clear(); return;
    }
    thread_local std::vector<RankKey> items;
    items.clear();
    for (std::size_t i = 0; i < delay.size(); ++i) {
        RankKey k = key(delay[i]);
        k.pos = static_cast<int>(i);
        k.job = delay[i];
        items.push_back(k);
    }
    std::sort(items.begin(), items.end());
    for (std::size_t i = 0; i < delay.size(); ++i) delay[i] = items[i].job;
}

}  // namespace astraeus
