// Helpers the built-in policies share (internal to policies/): ranking pending jobs, starting a
// gang with or without preempting running jobs. Thread safety: pure, given their arguments.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "astraeus/sched/gang_placement.hpp"
#include "astraeus/sched/job_order.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus::policy_detail {

/// Starts job j on the free GPUs of `cluster` if it fits (sticky for a renewal); appends the
/// Start action. Returns whether it started.
bool try_start(const RoundInput& in, ClusterState& cluster, const Placer& placer, int j,
               std::vector<Action>& actions);

/// Starts job j, which did not fit the free GPUs (try_start failed), by preempting running jobs:
/// `next_victim()` returns the next running job to give up, or -1 when no more may be taken (it
/// sees its own earlier answers as taken). Victims are given back one at a time until the gang
/// places; then
/// their Preempt actions and j's Start are appended and `taken` lists the victims. If the gang
/// cannot place, the cluster is restored, nothing is appended and `taken` lists the victims
/// that were tried (for the caller to undo its own bookkeeping).
template <class NextVictim>
bool start_preempting(const RoundInput& in, ClusterState& cluster, const Placer& placer, int j,
                      NextVictim&& next_victim, std::vector<int>& taken,
                      std::vector<Action>& actions) {
    taken.clear();
    const int g = in.jobs[j].gpus;
    for (int v = next_victim(); v >= 0; v = next_victim()) {
        cluster.give(in.runs[v].placement);
        taken.push_back(v);
        if (cluster.free_gpus() < g) continue;
        if (auto p = place_gang(placer, cluster, in.jobs[j])) {
            for (int victim : taken) actions.push_back({Action::Kind::Preempt, victim, {}});
            actions.push_back({Action::Kind::Start, j, std::move(*p)});
            return true;
        }
    }
    for (int victim : taken)
        for (const auto& part : in.runs[victim].placement.parts)
            cluster.take(part.machine, part.gpus);
    return false;
}

/// The running job of `running` not marked in `mark` whose lease began last (ties: the higher
/// job index): the one a preemption costs least. -1 if none.
int youngest_unmarked(const RoundInput& in, std::span<const int> running,
                      const std::vector<char>& mark);

/// Reusable buffers of start_reclaiming.
struct ReclaimScratch {
    std::vector<int> tentative;  ///< GPUs each tenant would hold after the victims so far
    std::vector<char> spent;     ///< tenants with nothing left to give this attempt
    std::vector<int> taken;
};

/// Starts job j of tenant u, on free GPUs if it fits, else by preempting, one at a time, the
/// youngest unmarked lease of the tenant that `excess(v, tentative_v)` scores highest (tenants
/// other than u; std::nullopt: v may not lose GPUs; ties: the lower index). Victims are marked
/// in `mark`. On success `used` becomes what each tenant holds afterwards, j's gang included;
/// on failure the victims tried are unmarked and `used` is unchanged. Returns whether j started.
template <class Excess>
bool start_reclaiming(const RoundInput& in, ClusterState& cluster, const Placer& placer, int j,
                      std::size_t u, Excess&& excess, std::vector<int>& used,
                      std::vector<char>& mark, ReclaimScratch& s, std::vector<Action>& actions) {
    const std::size_t n = used.size();
    s.tentative = used;
    s.spent.assign(n, 0);
    auto next_victim = [&]() -> int {
        while (true) {
            int best = -1;
            double best_score = 0;
            for (std::size_t v = 0; v < n; ++v) {
                if (v == u || s.spent[v]) continue;
                const std::optional<double> score = excess(v, s.tentative[v]);
                if (!score) continue;
                if (best < 0 || *score > best_score) {
                    best = static_cast<int>(v);
                    best_score = *score;
                }
            }
            if (best < 0) return -1;
            const int victim = youngest_unmarked(in, in.tenant_running[best], mark);
            if (victim < 0) {  // what it holds started in this round
                s.spent[best] = 1;
                continue;
            }
            mark[victim] = 1;
            s.tentative[best] -= in.jobs[victim].gpus;
            return victim;
        }
    };
    if (try_start(in, cluster, placer, j, actions) ||
        start_preempting(in, cluster, placer, j, next_victim, s.taken, actions)) {
        used = s.tentative;
        used[u] += in.jobs[j].gpus;
        return true;
    }
    for (int v : s.taken) mark[v] = 0;
    return false;
}


/// Pending jobs by (group, gang size), each bucket a min-heap on a rank key that does not change
/// while the job waits (RankKey, pos = job index: e.g. remaining work, attained service, pass,
/// submit time), kept across rounds so that a round costs what it starts, not the length of the
/// queue. Jobs that joined the pending lists since the last update are read from the tail of
/// in.pending_all (join order); jobs that left are dropped when they reach a bucket's top.
/// Cross-round state is a cache of the snapshot only: it never changes a decision.
class PendingIndex {
public:
    struct Bucket {
        int gpus;
        std::vector<std::pair<RankKey, std::uint64_t>> heap;  ///< (key, join sequence)
    };

    /// Adds the jobs that joined since the last call: `key(j)` their rank, `group(j)` < groups.
    template <class KeyFn, class GroupFn>
    void update(const RoundInput& in, std::size_t groups, KeyFn&& key, GroupFn&& group) {
        if (groups_.size() != groups) groups_.assign(groups, {});
        if (entries_ > 2 * in.pending_all.size() + 4096) {  // mostly stale: rebuild
            for (auto& g : groups_) g.clear();
            entries_ = 0;
            seen_ = 0;
        }
        std::size_t first = in.pending_all.size();
        while (first > 0 && in.pend_seq[in.pending_all[first - 1]] > seen_) --first;
        for (std::size_t k = first; k < in.pending_all.size(); ++k) {
            const int j = in.pending_all[k];
            push(group(j), in.jobs[j].gpus, key(j), in.pend_seq[j]);
        }
        if (!in.pending_all.empty()) seen_ = std::max(seen_, in.pend_seq[in.pending_all.back()]);
    }

    std::vector<Bucket>& buckets(std::size_t group) { return groups_[group]; }

    /// The job at the top of bucket b of `group` that still waits (dropping stale tops), or -1.
    int top(const RoundInput& in, std::size_t group, std::size_t b);
    const RankKey& top_key(std::size_t group, std::size_t b) const {
        return groups_[group][b].heap.front().first;
    }
    /// Removes the top of bucket b (its job has just started).
    void pop(std::size_t group, std::size_t b);

private:
    void push(std::size_t group, int gpus, RankKey key, std::uint64_t seq);

    std::vector<std::vector<Bucket>> groups_;
    std::uint64_t seen_ = 0;
    std::size_t entries_ = 0;
};

/// Starts pending jobs in key order from one group of `index` on the free GPUs, never preempting:
/// the next job is the best top among the buckets whose gang fits the free GPUs; a size that
/// does not place is not tried again this round (a later gang of that size would not place
/// either, the free GPUs only shrink). Stops when no bucket fits.
void start_in_key_order(const RoundInput& in, ClusterState& cluster, const Placer& placer,
                        PendingIndex& index, std::size_t group, std::vector<char>& failed,
                        std::vector<Action>& actions);

/// Whole seconds of work for job j to raise its attained service g * E from `attained` to at
/// least `target` GPU-seconds.
inline Seconds seconds_to_reach(GpuSeconds attained, GpuSeconds target, int gpus) {
    return (target - attained + gpus - 1) / gpus;
}

}  // namespace astraeus::policy_detail
