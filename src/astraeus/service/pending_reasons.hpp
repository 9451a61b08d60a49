// The pending reasons of one round (RoundAdapter::pending_reason), computed once per kind of
// pending run instead of once per run: a reason depends on the run only through its tenant, its
// gang, whether it starves and whether it is the gang the round keeps GPUs for
// (RoundAdapter::ReasonKind); the rest is the pool's state, the same for every run of the round.
// One reason costs O(machines + running jobs), so a round over a backlog of P runs of K kinds
// costs O(K x (machines + running)) for the reasons, not O(P x (machines + running)) (issue 18).
// Valid while the adapter does not change: make one per round, after the round.
// Internal to the service. Thread safety: none (used under the service's lock).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "astraeus/service/round_adapter.hpp"

namespace astraeus::service {

class PendingReasons {
public:
    /// `reason(j, workers, gpus_per_worker)`: the reason as RoundAdapter::pending_reason gives it
    /// for pending job j of `adapter`, with the service's names (the callbacks of the round).
    using Compute = std::function<std::string(int j, int workers, int gpus_per_worker)>;
    PendingReasons(const RoundAdapter& adapter, Compute reason)
        : adapter_(adapter), reason_(std::move(reason)) {}

    /// Pending job j's reason: computed for the first job of its kind, then the same string.
    const std::string& of(int j, int workers, int gpus_per_worker);
    /// Reasons computed so far (one per kind asked).
    std::size_t computed() const { return memo_.size(); }

private:
    const RoundAdapter& adapter_;
    Compute reason_;
    std::map<std::tuple<RoundAdapter::ReasonKind, int, int>, std::string> memo_;
};

}  // namespace astraeus::service
