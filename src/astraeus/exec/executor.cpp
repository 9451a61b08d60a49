#include "astraeus/exec/executor.hpp"

namespace astraeus::exec {

const char* to_string(ExecEvent::Kind k) {
    using K = ExecEvent::Kind;
    switch (k) {
        case K::Started: return "started";
        case K::Finished: return "finished";
        case K::TimeLimit: return "time_limit";
        case K::StopDone: return "stop_done";
        case K::Failed: return "failed";
        case K::Released: return "released";
        case K::MachineLost: return "machine_lost";
        case K::MachineBack: return "machine_back";
        case K::WorkerStarted: return "worker_started";
        case K::Progress: return "progress";
        case K::WorkerExited: return "worker_exited";
        case K::Utilization: return "utilization";
        case K::Cancelled: return "cancelled";
        case K::Held: return "held";
        case K::Unheld: return "unheld";
        case K::Foreign: return "foreign";
        case K::Preempted: return "preempted";
        case K::Withdrawn: return "withdrawn";
    }
    return "unknown";
}

}  // namespace astraeus::exec
