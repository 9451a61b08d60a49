// Tiresias 2D-LAS (Gu, Chowdhury, Shin, Zhu, Jeon, Qian, Liu, Guo, "Tiresias: A GPU Cluster
// Manager for Distributed Deep Learning", NSDI'19, sections 3-4; spec/astraea.md section 8):
// discretized two-dimensional least-attained-service.
//
// A job's attained service is a_j = g_j * E_j GPU-seconds (E_j: work done). Queues are split at
// thresholds (params.tiresias_thresholds_gpu_s, default one threshold at 3250 GPU-seconds, two
// queues): queue k holds the jobs with theta_k <= a_j < theta_{k+1}. Lower queues first, FIFO
// (submit order) inside a queue, a job that does not fit is skipped (and, the promotion knob
// off, so is the rest of its gang size for that round: they rank after it and would fail
// too, unless a preemption freed more GPUs than it used). A waiting job from a higher
// queue preempts running jobs of strictly lower queues (the lowest queue first, its youngest
// lease first) when the free GPUs are not enough. Demotion happens when a running job crosses a
// threshold: its lease is cut to end right there (a checkpoint), so the round that follows sees
// it in its new queue and gives its GPUs to a waiting job of a higher queue, if any. Starvation
// knob (params.tiresias_promote_knob = P > 0): a job that has waited >= P x the length of its
// last run ranks in the top queue (a wake-up runs a round at that moment) and stays there for
// the run it then starts (one full lease, not preempted by top-queue jobs), then returns to the
// queue of its attained service. A promotion changes the order, not the right to preempt: a
// job preempts only jobs below the queue of its own service.
//
// Deviations: the paper's simulator resets the attained service of a promoted job (it stays on
// top until it crosses the first threshold again) and measures its wait against the service
// since the last promotion; here promotion lasts one run, measured against its last run (the
// spec's form). Placement is the common placer (no
// skew-aware consolidation, no profiling). Preemption between two events loses the victim's
// work since its lease began (the common preemption cost rule, docs/policies.md); crossings
// and lease ends cost only the usual checkpoint. Thread safety: see Policy.
#pragma once
#include <vector>

#include "astraeus/policies/common.hpp"
#include "astraeus/sched/job_order.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus {

class TiresiasPolicy final : public Policy {
public:
    explicit TiresiasPolicy(const AstraeaOptions& opt) : opt_(opt) {}
    std::string_view name() const override { return "tiresias"; }
    Seconds lease_s(const RoundInput& in, int j, Seconds restore_s) const override;
    Seconds wake_after_s(const RoundInput& in, int j) const override;
    void round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
               std::vector<Action>& actions) override;

    /// The queue of a job with attained service `attained` GPU-seconds (0 = top).
    int queue_of(GpuSeconds attained) const;

private:
    GpuSeconds attained(const RoundInput& in, int j) const;
    /// Seconds a job must wait after its last run to be promoted; kNoWake when it cannot be.
    Seconds promote_after(const RunState& r) const;
    /// The queue a pending job ranks in now (0 when promoted).
    int pending_queue(const RoundInput& in, int j) const;
    /// The queue of a running job (0 for the run a promotion started).
    int running_queue(const RoundInput& in, int j) const;

    AstraeaOptions opt_;
    LazyRanking ranked_;                  ///< with promotion: every waiting job, ranked
    policy_detail::PendingIndex index_;   ///< without: the persistent index
    std::vector<char> failed_;
    std::vector<int> victims_;  ///< running jobs, least priority first (built when needed)
    bool victims_built_ = false;
    std::vector<char> mark_;
    std::vector<int> taken_;
};

}  // namespace astraeus
