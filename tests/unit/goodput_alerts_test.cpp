// goodput_drop and threshold alerts, straggler detection, their wiring into the replay, and the
// counter's O(changes) cost.
#include <gtest/gtest.h>

#include "astraeus/goodput/alerts.hpp"
#include "astraeus/goodput/counter.hpp"
#include "astraeus/goodput/stragglers.hpp"
#include "goodput_test_util.hpp"

namespace astraeus::goodput {
namespace {
using testing::Log;
using testing::replay_text;

constexpr Seconds kMin = 60;
constexpr Seconds T0 = 1793613600;  // 2026-11-02T10:00:00Z

// ---- goodput_drop on a hand-filled ledger ------------------------------------------------------

// One run (workspace 0, pool 0): `day_p`/`day_i` GPU-seconds productive/idle in an hour of the
// 24 before the last complete hour, `hour_p`/`hour_i` in that hour; evaluated at E.
constexpr Seconds E = T0 + 30 * kHour;  // an hour boundary
std::vector<Alert> drop_at_e(GpuSeconds day_p, GpuSeconds day_i, GpuSeconds hour_p,
                             GpuSeconds hour_i, DropConfig cfg = {}) {
    GoodputLedger l;
    l.set_run(0, 0, 0);
    const Seconds day_hour = E - 5 * kHour;  // inside [E - 25 h, E - 1 h)
    if (day_p) l.add({0, 0, day_hour, Category::Productive, true, day_p});
    if (day_i) l.add({0, 0, day_hour, Category::Idle, true, day_i});
    if (hour_p) l.add({0, 0, E - kHour, Category::Productive, true, hour_p});
    if (hour_i) l.add({0, 0, E - kHour, Category::Idle, true, hour_i});
    // Not-held time changes no goodput.
    l.add({0, -1, E - kHour, Category::Waiting, false, 99999});
    AlertEngine engine(cfg, {});
    return engine.evaluate(E, l, {});
}

TEST(GoodputDrop, ThresholdsOfThePage) {
    // day 70 %, hour 1764 / 3600 = 49 %: 21 points under, 1 GPU-hour held: workspace and pool.
    auto a = drop_at_e(7000, 3000, 1764, 1836);
    ASSERT_EQ(a.size(), 2U);
    EXPECT_EQ(a[0].scope, ScopeKind::Workspace);
    EXPECT_EQ(a[1].scope, ScopeKind::Pool);
    EXPECT_EQ(a[0].state, AlertState::Firing);
    EXPECT_EQ(a[0].since, E);
    EXPECT_DOUBLE_EQ(a[0].value, 0.49);
    EXPECT_DOUBLE_EQ(a[0].previous, 0.70);
    // day 69 %, hour 49 %: exactly 20 points under fires (0.69 - 0.49 is 0.19999999999999996).
    EXPECT_EQ(drop_at_e(6900, 3100, 1764, 1836).size(), 2U);
    // day 68 %: 19 points: no.
    EXPECT_EQ(drop_at_e(6800, 3200, 1764, 1836).size(), 0U);
    // hour exactly 50 %: not under 50 %.
    EXPECT_EQ(drop_at_e(10000, 0, 1800, 1800).size(), 0U);
    // hour 0 % but 3599 GPU-seconds held (under one GPU-hour): no; 3600: yes.
    EXPECT_EQ(drop_at_e(10000, 0, 0, 3599).size(), 0U);
    EXPECT_EQ(drop_at_e(10000, 0, 0, 3600).size(), 2U);
    // nothing held the day before: no goodput to drop from.
    EXPECT_EQ(drop_at_e(0, 0, 0, 7200).size(), 0U);
    // The cluster's thresholds: under 60 %, 10 points, 2 GPU-hours held.
    const DropConfig c{0.60, 0.10, 7200};
    EXPECT_EQ(drop_at_e(7000, 3000, 4140, 3060, c).size(), 2U);  // 57.5 %, 12.5 points
    EXPECT_EQ(drop_at_e(7000, 3000, 2070, 1530, c).size(), 0U);  // 3600 held < 7200
}

TEST(GoodputDrop, FiresAndResolvesInAReplayedScenario) {
    // Workspace "ml", pool "a100": a run of 4 GPUs busy from 10:00 for 24 hours, idle (0 %)
    // the next hour, busy again for two hours, ends at T0 + 27 h. Another workspace's run in
    // the same pool stays busy throughout on 2 GPUs.
    // At T0 + 25 h the last complete hour of "ml" is 0 % (4 GPU-hours held) against 100 % the
    // 24 hours before: goodput_drop fires for workspace ml. Pool a100: that hour 2 / 6 = 33 %
    // against 100 %: fires too. Workspace "cv" stays at 100 %. At T0 + 26 h the last hour is
    // 100 % again: both resolve.
    Log log;
    log.submit(T0, "llm", "ml", "a100", 1, 4).place(T0, "llm", 0, "m1").move(T0, "start", "llm", 0);
    log.submit(T0, "cnn", "cv", "a100", 1, 2).place(T0, "cnn", 0, "m2").move(T0, "start", "cnn", 0);
    log.util_minutes(T0, T0 + 24 * kHour, "llm", 0, "97, 98, 99, 96");
    log.util_minutes(T0 + 24 * kHour, T0 + 25 * kHour, "llm", 0, "0, 0, 0, 0");
    log.util_minutes(T0 + 25 * kHour, T0 + 27 * kHour, "llm", 0, "90");
    log.util_minutes(T0, T0 + 27 * kHour, "cnn", 0, "60, 70");
    log.move(T0 + 27 * kHour, "end", "llm").move(T0 + 27 * kHour, "end", "cnn");
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    const auto& a = r.alert_log();
    ASSERT_EQ(a.size(), 4U);
    EXPECT_EQ(a[0].at_s, T0 + 25 * kHour);
    EXPECT_EQ(a[0].alert, "goodput_drop");
    EXPECT_EQ(a[0].scope, "workspace");
    EXPECT_EQ(a[0].name, "ml");
    EXPECT_EQ(a[0].state, "firing");
    EXPECT_DOUBLE_EQ(a[0].value, 0.0);
    EXPECT_DOUBLE_EQ(*a[0].previous, 1.0);
    EXPECT_EQ(a[1].scope, "pool");
    EXPECT_EQ(a[1].name, "a100");
    EXPECT_EQ(a[1].state, "firing");
    EXPECT_DOUBLE_EQ(a[1].value, 2.0 / 6.0);  // 2 productive of 6 GPU-hours held
    EXPECT_EQ(a[2].at_s, T0 + 26 * kHour);
    EXPECT_EQ(a[2].state, "resolved");
    EXPECT_EQ(a[2].name, "ml");
    EXPECT_EQ(a[3].state, "resolved");
    EXPECT_EQ(a[3].name, "a100");
}

// ---- threshold alerts ---------------------------------------------------------------------------

TEST(ThresholdAlerts, PendingFiringResolvedWithAForDuration) {
    GoodputLedger l;
    l.set_run(0, 0, 0);
    l.set_run(1, 1, 1);
    // Pool 0's current hour [E, ...): 1000 productive of 3600 held (27.8 %).
    l.add({0, 0, E, Category::Productive, true, 1000});
    l.add({0, 0, E, Category::Idle, true, 2600});
    l.add({1, 1, E, Category::Productive, true, 3600});  // pool 1: 100 %
    ThresholdRule pool0;
    pool0.metric = "pool_goodput_hour";
    pool0.what = *parse_metric("pool_goodput_hour");
    pool0.scope_id = 0;
    pool0.op = Op::Less;
    pool0.value = 0.6;
    pool0.for_s = 600;
    ThresholdRule pool1 = pool0;
    pool1.scope_id = 1;
    ThresholdRule stalled;
    stalled.metric = "workers_stalled";
    stalled.what = *parse_metric("workers_stalled");
    stalled.op = Op::Greater;
    stalled.value = 5;
    AlertEngine engine({}, {pool0, pool1, stalled});

    auto t = engine.evaluate(E + kMin, l, {{3, 2}, {}});  // 5 stalled: not > 5
    ASSERT_EQ(t.size(), 1U);
    EXPECT_EQ(t[0].rule, 0);
    EXPECT_EQ(t[0].state, AlertState::Pending);
    EXPECT_EQ(t[0].since, E + kMin);
    EXPECT_NEAR(t[0].value, 1000.0 / 3600.0, 1e-12);
    EXPECT_TRUE(engine.evaluate(E + 5 * kMin, l, {{3, 2}, {}}).empty());  // still pending
    t = engine.evaluate(E + 11 * kMin, l, {{3, 3}, {}});  // held 10 min; 6 stalled now
    ASSERT_EQ(t.size(), 2U);
    EXPECT_EQ(t[0].rule, 0);
    EXPECT_EQ(t[0].state, AlertState::Firing);
    EXPECT_EQ(t[0].since, E + 11 * kMin);
    EXPECT_EQ(t[1].rule, 2);
    EXPECT_EQ(t[1].scope, ScopeKind::Cluster);
    EXPECT_EQ(t[1].state, AlertState::Firing);  // no `for`: fires at once
    EXPECT_DOUBLE_EQ(t[1].value, 6);
    EXPECT_EQ(engine.alerts().size(), 2U);
    auto firing = engine.firing_by_metric();
    EXPECT_EQ(firing["pool_goodput_hour"], 1);
    EXPECT_EQ(firing["workers_stalled"], 1);
    // Pool 0 recovers: 11000 / 13600 = 81 %; the stalled workers too.
    l.add({0, 0, E, Category::Productive, true, 10000});
    t = engine.evaluate(E + 12 * kMin, l, {{1}, {}});
    ASSERT_EQ(t.size(), 2U);
    EXPECT_EQ(t[0].state, AlertState::Resolved);
    EXPECT_EQ(t[0].since, E + 12 * kMin);
    // A resolved alert shows the value at resolution, not the stale firing one (27.8 %, 6).
    EXPECT_NEAR(t[0].value, 11000.0 / 13600.0, 1e-12);
    EXPECT_EQ(t[1].state, AlertState::Resolved);
    EXPECT_DOUBLE_EQ(t[1].value, 1);
    EXPECT_TRUE(engine.alerts().empty());
    EXPECT_EQ(engine.firing_by_metric()["pool_goodput_hour"], 0);
    // At the next hour boundary the "hour" is the hour just completed (81 %); an hour later,
    // with nothing counted since, the goodput is absent: no alert either way.
    EXPECT_TRUE(engine.evaluate(E + kHour, l, {}).empty());
    EXPECT_TRUE(engine.evaluate(E + 2 * kHour, l, {}).empty());
}

TEST(ThresholdAlerts, APendingAlertThatClearsIsDroppedSilently) {
    GoodputLedger l;
    l.set_run(0, 0, 0);
    l.add({0, 0, E, Category::Idle, true, 3600});
    ThresholdRule r;
    r.metric = "cluster_goodput_day";
    r.what = *parse_metric("cluster_goodput_day");
    r.value = 0.5;
    r.for_s = 3600;
    AlertEngine engine({}, {r});
    ASSERT_EQ(engine.evaluate(E + kMin, l, {}).size(), 1U);  // pending
    l.add({0, 0, E, Category::Productive, true, 36000});
    EXPECT_TRUE(engine.evaluate(E + 2 * kMin, l, {}).empty());
    EXPECT_TRUE(engine.alerts().empty());
}

TEST(ThresholdAlerts, MetricNames) {
    EXPECT_EQ(parse_metric("machine_goodput_day")->scope, ScopeKind::Machine);
    EXPECT_EQ(parse_metric("workspace_goodput_hour")->metric, Metric::GoodputHour);
    EXPECT_EQ(parse_metric("runs_with_straggler")->metric, Metric::RunsWithStraggler);
    EXPECT_FALSE(parse_metric("pool_goodput").has_value());
    EXPECT_FALSE(parse_op("<=").has_value());
}

// ---- stragglers ---------------------------------------------------------------------------------

TEST(Stragglers, RateUnderHalfTheGangMedian) {
    StragglerDetector d;  // 10 minutes, 1/2
    d.set_gang(0, 4);
    // Reports every minute for 20 minutes: workers 0 and 1 at 10 steps/s, worker 2 at 4
    // (under half of the median 10), worker 3 never reports.
    for (int m = 0; m <= 20; ++m) {
        d.progress(0, 0, T0 + m * kMin, 600 * m);
        d.progress(0, 1, T0 + m * kMin, 600 * m);
        d.progress(0, 2, T0 + m * kMin, 240 * m);
    }
    const Seconds now = T0 + 20 * kMin;
    EXPECT_DOUBLE_EQ(d.rate(0, 0, now), 10.0);
    EXPECT_DOUBLE_EQ(d.rate(0, 2, now), 4.0);
    EXPECT_LT(d.rate(0, 3, now), 0);  // never reported: not judged
    EXPECT_EQ(d.stragglers(0, now), std::vector<int>{2});
    EXPECT_EQ(d.runs_with_straggler(now), std::vector<int>{0});
    // Less than a window of history: not judged yet (5 minutes in).
    EXPECT_TRUE(d.stragglers(0, T0 + 5 * kMin).empty());
}

TEST(Stragglers, ExactlyHalfIsNotAStragglerAndEdgeCases) {
    StragglerDetector d;
    d.set_gang(0, 3);
    for (int m = 0; m <= 10; ++m) {
        d.progress(0, 0, T0 + m * kMin, 600 * m);
        d.progress(0, 1, T0 + m * kMin, 600 * m);
        d.progress(0, 2, T0 + m * kMin, 300 * m);  // 5 steps/s = half of 10: not under
    }
    EXPECT_TRUE(d.stragglers(0, T0 + 10 * kMin).empty());
    // Worker 2 stops reporting: 11 minutes later its rate over the window is 0.
    for (int m = 11; m <= 21; ++m) {
        d.progress(0, 0, T0 + m * kMin, 600 * m);
        d.progress(0, 1, T0 + m * kMin, 600 * m);
    }
    EXPECT_EQ(d.stragglers(0, T0 + 21 * kMin), std::vector<int>{2});
    // A reset (a new attempt) forgets it; a gang with one judged worker has no straggler.
    d.reset(0, 2);
    EXPECT_TRUE(d.stragglers(0, T0 + 21 * kMin).empty());
    d.reset(0, 1);
    EXPECT_TRUE(d.stragglers(0, T0 + 21 * kMin).empty());
    // A whole gang without progress (median 0): no straggler.
    StragglerDetector z;
    z.set_gang(0, 2);
    for (int m = 0; m <= 10; ++m) {
        z.progress(0, 0, T0 + m * kMin, 5);
        z.progress(0, 1, T0 + m * kMin, 5);
    }
    EXPECT_TRUE(z.stragglers(0, T0 + 10 * kMin).empty());
    // A step going down (restart from a checkpoint) starts the history again.
    StragglerDetector c({600, 0.5});
    c.set_gang(0, 2);
    c.progress(0, 0, T0, 1000);
    c.progress(0, 0, T0 + 15 * kMin, 100);
    EXPECT_LT(c.rate(0, 0, T0 + 15 * kMin), 0);
}

TEST(Stragglers, ConfigurableWindowAndRatio) {
    StragglerDetector d({120, 0.9});
    d.set_gang(0, 2);
    for (int m = 0; m <= 3; ++m) {
        d.progress(0, 0, T0 + m * kMin, 100 * m);
        d.progress(0, 1, T0 + m * kMin, 80 * m);
    }
    // median of 100/60 and 80/60 = 90/60; 80/60 < 0.9 x 90/60 = 81/60: a straggler.
    EXPECT_EQ(d.stragglers(0, T0 + 3 * kMin), std::vector<int>{1});
}

TEST(Stragglers, ReplayReportsRunsWithAStragglerAndAlertsOnThem) {
    // A gang of 3 reporting progress every minute from 10:00 to 11:05: workers 0 and 1 100
    // steps a minute, worker 2 40 (under half). An operator alert on runs_with_straggler > 0 in
    // workspace ml fires at the 11:00 evaluation.
    Log log;
    log.line(R"({"event":"config","thresholds":[{"metric":"runs_with_straggler","scope":"ml","op":">","value":0}]})");
    log.submit(T0, "llm", "ml", "a100", 3, 8).place_all(T0, "llm", "m1").move(T0, "start", "llm");
    for (int m = 1; m <= 65; ++m) {
        log.progress(T0 + m * kMin, "llm", 0, 100 * m);
        log.progress(T0 + m * kMin, "llm", 1, 100 * m);
        log.progress(T0 + m * kMin, "llm", 2, 40 * m);
    }
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    EXPECT_EQ(r.runs_with_straggler(), std::vector<int>{0});
    EXPECT_EQ(r.stragglers_of(0), std::vector<int>{2});
    ASSERT_EQ(r.alert_log().size(), 1U);
    EXPECT_EQ(r.alert_log()[0].alert, "runs_with_straggler");
    EXPECT_EQ(r.alert_log()[0].at_s, T0 + kHour);
    EXPECT_EQ(r.alert_log()[0].name, "ml");
    EXPECT_EQ(r.alert_log()[0].state, "firing");
    EXPECT_EQ(*r.alert_log()[0].op, ">");
}

// ---- the counter's cost --------------------------------------------------------------------------

struct CountingSink final : DeltaSink {
    int adds = 0;
    GoodputLedger ledger;
    void add(const Delta& d) override {
        ++adds;
        ledger.add(d);
    }
};

TEST(CounterCost, ThirtyQuietDaysCostHoursNotMinutes) {
    constexpr Seconds kDays = 30 * 86400;
    {
        // The simulator's form: a utilization level, one advance at the end.
        CountingSink sink;
        GoodputCounter c({}, sink);
        const int w = c.add_worker(T0, 0, 8);
        const HeldPart part{0, 8};
        ASSERT_TRUE(c.place(T0, w, {&part, 1}));
        ASSERT_TRUE(c.start(T0, w));
        ASSERT_TRUE(c.utilization_level(T0, w, 90));
        c.advance(T0 + kDays);
        // 720 hours: one delta per hour (43200 minutes would be 43200 deltas).
        EXPECT_LE(sink.adds, 30 * 24 + 2);
        EXPECT_EQ(sink.ledger.total().held_of(Category::Productive), 8 * kDays);
    }
    {
        // Samples: one 10 s in (50 %: it decides 10:00:10-10:00:30, 2 periods of 10 s), then
        // none, and progress reports every 5 minutes for the first hour (the stall journal is
        // per hour too). 10:00:00-10:00:10 and 10:00:30-10:05 are decided by neither: idle and
        // unmeasured (280 s); from the first report (10:05) progress decides: productive until
        // the last report (11:00), then stalled (detected at 11:10, moved back to 11:00).
        CountingSink sink;
        GoodputCounter c({}, sink);
        const int w = c.add_worker(T0, 0, 8);
        const HeldPart part{0, 8};
        ASSERT_TRUE(c.place(T0, w, {&part, 1}));
        ASSERT_TRUE(c.start(T0, w));
        const double s[] = {50.0};
        ASSERT_TRUE(c.utilization(T0 + 10, w, s));
        for (int m = 5; m <= 60; m += 5) ASSERT_TRUE(c.progress(T0 + m * kMin, w, m));
        c.advance(T0 + kDays);
        // Stall detected at 11:10: hours moved once; a few deltas per hour at most.
        EXPECT_LE(sink.adds, 30 * 24 + 40);
        EXPECT_EQ(testing::sum_all(sink.ledger.total()), 8 * kDays);
        EXPECT_EQ(sink.ledger.total().held_of(Category::Productive), 8 * (20 + 55 * kMin));
        EXPECT_EQ(sink.ledger.total().held_of(Category::Idle), 8 * 280);
        EXPECT_EQ(sink.ledger.total().unmeasured, 8 * 280);
        EXPECT_EQ(sink.ledger.total().held_of(Category::Stalled), 8 * (kDays - kHour));
    }
    {
        // Through the replay (which advances the counter at every hour boundary): rows stay
        // one per hour and kind (idle, and its unmeasured part: no sample, no progress).
        Log log;
        log.submit(T0, "q", "ws", "p", 1, 8).place(T0, "q", 0, "m").move(T0, "start", "q", 0);
        log.move(T0 + kDays, "end", "q");
        Replayer r;
        ASSERT_EQ(replay_text(log.text(), r), "");
        EXPECT_LE(r.ledger().row_count(), 2 * (30U * 24) + 2);
        EXPECT_EQ(r.unmeasured_gpu_s(), 8 * kDays);
    }
}

}  // namespace
}  // namespace astraeus::goodput
