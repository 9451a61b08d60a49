// Gandiva-fair (Chaudhary, Ramjee, Sivathanu, Kwatra, Viswanatha, "Balancing Efficiency and
// Fairness in Heterogeneous GPU Clusters for Deep Learning", EuroSys'20, sections 3-4; spec/
// astraea.md section 8): proportional share between tenants by tickets, gang-aware stride
// scheduling of the jobs.
//
// Each tenant holds tickets in proportion to its weight s_u, split evenly over its active
// (pending or running) jobs: tickets_j = s_u / |A_u|. Each job carries a pass (in the shell's
// policy ledger); each time it holds its gang for a quantum its pass advances by its stride,
// gang size / tickets: pass_j += g_j * held_s / tickets_j (held_s = the seconds it held the GPUs,
// a full quantum = params.gandiva_quantum_s, default the common lease term). A new job starts at
// the global pass (which advances by g * held_s / sum of the active tenants' weights, the pass
// of a job that always ran), so it neither jumps the queue nor waits for its elders' debts.
// Every round (quantum ends = lease ends, arrivals, completions) the pending jobs run in pass
// order, lowest first, a gang that does not fit being skipped (gang-aware: no GPU is held for
// it). Descheduling happens only at quantum ends (a free preemption: the job just checkpointed).
// Deviations: no heterogeneous-GPU trading, no migration or packing, one quantum = one lease
// (with the common checkpoint and restore costs); tickets are re-read at each quantum end.
// Thread safety: see Policy.
#pragma once
#include "astraeus/policies/common.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus {

class GandivaFairPolicy final : public Policy {
public:
    explicit GandivaFairPolicy(const AstraeaOptions& opt) : opt_(opt) {}
    std::string_view name() const override { return "gandiva-fair"; }
    Seconds lease_s(const RoundInput&, int, Seconds) const override { return quantum_s(); }
    void on_admit(const RoundInput& in, int j, PolicyLedger& ledger) const override;
    void on_release(const RoundInput& in, int j, Seconds held_s,
                    PolicyLedger& ledger) const override;
    void round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
               std::vector<Action>& actions) override;

    Seconds quantum_s() const {
        return opt_.params.gandiva_quantum_s > 0 ? opt_.params.gandiva_quantum_s : opt_.lease_s;
    }

private:
    AstraeaOptions opt_;
    policy_detail::PendingIndex index_;
    std::vector<char> failed_;
};

}  // namespace astraeus
