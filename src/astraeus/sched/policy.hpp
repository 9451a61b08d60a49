// Policy: the extension point of the scheduler (DESIGN.md "a Policy orders what should run, a
// Placer chooses GPUs for a whole gang or nothing, the Scheduler owns rounds and leases").
// A policy is a round function over the RoundInput snapshot returning ordered actions (Start,
// Preempt any running job), plus the few things the shell asks it: how long a lease it gives a
// job that starts, when a waiting job's rank changes by waiting alone (an extra round then),
// whether a job is admitted at all, and its cross-round ledger updates. Built-ins are listed in
// policies/registry.hpp. Preemption cost (docs/policies.md): a job whose lease ends has just
// checkpointed, so not renewing it is free; a Preempt action stops a job mid-lease and loses the
// work since its last checkpoint (the start of its lease), for every policy alike.
// Thread safety: one simulation per Policy object (a policy may keep scratch buffers).
#pragma once
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "astraeus/base/rng.hpp"
#include "astraeus/sched/placer.hpp"
#include "astraeus/sched/round.hpp"

namespace astraeus {

/// A lease that never ends: the job holds its GPUs until it completes (non-preemptive policies).
inline constexpr Seconds kNoLeaseEnd = std::numeric_limits<Seconds>::max() / 4;
/// No wake-up: waiting alone never changes the job's rank.
inline constexpr Seconds kNoWake = std::numeric_limits<Seconds>::max();

class Policy {
public:
    virtual ~Policy() = default;
    virtual std::string_view name() const = 0;
    /// A copy with the same cross-round state (for a forecast run forward on a copy of the
    /// live state); nullptr: the policy keeps no such state and a new one decides the same.
    virtual std::unique_ptr<Policy> clone() const { return nullptr; }

    /// true: the policy predicts run times and reads jobs' duration_s (d_j) in its rounds (srtf,
    /// themis, ASTRAEA with the srtf/themis order or --backfill). Otherwise it must not read
    /// them: a scheduler does not know how long a job runs (the engine hands every policy the
    /// real jobs; tests/unit/policies_test.cpp checks ASTRAEA's round against two sets of run
    /// times, and every policy's outputs against the engine that blanked them).
    virtual bool predicts_run_times() const { return false; }
    /// true: the shell fills ASTRAEA's lists (starving and delay jobs per tenant, tenant
    /// indexes, F_j of pending jobs refreshed) and renews leases in ASTRAEA's job order.
    virtual bool astraea_lists() const { return false; }
    /// true: when a wake-up (below) fires the shell runs a round even if no GPU is free (the
    /// job whose rank rose may preempt).
    virtual bool round_on_wake() const { return true; }
    /// false: job j is refused at admission (e.g. a gang larger than a static quota).
    virtual bool admits(const RoundInput& in, int j) const {
        (void)in, (void)j;
        return true;
    }
    /// Seconds job j may hold its GPUs when it starts at in.now, `restore_s` of which restore
    /// its checkpoint; kNoLeaseEnd: until it completes. Must exceed restore + checkpoint costs.
    virtual Seconds lease_s(const RoundInput& in, int j, Seconds restore_s) const = 0;
    /// Seconds after pending job j began to wait at which its rank rises by waiting alone (the
    /// shell runs a round then); kNoWake for never.
    virtual Seconds wake_after_s(const RoundInput& in, int j) const {
        (void)in, (void)j;
        return kNoWake;
    }
    /// Ledger hooks: job j was admitted; job j released its GPUs after holding them `held_s`
    /// seconds (lease end, preemption or completion; called before it leaves the running lists).
    virtual void on_admit(const RoundInput& in, int j, PolicyLedger& ledger) const {
        (void)in, (void)j, (void)ledger;
    }
    virtual void on_release(const RoundInput& in, int j, Seconds held_s,
                            PolicyLedger& ledger) const {
        (void)in, (void)j, (void)held_s, (void)ledger;
    }
    /// One round: `cluster` is a scratch copy of the free GPUs that the round changes as it
    /// goes; `actions` (cleared first) receives the decisions in the order they happened.
    /// Preempt only jobs in in.running_all (each at most once), before the Start that needs
    /// their GPUs.
    virtual void round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
                       std::vector<Action>& actions) = 0;
};

}  // namespace astraeus
