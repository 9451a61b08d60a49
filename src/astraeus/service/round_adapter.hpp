// The service side of a scheduling round: keeps one pool's live runs as the core scheduler sees
// jobs (sched/round.hpp RoundInput: jobs, run states, tenant lists, lease clocks, LTGF ledgers)
// and runs the pool's Policy (ASTRAEA by default, any registry policy) over them on the real
// clock, as src/astraeus/sim/event_engine.cpp does over a trace. Job indexes are stable for the
// life of the adapter (never reused), so that policies keeping cross-round caches stay right.
// Simplifications against the simulator: the tenant LTGF window starts empty at each start of
// the service (it is not stored), and executed work is the time held while running.
// Thread safety: not thread-safe (the service serialises its calls).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "astraeus/accounting/tenant_ledger.hpp"
#include "astraeus/base/rng.hpp"
#include "astraeus/model/cluster.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus::service {

/// A decision of a round for the service to apply, in order.
struct Decision {
    enum class Kind { Start, Preempt };
    Kind kind;
    int job;
    Placement placement;  ///< Start: machine indexes of the pool
    bool renewal = false; ///< Start: re-selected at its lease end on the GPUs it held
    Seconds lease_end_s = kNoLeaseEnd;  ///< Start: when its lease ends
};

class RoundAdapter {
public:
    /// A pool of `spec` machines scheduled by `policy` (options from the policy registry).
    static Result<std::unique_ptr<RoundAdapter>> make(ClusterSpec spec, AstraeaOptions options,
                                                      const std::string& placer);

    /// The tenants (workspaces) with their weights; appended ones get new indexes, existing
    /// ones keep theirs (matched by name). Quotas: the pool's GPUs split by weight (largest
    /// remainder).
    void set_tenants(const std::vector<Tenant>& tenants);
    int tenant_index(const std::string& name) const;

    /// A new job of tenant u (a gang of `gpus`), pending from `submit_s`; its index, or an
    /// error when the pool can never run it (the message is the reason).
    Result<int> submit(int u, int gpus, Seconds submit_s, Seconds duration_s);
    /// A job already holding `p` since `lease_start_s` (restored after a restart).
    void restore_running(int j, const Placement& p, Seconds lease_start_s, Seconds executed_s);

    /// Moves the clock (ledgers and deserved service) to t (never backwards).
    void advance(Seconds t);
    /// Runs a round at `now` and applies it to the adapter's own lists; the decisions.
    std::vector<Decision> round(Seconds now);

    /// Job j's lease ended at t: it checkpointed and waits (sticky: its own GPUs if re-selected
    /// in the round that follows).
    void lease_end(int j, Seconds t);
    /// Job j gave its GPUs back and waits again (after a failure or a preemption's wind-down).
    void requeue(int j, Seconds t);
    /// Job j gives its GPUs back (if held) and leaves (finished, stopped, failed for good).
    void remove(int j, Seconds t);

    /// Machine m (pool index) is lost (up = false): its free GPUs, and those its jobs give back
    /// while it is lost, are withheld from the rounds until it is back (up = true).
    void set_machine_up(int m, bool up);
    /// Appends a machine of `gpus` GPUs (a node agent registered it), up; its pool index. The
    /// tenants' quotas are split again over the larger pool.
    int add_machine(int gpus);
    bool machine_up(int m) const { return !down_[m]; }

    /// The lease length the policy gives job j starting now (kNoLeaseEnd: none).
    Seconds lease_s(int j);
    /// The next time a pending job's rank rises by waiting (a round is due then), or kNoWake.
    Seconds next_wake_s();
    /// Why pending job j waits, after a round: "waiting for quota" or "no placement for W x G GPUs".
    std::string pending_reason(int j, int workers, int gpus_per_worker) const;

    bool is_pending(int j) const { return runs_[j].status == RunStatus::Pending; }
    bool is_running(int j) const { return runs_[j].status == RunStatus::Running; }
    int free_gpus() const { return cluster_.free_gpus(); }
    const ClusterSpec& spec() const { return spec_; }
    const std::string& policy_name() const { return opt_.policy; }

private:
    RoundAdapter(ClusterSpec spec, AstraeaOptions options, std::unique_ptr<Policy> policy,
                 std::unique_ptr<Placer> placer);
    void to_pending(int j, Seconds t);
    void leave_pending(int j);
    void to_running(int j, Placement p, Seconds t);
    /// If j is running at t: its work up to t, the round input, off the running lists; true then.
    bool stop_running(int j, Seconds t);
    void leave_running(int j);
    void fill_input(Seconds now);
    void prepare_tenant(std::size_t u, TenantQueue& q);
    void refresh_fairness_of(int j, Seconds executed);
    Seconds executed(int j, Seconds now) const;

    ClusterSpec spec_;
    AstraeaOptions opt_;
    std::unique_ptr<Policy> policy_;
    std::unique_ptr<Placer> placer_;
    bool astraea_;
    ClusterState cluster_;
    ClusterState scratch_;
    Rng rng_;

    std::vector<Tenant> tenants_;
    std::vector<int> share_order_, quotas_, used_, active_, demand_;
    std::vector<TenantLedger> ledgers_;
    std::vector<std::vector<int>> t_pending_, t_running_, starving_;

    std::vector<Job> jobs_;
    std::vector<RunState> runs_;
    std::vector<std::uint64_t> pend_seq_;
    std::uint64_t next_seq_ = 0;
    std::vector<Seconds> lease_start_, wait_begin_, e0_;
    std::vector<double> themis_rho_;
    std::vector<int> pending_, running_;
    std::vector<char> down_;      ///< per machine: lost
    std::vector<int> withheld_;   ///< per machine: GPUs withheld while lost
    PolicyLedger ledger_;
    Seconds clock_s_ = -1;
    Seconds now_ = 0;

    RoundInput in_;
    std::vector<Action> actions_;
};

}  // namespace astraeus::service
