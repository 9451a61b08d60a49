// Property test of the count on random valid event logs (seeded): every printed row adds up,
// every second between submission and end is counted exactly once per worker, goodput =
// used / held, every view sums to the same total; and, on minute-aligned logs without progress
// reports, the counts equal those of an independent minute-by-minute model written here.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <sstream>

#include "astraeus/goodput_io/table.hpp"
#include "goodput_test_util.hpp"

namespace astraeus::goodput {
namespace {

constexpr Seconds kMin = 60;

// The generator's own view of a worker.
enum class P { Waiting, Placed, Running, StopOwner, StopStall, StopPreempt, Failed, Ended };

struct GenWorker {
    P phase = P::Waiting;
    Category wait_cause = Category::Waiting;  // what waiting counts as
    int attempt = 0;
    Seconds submit = 0;
    Seconds ended = -1;
    // for the independent model (minute-aligned logs): the phase from each change on
    std::vector<std::tuple<Seconds, P, Category, int>> changes;  // (t, phase, wait cause, attempt)
    std::map<Seconds, std::pair<double, int>> samples;           // minute -> (sum, count)
};

struct GenRun {
    std::string name, ws, pool;
    int gpus = 1;
    std::vector<GenWorker> w;
};

struct Generated {
    std::string text;
    std::vector<GenRun> runs;
    Seconds end = 0;
    bool aligned = false;
    bool progress = false;
};

Generated generate(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    Generated g;
    g.aligned = chance(0.5);
    g.progress = !g.aligned || chance(0.3);
    // Around 2026-11-22 (a Sunday), so that many logs cross a day and an ISO week boundary.
    Seconds t = 1795392000 - uni(0, 30) * 3600 - (g.aligned ? 0 : uni(0, 3599));
    if (g.aligned) t -= t % kMin;
    std::ostringstream out;
    const int n_runs = uni(1, 4);
    const char* workspaces[] = {"ml", "vision", "speech"};
    const char* pools[] = {"a100", "h100"};
    const char* machines[] = {"m1", "m2", "m3", "m4"};
    const char* samples[] = {"0", "4.9", "5", "5.0, 4.9", "50", "99.5, 100", "4294967295",
                             "null", "-1", "0, 10", "9.8, 0"};
    auto set = [&](GenWorker& k, P p) {
        k.phase = p;
        k.changes.push_back({t, p, k.wait_cause, k.attempt});
    };
    int steps = uni(20, 150);
    std::int64_t step_counter = 0;
    for (int i = 0; i < steps; ++i) {
        if (g.aligned) t += kMin * uni(0, 12);
        else t += uni(0, 700);
        // Submit a new run?
        if (static_cast<int>(g.runs.size()) < n_runs && (g.runs.empty() || chance(0.15))) {
            GenRun r;
            r.name = "run-" + std::to_string(g.runs.size());
            r.ws = workspaces[uni(0, 2)];
            r.pool = pools[uni(0, 1)];
            r.gpus = uni(2, 8);  // sample lists hold up to 2 values, at most one per GPU
            r.w.resize(static_cast<std::size_t>(uni(1, 3)));
            for (auto& k : r.w) {
                k.submit = t;
                k.changes.push_back({t, P::Waiting, Category::Waiting, 0});
            }
            out << fmt::format(R"({{"t":{},"event":"submit","run":"{}","workspace":"{}",)"
                               R"("pool":"{}","workers":{},"gpus":{}}})",
                               t, r.name, r.ws, r.pool, r.w.size(), r.gpus)
                << "\n";
            g.runs.push_back(std::move(r));
            continue;
        }
        GenRun& r = g.runs[static_cast<std::size_t>(uni(0, static_cast<int>(g.runs.size()) - 1))];
        const int wi = uni(0, static_cast<int>(r.w.size()) - 1);
        GenWorker& k = r.w[wi];
        auto emit = [&](const std::string& event, const std::string& extra = "") {
            out << fmt::format(R"({{"t":{},"event":"{}","run":"{}","worker":{}{}}})", t, event,
                               r.name, wi, extra)
                << "\n";
        };
        const int roll = uni(0, 99);
        switch (k.phase) {
            case P::Waiting:
                if (roll < 85) {
                    std::string extra;
                    if (r.gpus >= 2 && chance(0.3)) {
                        const int a = uni(1, r.gpus - 1);
                        extra = fmt::format(
                            R"(,"parts":[{{"machine":"{}","gpus":{}}},{{"machine":"{}","gpus":{}}}])",
                            machines[uni(0, 1)], a, machines[uni(2, 3)], r.gpus - a);
                    } else {
                        extra = fmt::format(R"(,"machine":"{}")", machines[uni(0, 3)]);
                    }
                    ++k.attempt;
                    set(k, P::Placed);
                    emit("place", extra);
                } else {
                    set(k, P::Ended);
                    k.ended = t;
                    emit("end");
                }
                break;
            case P::Placed:
                if (roll < 70) { set(k, P::Running); emit("start"); }
                else if (roll < 80) { set(k, P::Failed); emit("fail"); }
                else if (roll < 88) { set(k, P::StopPreempt); emit("stop", R"(,"reason":"preemption")"); }
                else if (roll < 94) { set(k, P::StopStall); emit("stop", R"(,"reason":"stall")"); }
                else { set(k, P::StopOwner); emit("stop", R"(,"reason":"owner")"); }
                break;
            case P::Running:
                if (roll < 55) {
                    // A utilization sample, in the minute after the current time when aligned.
                    const Seconds ts = g.aligned ? t + 30 : t;
                    const char* s = samples[uni(0, 10)];
                    out << fmt::format(R"({{"t":{},"event":"util","run":"{}","worker":{},"gpus_pct":[{}]}})",
                                       ts, r.name, wi, s)
                        << "\n";
                    auto& m = k.samples[ts - ts % kMin];
                    std::istringstream vs(s);
                    std::string v;
                    while (std::getline(vs, v, ',')) {
                        if (v.find("null") != std::string::npos) continue;
                        const double x = std::stod(v);
                        if (x < 0 || x > 100) continue;
                        m.first += x;
                        ++m.second;
                    }
                    if (g.aligned) t += kMin;  // later events start the next minute
                } else if (roll < 65 && g.progress) {
                    step_counter += uni(0, 3);
                    emit("progress", fmt::format(R"(,"step":{})", step_counter));
                } else if (roll < 75) { set(k, P::Failed); emit("fail"); }
                else if (roll < 82) { set(k, P::StopPreempt); emit("stop", R"(,"reason":"preemption")"); }
                else if (roll < 86) { set(k, P::StopStall); emit("stop", R"(,"reason":"stall")"); }
                else if (roll < 93) { set(k, P::StopOwner); emit("stop", R"(,"reason":"owner")"); }
                else { set(k, P::Ended); k.ended = t; emit("end"); }
                break;
            case P::StopOwner:
                if (roll < 80) { set(k, P::Ended); k.ended = t; emit("end"); }
                else { set(k, P::Failed); emit("fail"); }
                break;
            case P::StopStall:
            case P::StopPreempt:
                if (roll < 75) {
                    k.wait_cause = k.phase == P::StopStall ? Category::Stalled : Category::Preemption;
                    set(k, P::Waiting);
                    emit("release");
                } else if (roll < 85) { set(k, P::Failed); emit("fail"); }
                else { set(k, P::Ended); k.ended = t; emit("end"); }
                break;
            case P::Failed:
                if (roll < 80) {
                    k.wait_cause = Category::Failure;
                    set(k, P::Waiting);
                    emit("release");
                } else { set(k, P::Ended); k.ended = t; emit("end"); }
                break;
            case P::Ended: break;
        }
    }
    if (g.aligned) t += kMin * uni(0, 5);
    else t += uni(0, 400);
    if (chance(0.7)) {  // end every run still going (gang form: no worker)
        for (auto& r : g.runs) {
            bool any = false;
            for (auto& k : r.w)
                if (k.phase != P::Ended) {
                    set(k, P::Ended);
                    k.ended = t;
                    any = true;
                }
            if (any) out << fmt::format(R"({{"t":{},"event":"end","run":"{}"}})", t, r.name) << "\n";
        }
    }
    {
        // A last event so that the log's end is t: a run "last" submitted and ended at once
        // (zero time).
        out << fmt::format(R"({{"t":{},"event":"submit","run":"last","workspace":"ml",)"
                           R"("pool":"a100","gpus":1}})",
                           t)
            << "\n"
            << fmt::format(R"({{"t":{},"event":"end","run":"last"}})", t) << "\n";
        GenRun last;
        last.name = "last";
        last.ws = "ml";
        last.pool = "a100";
        last.w.resize(1);
        last.w[0].submit = t;
        last.w[0].ended = t;
        last.w[0].changes.push_back({t, P::Ended, Category::Waiting, 0});
        g.runs.push_back(std::move(last));
    }
    g.end = t;
    g.text = out.str();
    return g;
}

// The independent model: for minute-aligned logs without progress reports, each half minute
// [h, h + 30) is counted in the phase the worker had during it (changes fall on minutes);
// running time is decided by the latest valid sample of the running stretch (samples fall 30 s
// into a minute) when it is under 2 sample periods (120 s) old, else idle and unmeasured.
Counts model(const GenRun& r, Seconds end) {
    Counts c;
    for (const GenWorker& k : r.w) {
        const Seconds stop = k.ended >= 0 ? k.ended : end - end % kMin;
        for (Seconds h = k.submit; h < stop; h += kMin / 2) {
            // the phase during [h, h + 30): the last change at or before h
            auto it = k.changes.begin();
            for (auto j = k.changes.begin(); j != k.changes.end(); ++j)
                if (std::get<0>(*j) <= h) it = j;
            const auto& [at, p, cause, attempt] = *it;
            const GpuSeconds g = GpuSeconds{r.gpus} * (std::min(stop, h + kMin / 2) - h);
            switch (p) {
                case P::Waiting: c.add(cause, false, g); break;
                case P::Placed: c.add(attempt <= 1 ? Category::Starting : Category::Restart, true, g); break;
                case P::Running: {
                    int decided = -1;  // -1: no valid sample decides; 0 idle; 1 busy
                    for (Seconds ts = h - h % kMin - kMin * 2 + 30; ts <= h; ts += kMin) {
                        const auto s = k.samples.find(ts - 30);
                        if (ts < at || ts + 2 * kMin <= h || s == k.samples.end() || s->second.second == 0)
                            continue;
                        decided = s->second.first / s->second.second >= 5.0 ? 1 : 0;
                    }
                    c.add(decided == 1 ? Category::Productive : Category::Idle, true, g);
                    if (decided < 0) c.add(static_cast<Category>(kCategories), true, g);
                    break;
                }
                case P::StopOwner: c.add(Category::Productive, true, g); break;
                case P::StopStall: c.add(Category::Stalled, true, g); break;
                case P::StopPreempt: c.add(Category::Preemption, true, g); break;
                case P::Failed: c.add(Category::Failure, true, g); break;
                case P::Ended: break;
            }
        }
    }
    return c;
}

// The numbers of one printed table line: HELD USED GOODPUT IDLE STALLED START RESTART FAILURE
// PREEMPT WAITING, in tenths of a GPU-hour (goodput in percent, -1 for "-").
std::vector<long> numbers(const std::string& line) {
    std::vector<long> v;
    std::istringstream in(line.substr(29));
    std::string tok;
    while (in >> tok) {
        if (tok == "-") { v.push_back(-1); continue; }
        if (tok.back() == '%') { v.push_back(std::stol(tok)); continue; }
        const auto dot = tok.find('.');
        v.push_back(std::stol(tok.substr(0, dot)) * 10 + std::stol(tok.substr(dot + 1)));
    }
    return v;
}

TEST(GoodputProperty, RandomLogsAddUp) {
    int aligned_checked = 0, total_lines = 0, went_on = 0;
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const Generated g = generate(seed);
        Replayer r;
        ASSERT_EQ(testing::replay_text(g.text, r), "") << g.text;
        ASSERT_EQ(r.end_s(), g.end);
        total_lines += static_cast<int>(std::count(g.text.begin(), g.text.end(), '\n'));

        // 1. Every second between submission and end, once per worker, times its GPUs.
        ASSERT_EQ(r.run_names().size(), g.runs.size());
        Counts all;
        for (std::size_t i = 0; i < g.runs.size(); ++i) {
            const GenRun& gr = g.runs[i];
            GpuSeconds want = 0;
            for (const GenWorker& k : gr.w) {
                const Seconds stop = k.ended >= 0 ? k.ended : g.end - g.end % kMin;
                went_on += k.ended < 0;
                want += GpuSeconds{gr.gpus} * std::max<Seconds>(0, stop - k.submit);
            }
            const Counts c = r.ledger().run_total(static_cast<int>(i));
            EXPECT_EQ(testing::sum_all(c), want) << gr.name;
            // Categories that cannot be "not held", and "waiting" that cannot be held.
            for (Category k : {Category::Productive, Category::Idle, Category::Starting,
                               Category::Restart})
                EXPECT_EQ(c.not_held_of(k), 0);
            EXPECT_EQ(c.held_of(Category::Waiting), 0);
            EXPECT_GE(c.unmeasured, 0);
            EXPECT_LE(c.unmeasured, c.held_of(Category::Idle));
            for (int j = 0; j < kCategories; ++j) {
                EXPECT_GE(c.held[j], 0);
                EXPECT_GE(c.not_held[j], 0);
            }
            // 2. The independent minute model (aligned logs without progress).
            if (g.aligned && !g.progress) {
                EXPECT_EQ(c, model(gr, g.end)) << gr.name << "\n" << g.text;
                ++aligned_checked;
            }
            all += c;
        }
        EXPECT_EQ(r.ledger().total(), all);

        // 3. Every view of the whole log sums to the same total (machines: the held part).
        const Period p{r.first_s(), r.end_s() + 1};
        for (By by : {By::Run, By::Workspace, By::Pool, By::Machine}) {
            const auto rows = r.ledger().query(by, p);
            Counts sum;
            std::vector<NamedCounts> named;
            for (const Row& row : rows) {
                sum += row.counts;
                named.push_back({r.names(by)[row.id], row.counts});
                // HELD = USED + IDLE + STALLED + START + RESTART + FAILURE + PREEMPT exactly in
                // GPU-seconds, and in the displayed tenths.
                const Figures f = figures(row.counts);
                GpuSeconds seven = 0;
                for (int j = 0; j < 7; ++j) seven += row.counts.held[j];
                EXPECT_EQ(f.allocated, seven);
                const DisplayRow d = display_row(row.counts);
                std::int64_t cols = 0;
                for (auto v : d.held_columns) cols += v;
                EXPECT_EQ(d.held, cols);
                // goodput = used / held
                if (f.allocated > 0) {
                    ASSERT_TRUE(f.goodput.has_value());
                    EXPECT_DOUBLE_EQ(*f.goodput, static_cast<double>(row.counts.held[0]) /
                                                     static_cast<double>(f.allocated));
                    EXPECT_EQ(d.goodput_pct,
                              static_cast<int>(std::floor(100.0 * static_cast<double>(row.counts.held[0]) /
                                                          static_cast<double>(f.allocated) + 0.5)));
                } else {
                    EXPECT_FALSE(f.goodput.has_value());
                    EXPECT_EQ(d.goodput_pct, -1);
                }
            }
            if (by == By::Machine) {
                Counts held_only;
                held_only.held = all.held;
                held_only.unmeasured = all.unmeasured;  // a part of held idle
                EXPECT_EQ(sum, held_only);
            } else {
                EXPECT_EQ(sum, all);
            }
            // 4. The printed table: on every line, HELD = the seven held columns (tenths), and
            // GOODPUT = USED / HELD within the rounding of the two shown numbers.
            const std::string table = goodput_table("RUN", named);
            std::istringstream lines(table);
            std::string line;
            int data_lines = 0;
            while (std::getline(lines, line)) {
                if (line.size() < 30 || line.rfind("GPU-hours", 0) == 0 ||
                    line.rfind("RUN ", 0) == 0 || line.rfind("USED =", 0) == 0 ||
                    line.rfind("utilization not measured", 0) == 0)
                    continue;
                ++data_lines;
                const auto v = numbers(line);
                ASSERT_EQ(v.size(), 10U) << line;
                EXPECT_EQ(v[0], v[1] + v[3] + v[4] + v[5] + v[6] + v[7] + v[8]) << line;
                if (v[0] == 0) continue;
                if (v[2] < 0) ADD_FAILURE() << "goodput '-' with time held: " << line;
                // USED and HELD are each within 0.05 GPU-h of the exact values.
                const double used = static_cast<double>(v[1]), held = static_cast<double>(v[0]);
                const double lo = std::max(0.0, used - 0.5) / (held + 0.5);
                const double hi = (used + 0.5) / std::max(0.5, held - 0.5);
                EXPECT_GE(static_cast<double>(v[2]), std::floor(100 * lo) - 1) << line;
                EXPECT_LE(static_cast<double>(v[2]), std::ceil(100 * hi) + 1) << line;
            }
            EXPECT_EQ(data_lines, static_cast<int>(named.size()) + 1);
        }
    }
    // The generator exercised what it should.
    EXPECT_GT(aligned_checked, 100);
    EXPECT_GT(total_lines, 10000);
    EXPECT_GT(went_on, 20);
}

}  // namespace
}  // namespace astraeus::goodput
