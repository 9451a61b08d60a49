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
    k.last_event = submit_s;
    w_.push_back(std::move(k));
    return static_cast<int>(w_.size()) - 1;
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

int GoodputCounter::held_gpus(const Worker& k) const {
    int g = 0;
    for (const auto& p : k.parts) g += p.gpus;
    return g;
}

void GoodputCounter::emit(const Worker& k, Seconds from, Seconds to, Category c, bool held,
                          int sign) {
    for (Seconds h = hour_start(from); h < to; h += kHour) {
        const Seconds secs = std::min(to, h + kHour) - std::max(from, h);
        if (held) {
            for (const auto& p : k.parts)
                sink_.add({k.run, p.machine, h, c, true, sign * GpuSeconds{p.gpus} * secs});
        } else {
            sink_.add({k.run, -1, h, c, false, sign * GpuSeconds{k.gpus_asked} * secs});
        }
    }
}

void GoodputCounter::put(Worker& k, Seconds from, Seconds to, Category c) {
    if (to <= from) return;
    emit(k, from, to, c, holds_gpus(k.s), 1);
    const bool journaled = k.tracked && k.s.phase == Phase::Running && !k.s.stalled;
    if (!journaled) return;
    // The time from the last progress on moves to stalled if a stall follows: in the minute of
    // the report, only its seconds after the report (the stall counts from the last progress).
    const Seconds jf = std::max(from, k.last_progress);
    for (Seconds h = hour_start(jf); h < to; h += kHour) {
        const Seconds secs = std::min(to, h + kHour) - std::max(jf, h);
        if (secs <= 0) continue;
        auto it = std::find_if(k.journal.begin(), k.journal.end(), [&](const JournalEntry& e) {
            return e.hour == h && e.category == c;
        });
        if (it != k.journal.end()) it->seconds += secs;
        else k.journal.push_back({h, c, secs});
    }
}

void GoodputCounter::count_to(Worker& k, Seconds t) {
    const Seconds boundary = minute_start(t);
    if (boundary <= k.last_count) return;
    const Seconds first_end = minute_start(k.last_count) + kMinute;  // first boundary after
    const bool running = k.s.phase == Phase::Running && !k.s.stalled;
    if (!running || k.has_level) {
        const bool busy = k.has_level && k.level >= cfg_.busy_pct;
        put(k, k.last_count, boundary, categorize(k.s, busy));
    } else {
        // The minute being accumulated has the samples; later ones had none.
        const bool busy = k.samples > 0 && k.sample_sum >= cfg_.busy_pct * k.samples;
        if (k.samples == 0) ++no_sample_minutes_;
        put(k, k.last_count, first_end, busy ? Category::Productive : Category::Idle);
        if (boundary > first_end) {
            no_sample_minutes_ += (boundary - first_end) / kMinute;
            put(k, first_end, boundary, Category::Idle);
        }
    }
    k.sample_sum = 0;
    k.samples = 0;
    k.last_count = boundary;
}

void GoodputCounter::stall(Worker& k) {
    for (const auto& e : k.journal) {
        emit(k, e.hour, e.hour + e.seconds, e.category, true, -1);
        emit(k, e.hour, e.hour + e.seconds, Category::Stalled, true, 1);
    }
    k.journal.clear();
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

void GoodputCounter::advance(Seconds t) {
    for (auto& k : w_)
        if (k.s.phase != Phase::Ended && t >= k.last_event) catch_up(k, t);
}

Result<void> GoodputCounter::place(Seconds t, int w, std::span<const HeldPart> parts) {
    if (auto ok = check(t, w, "place"); !ok) return ok;
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
    Worker& k = w_[w];
    if (k.s.phase != Phase::Placed) return astraeus::fail("start: " + worker_name(w) + " is not placed");
    catch_up(k, t);
    k.s.phase = Phase::Running;
    k.s.stalled = false;
    k.journal.clear();
    // A new attempt starts with no progress history: it is not tracked (and cannot stall)
    // until it reports progress itself.
    k.tracked = false;
    k.last_progress = t;
    k.step = std::numeric_limits<std::int64_t>::min();
    return {};
}

Result<void> GoodputCounter::stop(Seconds t, int w, Cause why) {
    if (auto ok = check(t, w, "stop"); !ok) return ok;
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
    return {};
}

Result<void> GoodputCounter::fail(Seconds t, int w) {
    if (auto ok = check(t, w, "fail"); !ok) return ok;
    Worker& k = w_[w];
    if (!holds_gpus(k.s) || k.s.phase == Phase::Failed)
        return astraeus::fail("fail: " + worker_name(w) + " holds no GPUs (or has already failed)");
    catch_up(k, t);
    k.s.phase = Phase::Failed;
    k.s.cause = Cause::Failure;
    k.s.stalled = false;
    k.journal.clear();
    return {};
}

Result<void> GoodputCounter::release(Seconds t, int w) {
    if (auto ok = check(t, w, "release"); !ok) return ok;
    Worker& k = w_[w];
    const bool stopping = k.s.phase == Phase::Stopping && k.s.cause != Cause::Owner;
    if (!stopping && k.s.phase != Phase::Failed)
        return astraeus::fail("release: " + worker_name(w) +
                    " is not failed or stopping for a stall or preemption (an owner's stop "
                    "ends with end)");
    catch_up(k, t);
    k.s.phase = Phase::Waiting;
    k.parts.clear();
    return {};
}

Result<void> GoodputCounter::end(Seconds t, int w) {
    if (auto ok = check(t, w, "end"); !ok) return ok;
    Worker& k = w_[w];
    catch_up(k, t);
    if (t > k.last_count) {  // the last, partial minute, in the state it ended from
        const bool running = k.s.phase == Phase::Running && !k.s.stalled;
        bool busy = false;
        if (running && k.has_level) busy = k.level >= cfg_.busy_pct;
        else if (running) {
            busy = k.samples > 0 && k.sample_sum >= cfg_.busy_pct * k.samples;
            if (k.samples == 0) ++no_sample_minutes_;
        }
        put(k, k.last_count, t, categorize(k.s, busy));
        k.last_count = t;
    }
    k.s.phase = Phase::Ended;
    k.parts.clear();
    k.parts.shrink_to_fit();
    k.journal.clear();
    k.journal.shrink_to_fit();
    return {};
}

Result<void> GoodputCounter::utilization(Seconds t, int w, std::span<const double> pct) {
    if (auto ok = check(t, w, "utilization"); !ok) return ok;
    Worker& k = w_[w];
    catch_up(k, t);
    for (double v : pct) {
        if (!std::isfinite(v) || v < 0 || v > 100) {
            ++invalid_samples_;
            continue;
        }
        k.sample_sum += v;
        ++k.samples;
    }
    return {};
}

Result<void> GoodputCounter::utilization_level(Seconds t, int w, double pct) {
    if (auto ok = check(t, w, "utilization"); !ok) return ok;
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
    Worker& k = w_[w];
    catch_up(k, t);
    const bool first = !k.tracked;
    k.tracked = true;
    if (!first && step <= k.step) return {};  // no progress
    k.step = step;
    if (k.s.phase != Phase::Running) return {};
    if (k.s.stalled && t > k.last_count) {
        // The stall ends at this report: its minute's seconds before the report stay stalled.
        put(k, k.last_count, t, Category::Stalled);
        k.last_count = t;
    }
    k.last_progress = t;
    k.journal.clear();
    k.s.stalled = false;
    return {};
}

int GoodputCounter::stalled_now() const {
    int n = 0;
    for (const auto& k : w_) n += k.s.phase == Phase::Running && k.s.stalled;
    return n;
}

}  // namespace astraeus::goodput
