#include "astraeus/goodput/counter.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace astraeus::goodput {

namespace {
std::string worker_name(int w) { return "worker " + std::to_string(w); }
}  // namespace

GoodputCounter::GoodputCounter(CounterConfig config, DeltaSink& sink)
    : cfg_(config), sink_(sink) {}

int GoodputCounter::add_worker(Seconds submit_s, int run, int gpus) {
    Worker k;
    k.run = run;
    k.gpus_asked = gpus;
    k.last_count = submit_s;
    k.decided_to = submit_s;
    k.last_event = submit_s;
    k.due = minute_start(submit_s) + kMinute;
    w_.push_back(std::move(k));
    const int w = static_cast<int>(w_.size()) - 1;
    due_.emplace(w_.back().due, w);
    reschedule(w);  // (open at once with open_waits)
    return w;
}

Result<void> GoodputCounter::check(Seconds t, int w, const char* what) const {
    if (w < 0 || w >= workers()) return astraeus::fail(std::string(what) + ": no " + worker_name(w));
    const Worker& k = w_[w];
    if (k.s.phase == Phase::Ended)
        return astraeus::fail(std::string(what) + ": " + worker_name(w) + " has ended");
    if (t < k.last_event)
        return astraeus::fail(std::string(what) + ": time " + std::to_string(t) + " is before " +
                    worker_name(w) + "'s last event at " + std::to_string(k.last_event));
    return {};
}

void GoodputCounter::emit_to(const Worker& k, const Piece& p, int sign, DeltaSink& to) const {
    const auto& parts = p.gen < 0 ? k.parts : k.old_parts[static_cast<std::size_t>(p.gen)];
    for (Seconds h = hour_start(p.from); h < p.to; h += kHour) {
        const Seconds secs = std::min(p.to, h + kHour) - std::max(p.from, h);
        if (p.held) {
            for (const auto& hp : parts) {
                const GpuSeconds g = sign * GpuSeconds{hp.gpus} * secs;
                to.add({k.run, hp.machine, h, p.category, true, g});
                if (p.unmeasured) to.add({k.run, hp.machine, h, kUnmeasured, true, g});
            }
        } else {
            to.add({k.run, -1, h, p.category, false, sign * GpuSeconds{k.gpus_asked} * secs});
        }
    }
}

void GoodputCounter::pending(int w, DeltaSink& out) const {
    const Worker& k = w_[static_cast<std::size_t>(w)];
    for (const Piece& p : k.pending) emit_to(k, p, 1, out);
}

void GoodputCounter::piece(Worker& k, Piece p, bool now) {
    if (p.to <= p.from) return;
    if (!now) {
        k.pending.push_back(p);
        return;
    }
    emit(k, p, 1);
    if (p.unmeasured)
        for (const auto& hp : p.gen < 0 ? k.parts : k.old_parts[static_cast<std::size_t>(p.gen)])
            unmeasured_gpu_s_ += GpuSeconds{hp.gpus} * (p.to - p.from);
    if (!p.journal) return;
    for (Seconds h = hour_start(p.from); h < p.to; h += kHour) {
        const Seconds secs = std::min(p.to, h + kHour) - std::max(p.from, h);
        auto it = std::find_if(k.journal.begin(), k.journal.end(), [&](const JournalEntry& e) {
            return e.hour == h && e.category == p.category;
        });
        if (it != k.journal.end()) it->seconds += secs;
        else k.journal.push_back({h, p.category, secs});
    }
}

void GoodputCounter::flush(Worker& k) {
    for (const Piece& p : k.pending) piece(k, p, true);
    k.pending.clear();
    k.old_parts.clear();
}

void GoodputCounter::decide(Worker& k, Seconds from, Seconds to, bool now) {
    if (to <= from) return;
    const bool held = holds_gpus(k.s);
    if (k.s.phase != Phase::Running || k.s.stalled) {
        piece(k, {from, to, categorize(k.s, false), held, false, false, -1}, now);
        return;
    }
    // Running: the journal holds what moves if a stall follows (since the last progress).
    const bool journal = k.tracked && from >= k.last_progress;
    auto run = [&](Seconds a, Seconds b, bool busy, bool unmeasured) {
        piece(k, {a, b, busy ? Category::Productive : Category::Idle, true, unmeasured, journal, -1},
              now);
    };
    if (k.has_level) return run(from, to, k.level >= cfg_.busy_pct, false);
    Seconds undecided = from;
    if (k.has_sample) {
        const Seconds valid_to = std::min(to, k.sample_t + 2 * cfg_.sample_period_s);
        if (valid_to > from) {
            run(from, valid_to, k.sample_busy, false);
            undecided = valid_to;
        }
    }
    // No valid sample: progress decides (busy while tracked and not stalled), else unmeasured.
    if (undecided < to) run(undecided, to, k.tracked, !k.tracked);
}

void GoodputCounter::count_to(Worker& k, Seconds t) {
    const Seconds boundary = minute_start(t);
    if (boundary > k.last_count) {  // the count(s) at the boundaries <= t
        flush(k);
        decide(k, k.decided_to, boundary, true);
        k.last_count = boundary;
        k.decided_to = std::max(k.decided_to, boundary);
    }
    decide(k, k.decided_to, t, false);
    k.decided_to = std::max(k.decided_to, t);
}

void GoodputCounter::stall(Worker& k) {
    for (const auto& e : k.journal) {
        const Piece p{e.hour, e.hour + e.seconds, e.category, true, false, false, -1};
        emit(k, p, -1);
        emit(k, {p.from, p.to, Category::Stalled, true, false, false, -1}, 1);
    }
    k.journal.clear();
    for (Piece& p : k.pending)
        if (p.journal) {
            p.category = Category::Stalled;
            p.journal = false;
        }
    k.s.stalled = true;
}

void GoodputCounter::catch_up(Worker& k, Seconds t) {
    if (k.tracked && k.s.phase == Phase::Running && !k.s.stalled) {
        const Seconds detected = k.last_progress + cfg_.stall_timeout_s;
        if (detected <= t) {
            count_to(k, detected);
            stall(k);
        }
    }
    count_to(k, t);
    k.last_event = std::max(k.last_event, t);
}

void GoodputCounter::reschedule(int w) {
    Worker& k = w_[static_cast<std::size_t>(w)];
    // An open wait: waiting with nothing pending (pending is empty exactly when decided_to is
    // last_count), in no due_ entry. Any change closes it; it opens again from the new count.
    const bool open = cfg_.open_waits && k.s.phase == Phase::Waiting && k.pending.empty();
    if (k.open && (!open || k.last_count != k.open_from)) {
        sink_.close_wait(w);
        k.open = false;
        due_.emplace(k.due, w);
    }
    if (open && !k.open) {
        due_.erase({k.due, w});
        k.open = true;
        k.open_from = k.last_count;
        sink_.open_wait({w, k.run, k.last_count, categorize(k.s, false), k.gpus_asked});
    }
    if (k.open) return;
    if (k.s.phase == Phase::Ended) {
        due_.erase({k.due, w});
        return;
    }
    Seconds due = minute_start(k.last_count) + kMinute;
    if (k.tracked && k.s.phase == Phase::Running && !k.s.stalled)
        due = std::min(due, k.last_progress + cfg_.stall_timeout_s);
    if (due == k.due) return;  // most calls inside a minute
    due_.erase({k.due, w});
    k.due = due;
    due_.emplace(due, w);
}

void GoodputCounter::advance(Seconds t) {
    // Only the workers with a boundary or a stall detection <= t: for the others, counting to t
    // would only decide time that their next call (or count) decides the same way.
    std::vector<int> due;
    for (auto it = due_.begin(); it != due_.end() && it->first <= t; ++it) due.push_back(it->second);
    for (int w : due) {
        Worker& k = w_[static_cast<std::size_t>(w)];
        if (t >= k.last_event) catch_up(k, t);
        reschedule(w);
    }
    if (cfg_.open_waits) sink_.counted_to(minute_start(t));
}

Result<void> GoodputCounter::place(Seconds t, int w, std::span<const HeldPart> parts) {
    if (auto ok = check(t, w, "place"); !ok) return ok;
    const Refile refile{*this, w};
    Worker& k = w_[w];
    if (k.s.phase != Phase::Waiting)
        return astraeus::fail("place: " + worker_name(w) + " is not waiting to be placed");
    if (parts.empty()) return astraeus::fail("place: " + worker_name(w) + ": no GPUs given");
    for (const auto& p : parts)
        if (p.gpus <= 0 || p.machine < 0)
            return astraeus::fail("place: " + worker_name(w) + ": a part with no GPUs or no machine");
    catch_up(k, t);
    k.parts.assign(parts.begin(), parts.end());
    k.s.phase = Phase::Placed;
    ++k.s.attempt;
    return {};
}

Result<void> GoodputCounter::start(Seconds t, int w) {
    if (auto ok = check(t, w, "start"); !ok) return ok;
    const Refile refile{*this, w};
    Worker& k = w_[w];
    if (k.s.phase != Phase::Placed) return astraeus::fail("start: " + worker_name(w) + " is not placed");
    catch_up(k, t);
    k.s.phase = Phase::Running;
    k.s.stalled = false;
    k.journal.clear();
    for (Piece& p : k.pending) p.journal = false;
    // A new attempt starts with no progress history: it is not tracked (and cannot stall)
    // until it reports progress itself.
    k.tracked = false;
    k.has_sample = false;
    k.last_progress = t;
    k.step = std::numeric_limits<std::int64_t>::min();
    return {};
}

Result<void> GoodputCounter::stop(Seconds t, int w, Cause why) {
    if (auto ok = check(t, w, "stop"); !ok) return ok;
    const Refile refile{*this, w};
    Worker& k = w_[w];
    if (k.s.phase != Phase::Placed && k.s.phase != Phase::Running)
        return astraeus::fail("stop: " + worker_name(w) + " is neither placed nor running");
    if (why != Cause::Owner && why != Cause::Stall && why != Cause::Preemption)
        return astraeus::fail("stop: the reason must be owner, stall or preemption");
    catch_up(k, t);
    k.s.phase = Phase::Stopping;
    k.s.cause = why;
    k.s.stalled = false;
    k.journal.clear();
    for (Piece& p : k.pending) p.journal = false;
    return {};
}

Result<void> GoodputCounter::fail(Seconds t, int w) {
    if (auto ok = check(t, w, "fail"); !ok) return ok;
    const Refile refile{*this, w};
    Worker& k = w_[w];
    if (!holds_gpus(k.s) || k.s.phase == Phase::Failed)
        return astraeus::fail("fail: " + worker_name(w) + " holds no GPUs (or has already failed)");
    catch_up(k, t);
    k.s.phase = Phase::Failed;
    k.s.cause = Cause::Failure;
    k.s.stalled = false;
    k.journal.clear();
    for (Piece& p : k.pending) p.journal = false;
    return {};
}

Result<void> GoodputCounter::release(Seconds t, int w) {
    if (auto ok = check(t, w, "release"); !ok) return ok;
    const Refile refile{*this, w};
    Worker& k = w_[w];
    const bool stopping = k.s.phase == Phase::Stopping && k.s.cause != Cause::Owner;
    if (!stopping && k.s.phase != Phase::Failed)
        return astraeus::fail("release: " + worker_name(w) +
                    " is not failed or stopping for a stall or preemption (an owner's stop "
                    "ends with end)");
    catch_up(k, t);
    k.s.phase = Phase::Waiting;
    // Pending held pieces keep the GPUs they were on (over 100 releases in one minute: emitted
    // now instead, so that the generation stays small).
    if (k.old_parts.size() >= 100) flush(k);
    const auto gen = static_cast<std::int8_t>(k.old_parts.size());
    bool used = false;
    for (Piece& p : k.pending)
        if (p.held && p.gen < 0) {
            p.gen = gen;
            used = true;
        }
    if (used) k.old_parts.push_back(std::move(k.parts));
    k.parts.clear();
    return {};
}

Result<void> GoodputCounter::end(Seconds t, int w) {
    if (auto ok = check(t, w, "end"); !ok) return ok;
    const Refile refile{*this, w};
    Worker& k = w_[w];
    catch_up(k, t);
    flush(k);  // the last count, in the state it ended from
    k.last_count = t;
    k.s.phase = Phase::Ended;
    k.parts.clear();
    k.parts.shrink_to_fit();
    k.journal.clear();
    k.journal.shrink_to_fit();
    return {};
}

Result<void> GoodputCounter::utilization(Seconds t, int w, std::span<const double> pct) {
    if (auto ok = check(t, w, "utilization"); !ok) return ok;
    const Refile refile{*this, w};
    Worker& k = w_[w];
    catch_up(k, t);
    double sum = 0;
    int n = 0;
    for (double v : pct) {
        if (!std::isfinite(v) || v < 0 || v > 100) {
            ++invalid_samples_;
            continue;
        }
        sum += v;
        ++n;
    }
    if (n == 0) return {};  // decides nothing
    k.has_sample = true;
    k.sample_t = t;
    k.sample_busy = sum >= cfg_.busy_pct * n;
    return {};
}

Result<void> GoodputCounter::utilization_level(Seconds t, int w, double pct) {
    if (auto ok = check(t, w, "utilization"); !ok) return ok;
    const Refile refile{*this, w};
    if (!std::isfinite(pct) || pct < 0 || pct > 100)
        return astraeus::fail("utilization: level " + std::to_string(pct) + " is outside 0..100");
    Worker& k = w_[w];
    catch_up(k, t);
    k.has_level = true;
    k.level = pct;
    return {};
}

Result<void> GoodputCounter::progress(Seconds t, int w, std::int64_t step) {
    if (auto ok = check(t, w, "progress"); !ok) return ok;
    const Refile refile{*this, w};
    Worker& k = w_[w];
    catch_up(k, t);
    const bool first = !k.tracked;
    k.tracked = true;
    if (!first && step <= k.step) return {};  // no progress
    k.step = step;
    if (k.s.phase != Phase::Running) return {};
    // The time up to this report is decided (a stall ends here); what preceded it stays.
    k.last_progress = t;
    k.journal.clear();
    for (Piece& p : k.pending) p.journal = false;
    k.s.stalled = false;
    return {};
}

int GoodputCounter::stalled_now() const {
    int n = 0;
    for (const auto& k : w_) n += k.s.phase == Phase::Running && k.s.stalled;
    return n;
}

}  // namespace astraeus::goodput
