// The executor of a follower's read-only snapshot (Service::open_snapshot): it runs nothing and
// reports nothing, so that a snapshot can never launch, stop or kill a worker (the leader's
// executor does). Thread safety: stateless.
#pragma once
#include "astraeus/service/executor.hpp"

namespace astraeus::service {

class SnapshotExecutor final : public Executor {
public:
    void launch(Seconds, const ExecRun&) override {}
    void stop(Seconds, std::int64_t) override {}
    void forget(std::int64_t) override {}
    void restore(const ExecRun&, ExecPhase, Seconds, Seconds) override {}
    Seconds next_event_s() const override { return kNever; }
    bool pop_due(Seconds, ExecEvent&) override { return false; }
    Seconds executed_s(std::int64_t, Seconds) const override { return 0; }
};

}  // namespace astraeus::service
