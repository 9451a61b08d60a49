// The Slurm executor's side of administrators' requeues and holds that its main poll
// (slurm_executor.cpp) does not cover, and the run's current-attempt file (docs/slurm.md,
// "Administrators win" and "A stale rank after a node crash"). Split from slurm_executor.cpp.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>

#include <unistd.h>

#include "astraeus/exec/sandbox/attempt_guard.hpp"
#include "astraeus/exec/sandbox/safe_fs.hpp"
#include "astraeus/exec/slurm_executor.hpp"
#include "astraeus/exec/slurm_wall_time.hpp"

namespace astraeus::exec {
namespace {

using slurm_time::kHeldStartOffsetS;
using slurm_time::utc;
Seconds wall_s() { return slurm_time::wall_now(); }

}  // namespace

std::string SlurmExecutor::attempt_file(const ExecRun& r) const {
    return c_.runs_dir + "/" + sandbox::kAttemptsFolder + "/" + (r.workspace.empty() ? "default" : r.workspace) + "/" +
           r.run_name;
}

void SlurmExecutor::mark_current_attempt(const ExecRun& r) const {
    using namespace std::chrono;
    const auto ms = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    const std::string file = attempt_file(r);
    const std::string ws_dir = file.substr(0, file.rfind('/'));
    // The service's own folders (0711: a step's user reads its run's file by name, writes nothing).
    Result<void> ok;
    for (const std::string& d : {ws_dir.substr(0, ws_dir.rfind('/')), ws_dir}) {
        auto fd = sandbox::ensure_dir(d, ::getuid(), ::getgid(), 0711);
        if (!fd) {
            ok = std::unexpected(fd.error());
            break;
        }
        ::close(*fd);
    }
    if (ok) ok = sandbox::write_current_attempt(ws_dir, file.substr(file.rfind('/') + 1), r.attempt, ms);
    if (!ok)
        std::fprintf(stderr, "astraeus: slurm executor: run %s attempt %d: the current-attempt file: %s (a stale rank "
                     "of an earlier attempt is not ended)\n", r.run_name.c_str(), r.attempt, ok.error().message.c_str());
}

bool SlurmExecutor::poll_admin_requeue(RunState& s, const slurm::JobInfo& j, Seconds t, std::vector<ExecEvent>& out) {
    // Slurm requeues a job by itself when one of its nodes fails (DOWN, or drained): then a
    // failure of the attempt (the caller's). Unknown nodes: the same, as before.
    auto nodes = client_.nodes();
    if (!nodes) return false;
    std::set<std::string> mine;
    for (const auto& p : s.r.placement) mine.insert(node_of(p));
    for (const auto& n : *nodes)
        if (mine.contains(n.name) && (n.down || n.drain)) return false;
    const Seconds at = wall_s();
    s.segment_end_s = at;
    if (s.running_since >= 0) s.executed_s += std::max<Seconds>(0, t - s.running_since);
    s.running_since = -1;
    const std::string job = "job " + std::to_string(s.job);
    const char* verb = j.held ? "requeuehold" : "requeue";
    ExecEvent e{ExecEvent::Kind::Preempted, t, s.r.run};
    e.attempt = s.r.attempt;
    // Slurm's records say when (this poll, within poll_ms of the requeue) but not who asked.
    e.detail = std::string("requeued: preempted in Slurm by an administrator (scontrol ") + verb + ") at " + utc(at) +
               " (" + job + "; Slurm does not record who): placed again by Astraeus";
    out.push_back(e);
    if (j.held) {  // requeue-held: waits like an administrator's hold, until released
        (void)client_.set_begin(s.job, at + kHeldStartOffsetS);
        s.phase = Phase::AdminHeld;
        s.uhold_sent = false;
        ExecEvent h{ExecEvent::Kind::Held, t, s.r.run};
        h.attempt = s.r.attempt;
        h.detail = "held in Slurm by an administrator (scontrol requeuehold) since " + utc(at) + " (" + job + ")";
        out.push_back(std::move(h));
    } else {  // Slurm would start it again by itself: held by us until Astraeus places it again
        (void)client_.hold(s.job);
        s.phase = Phase::Parked;
        s.user_hold_seen = false;
        s.forgotten_at = -1;
    }
    return true;
}

bool SlurmExecutor::keep_admin_hold(RunState& s, Seconds t, std::vector<ExecEvent>& out) {
    auto jobs = client_.jobs();
    if (!jobs) return false;
    for (const auto& j : *jobs) {
        if (j.id != s.job) continue;
        if (j.state != slurm::JobState::Pending || !j.admin_held) return false;
        (void)client_.set_begin(s.job, wall_s() + kHeldStartOffsetS);
        s.phase = Phase::AdminHeld;
        s.uhold_sent = false;
        ExecEvent h{ExecEvent::Kind::Held, t, s.r.run};
        h.attempt = s.r.attempt;
        h.detail = "held in Slurm by an administrator (scontrol hold; seen at " + utc(wall_s()) +
                   ", after a restart of astraeus serve) (job " + std::to_string(s.job) + ")";
        out.push_back(std::move(h));
        return true;
    }
    return false;
}

}  // namespace astraeus::exec
