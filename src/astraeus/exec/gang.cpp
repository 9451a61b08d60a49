#include "astraeus/exec/gang.hpp"

#include <algorithm>

namespace astraeus::exec {

Gang::Gang(const ExecRun& r, Seconds t)
    : r_(r), since_(t), executed_(r.executed_s),
      up_(static_cast<std::size_t>(r.workers), 0), exited_(up_), gone_(up_), ok_(up_) {}

ExecEvent Gang::event(ExecEvent::Kind k, Seconds t, int w) const {
    ExecEvent e{k, t};
    e.run = r_.run;
    e.worker = w;
    e.attempt = r_.attempt;
    return e;
}

void Gang::set_running(Seconds t, std::vector<ExecEvent>& out) {
    if (phase_ != ExecPhase::Starting) return;
    phase_ = ExecPhase::Running;
    since_ = t;
    ExecEvent e = event(ExecEvent::Kind::Started, t);
    e.level = -1;
    out.push_back(e);
}

void Gang::worker_up(int w, Seconds t, std::vector<ExecEvent>& out) {
    if (w < 0 || w >= r_.workers || up_[w]) return;
    up_[w] = 1;
    out.push_back(event(ExecEvent::Kind::WorkerStarted, t, w));
    if (!r_.running_at_progress && std::all_of(up_.begin(), up_.end(), [](char c) { return c != 0; }))
        set_running(t, out);
}

void Gang::progress(int w, std::int64_t step, Seconds t, std::vector<ExecEvent>& out) {
    if (w < 0 || w >= r_.workers) return;
    if (r_.running_at_progress) set_running(t, out);
    if (phase_ != ExecPhase::Running) return;
    ExecEvent e = event(ExecEvent::Kind::Progress, t, w);
    e.step = step;
    out.push_back(e);
}

void Gang::worker_exited(int w, int exit_code, int signal, bool we_signalled, Seconds t,
                         std::vector<ExecEvent>& out) {
    if (w < 0 || w >= r_.workers || exited_[w]) return;
    exited_[w] = 1;
    ok_[w] = exit_code == 0 ? 1 : 0;
    ExecEvent e = event(ExecEvent::Kind::WorkerExited, t, w);
    e.exit_code = exit_code;
    e.signal = signal;
    out.push_back(e);
    if (phase_ == ExecPhase::Stopping || phase_ == ExecPhase::Failed) return;
    // Running or starting, nothing sent by us: a non-zero exit or any signal fails the gang
    // (a signal we sent is only sent while stopping or failed).
    (void)we_signalled;
    if (exit_code != 0) {
        if (phase_ == ExecPhase::Running) executed_ += t - since_;
        phase_ = ExecPhase::Failed;
        since_ = t;
        out.push_back(event(ExecEvent::Kind::Failed, t, w));
    }
}

void Gang::fail(Seconds t, std::vector<ExecEvent>& out) {
    if (phase_ == ExecPhase::Stopping || phase_ == ExecPhase::Failed) return;
    if (phase_ == ExecPhase::Running) executed_ += t - since_;
    phase_ = ExecPhase::Failed;
    since_ = t;
    out.push_back(event(ExecEvent::Kind::Failed, t));
}

void Gang::worker_gone(int w, Seconds t, std::vector<ExecEvent>& out) {
    if (w < 0 || w >= r_.workers || gone_[w]) return;
    gone_[w] = 1;
    if (done_ || !std::all_of(gone_.begin(), gone_.end(), [](char c) { return c != 0; })) return;
    done_ = true;
    switch (phase_) {
        case ExecPhase::Stopping: out.push_back(event(ExecEvent::Kind::StopDone, t)); break;
        case ExecPhase::Failed: out.push_back(event(ExecEvent::Kind::Released, t)); break;
        case ExecPhase::Starting:
        case ExecPhase::Running:
            if (phase_ == ExecPhase::Running) executed_ += t - since_;
            if (std::all_of(ok_.begin(), ok_.end(), [](char c) { return c != 0; })) {
                out.push_back(event(ExecEvent::Kind::Finished, t));
            } else {  // cannot happen (a bad exit fails the gang first); be safe
                out.push_back(event(ExecEvent::Kind::Failed, t));
                out.push_back(event(ExecEvent::Kind::Released, t));
            }
            break;
    }
}

void Gang::stop(Seconds t) {
    if (phase_ == ExecPhase::Stopping || phase_ == ExecPhase::Failed) return;
    if (phase_ == ExecPhase::Running) executed_ += t - since_;
    phase_ = ExecPhase::Stopping;
    since_ = t;
}

Seconds Gang::time_limit_at() const {
    if (r_.time_limit_s <= 0 || limit_sent_ || phase_ != ExecPhase::Running) return kNever;
    return since_ + std::max<Seconds>(0, r_.time_limit_s - executed_);
}

void Gang::time_limit(Seconds t, std::vector<ExecEvent>& out) {
    if (time_limit_at() == kNever) return;
    limit_sent_ = true;
    stop(t);
    out.push_back(event(ExecEvent::Kind::TimeLimit, t));
}

Seconds Gang::executed_s(Seconds t) const {
    return executed_ + (phase_ == ExecPhase::Running && !done_ ? t - since_ : 0);
}

}  // namespace astraeus::exec
