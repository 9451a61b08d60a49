// Helpers of the goodput tests: write event-log lines and replay them.
#pragma once
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>
#include <string>

#include "astraeus/goodput_io/event_log.hpp"

namespace astraeus::goodput::testing {

/// Builds a JSON Lines log; times are Unix seconds. Lines are put in time order (stably) by
/// text(), so a test may write each run's events in turn.
class Log {
public:
    /// A raw line at time t (default: the time of the line before, or before everything).
    Log& line(const std::string& l, std::optional<Seconds> t = std::nullopt) {
        if (t) last_ = *t;
        lines_.push_back({last_, l});
        return *this;
    }
    Log& line_at(Seconds t, const std::string& l) { return line(l, t); }
    Log& submit(Seconds t, const std::string& run, const std::string& ws, const std::string& pool,
                int workers, int gpus) {
        return line_at(t, fmt::format(R"({{"t":{},"event":"submit","run":"{}","workspace":"{}",)"
                                R"("pool":"{}","workers":{},"gpus":{}}})",
                                t, run, ws, pool, workers, gpus));
    }
    Log& place(Seconds t, const std::string& run, int worker, const std::string& machine) {
        return line_at(t, fmt::format(R"({{"t":{},"event":"place","run":"{}","worker":{},"machine":"{}"}})",
                                t, run, worker, machine));
    }
    Log& place_all(Seconds t, const std::string& run, const std::string& machine) {
        return line_at(t, fmt::format(R"({{"t":{},"event":"place","run":"{}","machine":"{}"}})", t, run,
                                machine));
    }
    /// start, fail, release, end; worker -1 = every worker.
    Log& move(Seconds t, const std::string& event, const std::string& run, int worker = -1) {
        if (worker < 0)
            return line_at(t, fmt::format(R"({{"t":{},"event":"{}","run":"{}"}})", t, event, run));
        return line_at(t, fmt::format(R"({{"t":{},"event":"{}","run":"{}","worker":{}}})", t, event, run,
                                worker));
    }
    Log& stop(Seconds t, const std::string& run, int worker, const std::string& reason) {
        return line_at(t, fmt::format(R"({{"t":{},"event":"stop","run":"{}","worker":{},"reason":"{}"}})",
                                t, run, worker, reason));
    }
    Log& util(Seconds t, const std::string& run, int worker, const std::string& pct_list) {
        return line_at(t, fmt::format(R"({{"t":{},"event":"util","run":"{}","worker":{},"gpus_pct":[{}]}})",
                                t, run, worker, pct_list));
    }
    /// One sample (pct_list) at the start of every minute of [from, to) (minute-aligned from and
    /// to): with the log's default sample period (60 s) each decides its whole minute.
    Log& util_minutes(Seconds from, Seconds to, const std::string& run, int worker,
                      const std::string& pct_list) {
        for (Seconds m = from; m < to; m += 60) util(m, run, worker, pct_list);
        return *this;
    }
    Log& progress(Seconds t, const std::string& run, int worker, std::int64_t step) {
        return line_at(t, fmt::format(R"({{"t":{},"event":"progress","run":"{}","worker":{},"step":{}}})",
                                t, run, worker, step));
    }
    std::string text() const {
        auto sorted = lines_;
        std::stable_sort(sorted.begin(), sorted.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        std::string out;
        for (const auto& [t, l] : sorted) out += l + "\n";
        return out;
    }

private:
    std::vector<std::pair<Seconds, std::string>> lines_;
    Seconds last_ = std::numeric_limits<Seconds>::min();
};

/// Replays `text` (named "test.jsonl"); the error message, or "" when it succeeded.
inline std::string replay_text(const std::string& text, Replayer& r) {
    std::istringstream in(text);
    auto ok = replay_stream(in, "test.jsonl", r);
    return ok ? std::string() : ok.error().message;
}

inline GpuSeconds held(const Counts& c, Category k) { return c.held_of(k); }
inline GpuSeconds not_held(const Counts& c, Category k) { return c.not_held_of(k); }
inline GpuSeconds sum_all(const Counts& c) {
    GpuSeconds s = 0;
    for (int i = 0; i < kCategories; ++i) s += c.held[i] + c.not_held[i];
    return s;
}

}  // namespace astraeus::goodput::testing

namespace astraeus::goodput {
// gtest's printer for Counts: "held {productive: 60, ...} not held {...}" (nonzero only).
inline void PrintTo(const Counts& c, std::ostream* os) {
    for (int part = 0; part < 2; ++part) {
        *os << (part == 0 ? "held {" : " not held {");
        bool first = true;
        for (Category k : kAllCategories) {
            const GpuSeconds v = part == 0 ? c.held_of(k) : c.not_held_of(k);
            if (v == 0) continue;
            *os << (first ? "" : ", ") << to_string(k) << ": " << v;
            first = false;
        }
        *os << "}";
    }
    if (c.unmeasured != 0) *os << " unmeasured " << c.unmeasured;
}
}  // namespace astraeus::goodput
