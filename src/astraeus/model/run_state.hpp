// The life of one job in a run of the scheduler: its status, clocks and counters, and its job
// ledger (LTGF: deserved and utilized GPU-time, spec/astraea.md section 2). Written only by the
// shell applying events and by accounting; read by policies. Thread safety: not thread-safe.
#pragma once
#include <cstdint>

#include "astraeus/base/time.hpp"
#include "astraeus/model/cluster.hpp"

namespace astraeus {

enum class RunStatus : std::uint8_t {
    Future,    ///< not yet submitted
    Pending,   ///< submitted, waiting for GPUs (new, checkpointed at lease end, or preempted)
    Running,   ///< holds its GPUs under a lease
    Done,      ///< finished
    Dropped,   ///< refused at admission (compat quirk 2: larger than its tenant's quota)
};

struct RunState {
    RunStatus status = RunStatus::Future;
    // clocks (seconds)
    Seconds last_check_s = 0;       ///< when the clocks below were last advanced
    Seconds executed_s = 0;         ///< E_j: work done so far
    Seconds lease_run_s = 0;        ///< work done in the current (or last) lease
    Seconds waiting_since_start_s = 0;  ///< pending since the last start (starvation clock)
    Seconds total_pending_s = 0;
    Seconds longest_wait_s = 0;     ///< longest stretch pending: before its first start, or
                                    ///< from a lease end, preemption or failure to its restart
    Seconds life_s = 0;             ///< pending + running since submit
    Seconds first_seen_s = -1;      ///< when the scheduler first saw the job
    Seconds first_start_s = -1;
    Seconds end_s = -1;
    Seconds last_checkpoint_s = -1;
    Seconds last_run_s = 0;         ///< default mode: how long it held GPUs in its last run (a
                                    ///< lease, a preempted lease or its final run)
    // counters
    int lease_expiries = 0;
    int checkpoints = 0;
    int resumes = 0;
    int preemptions = 0;
    bool resume_pending = false;    ///< started again after a checkpoint: a resume, counted at
                                    ///< its next lease end or completion (as the reference does)
    // job ledger (LTGF)
    double deserved_gpu_s = 0;      ///< D_j
    double utilized_gpu_s = 0;      ///< U_j
    double fairness = 0;            ///< F_j = U_j / D_j (0 while D_j = 0)
    Placement placement;            ///< GPUs held while running
    Placement last_placement;       ///< GPUs held until the last release
};

}  // namespace astraeus
