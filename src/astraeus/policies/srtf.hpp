// SRTF: shortest remaining time first with an oracle (the JCT lower-bound reference of spec/
// astraea.md section 8; as a GPU-cluster baseline in e.g. Gu et al., Tiresias, NSDI'19, and the
// `shortest` schedule of its simulator). Pending jobs run in order of remaining work d_j - E_j
// (d_j from the trace: an oracle no real scheduler has), ties by submit; a gang that does not fit
// is skipped. Preemptive at lease ends only: a job whose lease ends keeps its GPUs unless a job
// with less remaining work is waiting for them (a free preemption: it just checkpointed).
// Deviations: no preemption between lease ends (a shorter arrival waits for the next lease end
// or free GPUs), tenants ignored. Thread safety: see Policy.
#pragma once
#include "astraeus/policies/common.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus {

class SrtfPolicy final : public Policy {
public:
    explicit SrtfPolicy(const AstraeaOptions& opt) : opt_(opt) {}
    std::string_view name() const override { return "srtf"; }
    bool predicts_run_times() const override { return true; }  ///< d_j - E_j / rho
    Seconds lease_s(const RoundInput&, int, Seconds) const override { return opt_.lease_s; }
    void round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
               std::vector<Action>& actions) override;

private:
    AstraeaOptions opt_;
    policy_detail::PendingIndex index_;
    std::vector<char> failed_;
};

}  // namespace astraeus
