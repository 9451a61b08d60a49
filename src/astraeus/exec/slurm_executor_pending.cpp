// The Slurm executor's pending side (slurm_executor.hpp): released jobs Slurm does not start
// (take_back, the withheld nodes' Foreign events) and waiting runs' held jobs (waiting,
// poll_waiting). Split from slurm_executor.cpp.
#include <algorithm>
#include <cstdio>
#include <ctime>

#include <unistd.h>

#include "astraeus/exec/slurm_executor.hpp"
#include "astraeus/exec/slurm_wall_time.hpp"

namespace astraeus::exec {
namespace {

using slurm_time::wall_now;

// A waiting run's job comment: "astraeus waiting: REASON | COMMAND" (the reason cut at 500 bytes).
std::string waiting_comment(const std::string& reason, const std::string& command) {
    std::string out = "astraeus waiting: ";
    out.append(reason, 0, std::min<std::size_t>(reason.size(), 500));
    out += " | ";
    out += command;
    return out;
}

}  // namespace

void SlurmExecutor::foreign_event(const std::string& node, Seconds t, std::vector<ExecEvent>& out) {
    auto m = node_machine_.find(node);
    if (m == node_machine_.end()) return;
    const slurm::ForeignNode& f = foreign_[node];
    int gpus = f.gpus;
    std::string detail = f.gpus > 0 ? slurm::foreign_text(node, f) : "";
    if (auto b = blocked_.find(node); b != blocked_.end()) {
        // Whatever keeps Slurm from starting our job there: every GPU of the node withheld.
        for (const auto& p : pools_)
            for (const auto& n : p.nodes)
                if (n.name == node) gpus = std::max(gpus, n.gpus);
        detail += (detail.empty() ? "" : "; ") + b->second.why;
    }
    auto& sent = foreign_sent_[node];
    if (sent.first == gpus && sent.second == detail) return;
    sent = {gpus, detail};
    ExecEvent e{ExecEvent::Kind::Foreign, t, 0};
    e.machine = m->second;
    e.gpus = gpus;
    e.detail = gpus > 0 ? detail : "";
    out.push_back(std::move(e));
}

bool SlurmExecutor::take_back(RunState& s, const slurm::JobInfo& j, Seconds t, std::vector<ExecEvent>& out) {
    // Held again first: a job Slurm starts meanwhile cannot be held, and is seen RUNNING next.
    if (!client_.hold(s.job)) return false;
    std::vector<std::string> nodes;
    for (const auto& p : s.r.placement) {
        const std::string n = node_of(p);
        if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
    }
    std::string list;
    for (const auto& n : nodes) list += (list.empty() ? "" : ",") + n;
    std::map<std::string, std::vector<std::uint32_t>> on_node;
    if (auto allocs = client_.allocations()) on_node = slurm::foreign_jobs_per_node(*allocs, c_.runs_dir);
    for (const auto& n : nodes) {
        slurm::BlockedNode b;
        if (auto it = on_node.find(n); it != on_node.end()) b.jobs = it->second;
        b.since_s = wall_now();
        b.why = slurm::blocked_text(n, s.job, j.reason, b.jobs, c_.blocked_cool_off_s);
        blocked_[n] = std::move(b);
        foreign_event(n, t, out);  // before the Withdrawn: the next round places elsewhere
    }
    s.phase = Phase::Parked;
    s.user_hold_seen = false;
    s.released_s = -1;
    ExecEvent e{ExecEvent::Kind::Withdrawn, t, s.r.run};
    e.attempt = s.r.attempt;
    e.detail = slurm::not_started_text(s.job, list, c_.pending_bound_s, j.reason);
    std::fprintf(stderr, "astraeus: slurm executor: run %s attempt %d: %s\n", s.r.run_name.c_str(), s.r.attempt,
                 e.detail.c_str());
    out.push_back(std::move(e));
    return true;
}

void SlurmExecutor::waiting(Seconds t, const ExecRun& r, const std::string& reason) {
    (void)t;
    std::lock_guard lock(mu_);
    auto it = runs_.find(r.run);
    if (it == runs_.end()) {
        RunState& s = runs_[r.run];
        s.r = r;
        s.phase = Phase::Waiting;
        // A held job an earlier process of the service left for it (a restart): claimed.
        for (const auto& [job, o] : orphans_)
            if (o.work_dir == run_dir(r)) s.job = std::max(s.job, job);
        if (s.job != 0) orphans_.erase(s.job);
        it = runs_.find(r.run);
    }
    RunState& s = it->second;
    if (s.phase != Phase::Waiting && s.phase != Phase::Parked) return;
    if (s.phase == Phase::Waiting) s.r = r;
    s.waiting_reason = reason;
    cv_.notify_all();
}

void SlurmExecutor::poll_waiting() {
    int submits = 0, updates = 0;
    const Seconds now_s = wall_now();
    for (auto& [run, s] : runs_) {
        if ((s.phase != Phase::Waiting && s.phase != Phase::Parked) || s.forgotten_at >= 0) continue;
        if (s.phase == Phase::Waiting && s.job == 0) {
            if (s.submit_failed || submits >= kWaitingSubmitsPerPoll) continue;
            ++submits;
            auto spec = job_spec(s, "");
            if (spec) spec->comment = waiting_comment(s.waiting_reason, spec->comment);
            auto id = spec ? client_.submit_held(*spec) : Result<std::uint32_t>(std::unexpected(spec.error()));
            if (!id) {  // the placement's launch() submits again and reports why
                s.submit_failed = true;
                std::fprintf(stderr, "astraeus: slurm executor: run %s: no held job while it waits: %s\n",
                             s.r.run_name.c_str(), id.error().message.c_str());
                continue;
            }
            s.job = *id;
            (void)client_.hold(s.job);  // a user hold (JobHeldUser), as between placements
            s.user_hold_seen = false;
            s.shown_reason = s.waiting_reason;
            s.shown_at = now_s;
            continue;
        }
        if (s.job == 0 || s.waiting_reason.empty() || s.waiting_reason == s.shown_reason) continue;
        if (now_s - s.shown_at < kReasonEveryS || updates >= kReasonUpdatesPerPoll) continue;
        ++updates;
        if (client_.set_comment(s.job, waiting_comment(s.waiting_reason, command_comment(s.r)))) {
            s.shown_reason = s.waiting_reason;
            s.shown_at = now_s;
        }
    }
}

}  // namespace astraeus::exec
