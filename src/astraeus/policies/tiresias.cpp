#include "astraeus/policies/tiresias.hpp"

#include <algorithm>
#include <cmath>

#include "astraeus/policies/common.hpp"

namespace astraeus {

GpuSeconds TiresiasPolicy::attained(const RoundInput& in, int j) const {
    return GpuSeconds{in.jobs[j].gpus} * in.runs[j].executed_s;
}

int TiresiasPolicy::queue_of(GpuSeconds a) const {
    const auto& th = opt_.params.tiresias_thresholds_gpu_s;
    return static_cast<int>(std::upper_bound(th.begin(), th.end(), a) - th.begin());
}

Seconds TiresiasPolicy::lease_s(const RoundInput& in, int j, Seconds restore_s) const {
    // Cut the lease where the job's attained service crosses its queue's upper threshold, so
    // that the job checkpoints there and the next round sees it demoted.
    const auto& th = opt_.params.tiresias_thresholds_gpu_s;
    const GpuSeconds a = attained(in, j);
    const auto next = std::upper_bound(th.begin(), th.end(), a);
    if (next == th.end() || (pending_queue(in, j) == 0 && next != th.begin()))
        return opt_.lease_s;  // on top by promotion: a full lease, then back to its queue
    const Seconds work = policy_detail::seconds_to_reach(a, *next, in.jobs[j].gpus);
    return std::min(opt_.lease_s, restore_s + work + opt_.checkpoint_s);
}

Seconds TiresiasPolicy::promote_after(const RunState& r) const {
    const double p = opt_.params.tiresias_promote_knob;
    if (!(p > 0) || r.last_run_s <= 0) return kNoWake;
    return static_cast<Seconds>(std::ceil(p * static_cast<double>(r.last_run_s)));
}

Seconds TiresiasPolicy::wake_after_s(const RoundInput& in, int j) const {
    if (queue_of(attained(in, j)) == 0) return kNoWake;  // already on top
    return promote_after(in.runs[j]);
}

int TiresiasPolicy::pending_queue(const RoundInput& in, int j) const {
    const Seconds after = promote_after(in.runs[j]);
    if (after != kNoWake && in.now - in.wait_begin_s[j] >= after) return 0;
    return queue_of(attained(in, j));
}

int TiresiasPolicy::running_queue(const RoundInput& in, int j) const {
    // While it runs, its wait and last run are still those from before this start.
    const Seconds after = promote_after(in.runs[j]);
    if (after != kNoWake && in.lease_start_s[j] - in.wait_begin_s[j] >= after) return 0;
    return queue_of(attained(in, j));
}

void TiresiasPolicy::round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng&,
                           std::vector<Action>& actions) {
    actions.clear();
    mark_.resize(in.jobs.size(), 0);
    // Candidates in (queue, submit) order. Without promotion a waiting job's queue does not
    // change, so they come from the persistent index (a gang size that fails is not tried again
    // this round); with promotion the queue depends on the time waited: rank them all.
    const bool promotes = opt_.params.tiresias_promote_knob > 0;
    std::size_t next_ranked = 0, bucket = 0;
    if (promotes) {
        ranked_.clear();
        for (int j : in.pending_all)
            ranked_.add({double(pending_queue(in, j)), double(in.jobs[j].submit_s), 0, j, j});
    } else {
        index_.update(
            in, 1,
            [&](int j) {
                return RankKey{double(queue_of(attained(in, j))), double(in.jobs[j].submit_s), 0,
                               j, j};
            },
            [](int) { return 0; });
        failed_.assign(index_.buckets(0).size(), 0);
    }
    auto next_candidate = [&]() -> int {
        if (promotes) return next_ranked < ranked_.size() ? ranked_[next_ranked++] : -1;
        const auto& buckets = index_.buckets(0);
        bucket = buckets.size();
        for (std::size_t b = 0; b < buckets.size(); ++b) {
            if (failed_[b] || index_.top(in, 0, b) < 0) continue;
            if (bucket == buckets.size() || index_.top_key(0, b) < index_.top_key(0, bucket))
                bucket = b;
        }
        return bucket == buckets.size() ? -1 : index_.top_key(0, bucket).job;
    };
    auto started = [&] {
        if (!promotes) index_.pop(0, bucket);
    };
    auto failed = [&] {
        if (!promotes) failed_[bucket] = 1;
    };
    // The least-priority running queue (computed the first time a job needs a preemption): a
    // waiting job of a better queue may preempt jobs of worse ones.
    constexpr int kUnknown = -2;
    int worst_running = kUnknown;
    victims_built_ = false;
    std::size_t next_victim_pos = 0;

    for (int j = next_candidate(); j >= 0; j = next_candidate()) {
        // It preempts only below the queue of its service: a promotion moves it up the order,
        // it gives no right to preempt (else each victim, its last run cut short, would be
        // promoted in turn and preempt another).
        const int q = queue_of(attained(in, j));
        if (policy_detail::try_start(in, cluster, placer, j, actions)) {
            started();
            continue;
        }
        if (worst_running == kUnknown) {
            worst_running = -1;
            for (int r : in.running_all)
                worst_running = std::max(worst_running, running_queue(in, r));
        }
        if (q >= worst_running) {  // nothing it may preempt
            if (cluster.free_gpus() == 0) break;  // nor may any job ranked after it
            failed();
            continue;
        }
        if (!victims_built_) {
            // Least priority first: the highest queue, then the youngest lease, then the
            // highest job index.
            victims_.assign(in.running_all.begin(), in.running_all.end());
            std::sort(victims_.begin(), victims_.end(), [&](int a, int b) {
                const int qa = running_queue(in, a), qb = running_queue(in, b);
                if (qa != qb) return qa > qb;
                if (in.lease_start_s[a] != in.lease_start_s[b])
                    return in.lease_start_s[a] > in.lease_start_s[b];
                return a > b;
            });
            victims_built_ = true;
        }
        std::size_t pos = next_victim_pos;
        auto next_victim = [&]() -> int {
            while (pos < victims_.size() && mark_[victims_[pos]]) ++pos;
            if (pos == victims_.size()) return -1;
            const int v = victims_[pos];
            if (running_queue(in, v) <= q) return -1;  // only strictly lower queues
            mark_[v] = 1;
            return v;
        };
        if (policy_detail::start_preempting(in, cluster, placer, j, next_victim, taken_,
                                            actions)) {
            next_victim_pos = pos;
            started();
        } else {
            for (int v : taken_) mark_[v] = 0;
            failed();
        }
    }
    for (const Action& a : actions) mark_[a.job] = 0;
}

}  // namespace astraeus
