// The simulated executor: machines and workers advancing on the service's clock, so that the
// whole service runs and is tested without GPUs. A launched run starts up for `startup_s`, then
// runs with its GPUs busy at `utilization_pct`, until its work (`duration_s`) is done (Finished)
// or its time limit is reached (TimeLimit), unless it fails first: failures come at a constant
// rate per running hour (exponential times, drawn from a generator seeded by (seed, run,
// attempt), so that a restart of the service draws the same times). A stop winds down for
// `stop_s`; a failed run holds its GPUs for `failure_hold_s` before they are released.
// Machines are lost at `machine_failures_per_day` (exponential times from (seed, machine, k)) and
// come back after `machine_repair_s`; their timeline starts again at each start of the service.
// Thread safety: not thread-safe.
#pragma once
#include <map>

#include "astraeus/service/executor.hpp"

namespace astraeus::service {

struct SimExecutorConfig {
    Seconds startup_s = 60;
    Seconds stop_s = 30;
    Seconds failure_hold_s = 60;
    double utilization_pct = 90;
    double failures_per_hour = 0;  ///< per running run
    double machine_failures_per_day = 0;  ///< per machine (0: machines are never lost)
    Seconds machine_repair_s = 3600;      ///< a lost machine is back after this long
    std::uint64_t seed = 1;
};

class SimExecutor final : public Executor {
public:
    explicit SimExecutor(SimExecutorConfig c) : c_(c) {}
    void launch(Seconds t, const ExecRun& r) override;
    void stop(Seconds t, std::int64_t run) override;
    void forget(std::int64_t run) override { runs_.erase(run); }
    void restore(const ExecRun& r, ExecPhase phase, Seconds since_s, Seconds executed_s) override;
    Seconds next_event_s() const override;
    bool pop_due(Seconds now, ExecEvent& out) override;
    Seconds executed_s(std::int64_t run, Seconds t) const override;
    void set_machines(const std::vector<std::int64_t>& ids, Seconds t) override;

private:
    struct State {
        ExecRun r;
        ExecPhase phase = ExecPhase::Starting;
        Seconds since = 0;
        Seconds executed = 0;  ///< before `since` (Running)
        bool limit_sent = false;
    };
    /// The next event of one run, and its kind.
    std::pair<Seconds, ExecEvent::Kind> next_of(const State& s) const;
    Seconds failure_after(const State& s) const;

    struct MachineState {
        bool up = true;
        Seconds next = 0;   ///< its next loss (up) or recovery (down)
        std::uint64_t losses = 0;
    };
    Seconds loss_after(std::int64_t machine, std::uint64_t k) const;

    SimExecutorConfig c_;
    std::map<std::int64_t, State> runs_;
    std::map<std::int64_t, MachineState> machines_;
};

}  // namespace astraeus::service
