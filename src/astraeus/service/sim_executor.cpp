#include "astraeus/service/sim_executor.hpp"

#include <algorithm>
#include <cmath>

#include "astraeus/base/rng.hpp"

namespace astraeus::service {

void SimExecutor::launch(Seconds t, const ExecRun& r) {
    State s;
    s.r = r;
    s.phase = ExecPhase::Starting;
    s.since = t;
    s.executed = r.executed_s;
    runs_[r.run] = s;
}

void SimExecutor::stop(Seconds t, std::int64_t run) {
    auto it = runs_.find(run);
    if (it == runs_.end()) return;
    State& s = it->second;
    if (s.phase == ExecPhase::Running) s.executed += t - s.since;
    if (s.phase == ExecPhase::Stopping || s.phase == ExecPhase::Failed) return;
    s.phase = ExecPhase::Stopping;
    s.since = t;
}

void SimExecutor::restore(const ExecRun& r, ExecPhase phase, Seconds since_s, Seconds executed_s) {
    State s;
    s.r = r;
    s.phase = phase;
    s.since = since_s;
    s.executed = executed_s;
    runs_[r.run] = s;
}

Seconds SimExecutor::failure_after(const State& s) const {
    if (c_.failures_per_hour <= 0) return kNever;
    Rng rng(c_.seed ^ (static_cast<std::uint64_t>(s.r.run) * 0x9e3779b97f4a7c15ULL) ^
            (static_cast<std::uint64_t>(s.r.attempt) << 32));
    const double u = rng.uniform();
    const double hours = -std::log(1.0 - u) / c_.failures_per_hour;
    return static_cast<Seconds>(hours * 3600.0) + 1;
}

std::pair<Seconds, ExecEvent::Kind> SimExecutor::next_of(const State& s) const {
    using K = ExecEvent::Kind;
    switch (s.phase) {
        case ExecPhase::Starting: return {s.since + c_.startup_s, K::Started};
        case ExecPhase::Stopping: return {s.since + c_.stop_s, K::StopDone};
        case ExecPhase::Failed: return {s.since + c_.failure_hold_s, K::Released};
        case ExecPhase::Running: {
            std::pair<Seconds, K> best{kNever, K::Finished};
            if (s.r.duration_s > 0)
                best = {s.since + std::max<Seconds>(0, s.r.duration_s - s.executed), K::Finished};
            if (s.r.time_limit_s > 0 && !s.limit_sent) {
                const Seconds at = s.since + std::max<Seconds>(0, s.r.time_limit_s - s.executed);
                if (at < best.first) best = {at, K::TimeLimit};
            }
            const Seconds f = failure_after(s);
            if (f != kNever && s.since + f < best.first) best = {s.since + f, K::Failed};
            return best;
        }
    }
    return {kNever, K::Finished};
}

Seconds SimExecutor::loss_after(std::int64_t machine, std::uint64_t k) const {
    Rng rng(c_.seed ^ 0x5bd1e995ULL ^ (static_cast<std::uint64_t>(machine) * 0xbf58476d1ce4e5b9ULL) ^
            (k << 40));
    const double days = -std::log(1.0 - rng.uniform()) / c_.machine_failures_per_day;
    return static_cast<Seconds>(days * 86400.0) + 1;
}

void SimExecutor::set_machines(const std::vector<std::int64_t>& ids, Seconds t) {
    machines_.clear();
    if (c_.machine_failures_per_day <= 0) return;
    for (std::int64_t id : ids) machines_[id] = {true, t + loss_after(id, 0), 0};
}

Seconds SimExecutor::next_event_s() const {
    Seconds best = kNever;
    for (const auto& [id, m] : machines_) best = std::min(best, m.next);
    for (const auto& [id, s] : runs_) best = std::min(best, next_of(s).first);
    return best;
}

bool SimExecutor::pop_due(Seconds now, ExecEvent& out) {
    Seconds best = kNever;
    std::int64_t who = 0;
    ExecEvent::Kind kind = ExecEvent::Kind::Finished;
    for (const auto& [id, s] : runs_) {
        const auto [t, k] = next_of(s);
        if (t < best) {
            best = t;
            who = id;
            kind = k;
        }
    }
    for (auto& [id, m] : machines_) {
        if (m.next < best && m.next <= now) {  // a machine event comes first
            out = ExecEvent{m.up ? ExecEvent::Kind::MachineLost : ExecEvent::Kind::MachineBack, m.next, 0, id, 0};
            if (m.up) {
                m.up = false;
                m.next += c_.machine_repair_s;
            } else {
                m.up = true;
                m.next += loss_after(id, ++m.losses);
            }
            return true;
        }
    }
    if (best > now) return false;
    State& s = runs_[who];
    out = ExecEvent{kind, best, who, 0, 0};
    using K = ExecEvent::Kind;
    switch (kind) {
        case K::Started:
            s.phase = ExecPhase::Running;
            s.since = best;
            out.level = c_.utilization_pct;
            break;
        case K::Finished:
            s.executed += best - s.since;
            runs_.erase(who);
            break;
        case K::TimeLimit:
            s.executed += best - s.since;
            s.limit_sent = true;
            s.phase = ExecPhase::Stopping;
            s.since = best;
            break;
        case K::StopDone: runs_.erase(who); break;
        case K::Failed:
            s.executed += best - s.since;
            s.phase = ExecPhase::Failed;
            s.since = best;
            break;
        case K::Released: runs_.erase(who); break;
        default: break;
    }
    return true;
}

Seconds SimExecutor::executed_s(std::int64_t run, Seconds t) const {
    auto it = runs_.find(run);
    if (it == runs_.end()) return 0;
    const State& s = it->second;
    return s.executed + (s.phase == ExecPhase::Running ? t - s.since : 0);
}

}  // namespace astraeus::service
