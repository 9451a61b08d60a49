// Helpers the built-in policies share (internal to policies/): ranking pending jobs, starting a
// gang with or without preempting running jobs. Thread safety: pure, given their arguments.
#pragma once
#include <span>
#include <vector>

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
        if (auto p = placer.place(cluster, g)) {
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

/// Whole seconds of work for job j to raise its attained service g * E from `attained` to at
/// least `target` GPU-seconds.
inline Seconds seconds_to_reach(GpuSeconds attained, GpuSeconds target, int gpus) {
    return (target - attained + gpus - 1) / gpus;
}

}  // namespace astraeus::policy_detail
