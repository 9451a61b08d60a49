// The lifecycle of one worker of a run, as the goodput count sees it (spec/goodput.md, table of
// "The count"), and the category each state counts in. Thread safety: plain values.
//
//            submit                place                start
//   (new) ──────────► Waiting ───────────► Placed ───────────► Running ◄──┐ progress again
//                     (first)   attempt+1  (Starting on          │  │      │
//                        ▲                  attempt 1,           │  └─────► stalled (no progress
//                        │                  Restart later)       │          for the stall timeout;
//                        │                     │                 │          counted from when
//                        │ release             │ fail / lost     │          progress stopped)
//   Waiting again ◄──────┴─── Failed ◄─────────┴─────────────────┤ fail / machine lost
//   (after stall,             (holding)                          │
//    failure or               ▲                                  │ stop(owner | stall | preemption)
//    preemption)              │ fail                             ▼
//        ▲                    └────────────────────────────── Stopping (holding; owner = productive)
//        └──────────────────────────── release ────────────────┘
//   end: from any state; a last count in the state it ended from, then Ended.
//
// Category at a count: Waiting(first) -> waiting; Waiting(after X) -> X, not held; Placed ->
// starting (attempt 1) or restart; Running -> stalled if stalled, else productive when the mean
// GPU utilization over the minute is >= the busy threshold (5 %), else idle; Stopping(owner) ->
// productive; Stopping(stall) -> stalled; Stopping(preemption) -> preemption; Failed -> failure.
#pragma once
#include <cstdint>

#include "astraeus/goodput/category.hpp"

namespace astraeus::goodput {

enum class Phase : std::uint8_t { Waiting, Placed, Running, Stopping, Failed, Ended };

/// Why a worker stops or waits again. `First` only for the wait before the first placement.
enum class Cause : std::uint8_t { First, Owner, Stall, Failure, Preemption };

struct WorkerStatus {
    Phase phase = Phase::Waiting;
    Cause cause = Cause::First;  ///< Waiting: why it waits; Stopping: why it stops
    int attempt = 0;             ///< placements so far (1 on the first)
    bool stalled = false;        ///< Running: no progress for the stall timeout
};

/// Whether the worker holds GPUs in this state.
constexpr bool holds_gpus(const WorkerStatus& s) {
    return s.phase == Phase::Placed || s.phase == Phase::Running || s.phase == Phase::Stopping ||
           s.phase == Phase::Failed;
}

/// The category of a count in state `s`; `busy` = the minute's mean utilization reached the
/// busy threshold (read only while Running and not stalled). Requires s.phase != Ended.
constexpr Category categorize(const WorkerStatus& s, bool busy) {
    switch (s.phase) {
        case Phase::Waiting:
            switch (s.cause) {
                case Cause::Stall: return Category::Stalled;
                case Cause::Failure: return Category::Failure;
                case Cause::Preemption: return Category::Preemption;
                default: return Category::Waiting;
            }
        case Phase::Placed: return s.attempt <= 1 ? Category::Starting : Category::Restart;
        case Phase::Running:
            if (s.stalled) return Category::Stalled;
            return busy ? Category::Productive : Category::Idle;
        case Phase::Stopping:
            switch (s.cause) {
                case Cause::Stall: return Category::Stalled;
                case Cause::Preemption: return Category::Preemption;
                case Cause::Failure: return Category::Failure;
                default: return Category::Productive;
            }
        case Phase::Failed:
        case Phase::Ended: return Category::Failure;
    }
    return Category::Failure;
}

}  // namespace astraeus::goodput
