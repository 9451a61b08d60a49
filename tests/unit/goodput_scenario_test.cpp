// Goodput scenarios through the event log (docs/formats/goodput-events.md), with GPU-seconds
// computed by hand in the comments. 1 GPU-minute = 60 GPU-seconds.
#include <gtest/gtest.h>

#include "astraeus/goodput/ledger.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/goodput_io/table.hpp"
#include "goodput_test_util.hpp"

namespace astraeus::goodput {
namespace {
using testing::Log;
using testing::replay_text;

constexpr Seconds kMin = 60;
constexpr Seconds T0 = 1793613600;  // 2026-11-02T10:00:00Z, a Monday

Counts counts(std::initializer_list<std::tuple<Category, bool, GpuSeconds>> parts,
              GpuSeconds unmeasured = 0) {
    Counts c;
    for (const auto& [k, h, v] : parts) c.add(k, h, v);
    c.unmeasured = unmeasured;
    return c;
}

TEST(GoodputScenario, FailHoldThreeMinutesWaitTenRestart) {
    // One worker with 4 GPUs: waits 2 min, starts for 3 min, runs busy 15 min, fails and holds
    // its GPUs 3 min, waits 10 min to be placed again, restarts for 3 min, runs busy 14 min.
    Log log;
    log.submit(T0, "r", "ws", "a100", 1, 4)
        .place(T0 + 2 * kMin, "r", 0, "m1")
        .move(T0 + 5 * kMin, "start", "r", 0)
        .util_minutes(T0 + 5 * kMin, T0 + 20 * kMin, "r", 0, "90, 80, 70, 60")
        .move(T0 + 20 * kMin, "fail", "r", 0)
        .move(T0 + 23 * kMin, "release", "r", 0)
        .place(T0 + 33 * kMin, "r", 0, "m2")
        .move(T0 + 36 * kMin, "start", "r", 0)
        .util_minutes(T0 + 36 * kMin, T0 + 50 * kMin, "r", 0, "50")
        .move(T0 + 50 * kMin, "end", "r", 0);
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    const Counts want = counts({
        {Category::Waiting, false, 2 * 4 * kMin},          // 480
        {Category::Starting, true, 3 * 4 * kMin},          // 720
        {Category::Productive, true, (15 + 14) * 4 * kMin},  // 6960
        {Category::Failure, true, 3 * 4 * kMin},           // 720: failed, holding
        {Category::Failure, false, 10 * 4 * kMin},         // 2400: waiting again after it
        {Category::Restart, true, 3 * 4 * kMin},           // 720
    });
    EXPECT_EQ(r.ledger().run_total(0), want);
    // Every second from submission (10:00) to end (10:50) once: 50 min x 4 GPUs = 12000.
    EXPECT_EQ(testing::sum_all(r.ledger().run_total(0)), 50 * 4 * kMin);
    // By machine: m1 had starting 720 + productive 15 min x 4 = 3600 + failure 720; m2 restart
    // 720 + productive 14 x 4 min = 3360. Waits belong to no machine.
    const auto rows = r.ledger().query(By::Machine, {T0, T0 + kHour});
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0].counts, counts({{Category::Starting, true, 720},
                                      {Category::Productive, true, 3600},
                                      {Category::Failure, true, 720}}));
    EXPECT_EQ(rows[1].counts,
              counts({{Category::Restart, true, 720}, {Category::Productive, true, 3360}}));
    const Figures f = figures(want);
    EXPECT_EQ(f.allocated, 720 + 6960 + 720 + 720);
    EXPECT_EQ(f.waiting, 480 + 2400);
    EXPECT_EQ(f.lost, 12000 - 6960);
    EXPECT_EQ(r.unmeasured_gpu_s(), 0);
}

TEST(GoodputScenario, StallDetectedAfterTheTimeoutMovesEarlierMinutes) {
    // 2 GPUs, placed and started at T0, busy every minute, progress every minute until 10:10,
    // then none: with the 600 s timeout the stall is detected at 10:20 and the minutes from
    // 10:10 move from productive to stalled. It stops for the stall at 10:40, releases at
    // 10:42, is placed again at 10:45, restarts until 10:46 and runs busy until its end at 10:50.
    // The samples come 30 s into each minute (a sample decides up to 120 s): the first 30 s
    // (10:00:00-10:00:30) have no sample and no progress yet: idle, unmeasured (30 x 2 = 60).
    Log log;
    log.submit(T0, "r", "ws", "a100", 1, 2).place(T0, "r", 0, "m1").move(T0, "start", "r", 0);
    for (int k = 0; k < 40; ++k) {
        if (k >= 1 && k <= 10) log.progress(T0 + k * kMin, "r", 0, k);
        log.util(T0 + k * kMin + 30, "r", 0, "90, 95");
    }
    log.stop(T0 + 40 * kMin, "r", 0, "stall")
        .move(T0 + 42 * kMin, "release", "r", 0)
        .place(T0 + 45 * kMin, "r", 0, "m1")
        .move(T0 + 46 * kMin, "start", "r", 0)
        .util_minutes(T0 + 46 * kMin, T0 + 50 * kMin, "r", 0, "90")
        .move(T0 + 50 * kMin, "end", "r", 0);
    {
        // Accounted up to 10:15: the stall is not detected yet, all 15 minutes are productive.
        ReplayOptions o;
        o.end_s = T0 + 15 * kMin;
        Replayer early(o);
        ASSERT_EQ(replay_text(log.text(), early), "");
        EXPECT_EQ(early.ledger().run_total(0),
                  counts({{Category::Productive, true, 15 * 2 * kMin - 60}, {Category::Idle, true, 60}}, 60));
        EXPECT_EQ(early.counter()->stalled_now(), 0);
    }
    {
        // Up to 10:25: detected at 10:20; 10:10..10:25 stalled (15 min), 10:00..10:10 productive.
        ReplayOptions o;
        o.end_s = T0 + 25 * kMin;
        Replayer mid(o);
        ASSERT_EQ(replay_text(log.text(), mid), "");
        EXPECT_EQ(mid.ledger().run_total(0), counts({{Category::Productive, true, 10 * 2 * kMin - 60},
                                                     {Category::Idle, true, 60},
                                                     {Category::Stalled, true, 15 * 2 * kMin}},
                                                    60));
        EXPECT_EQ(mid.counter()->stalled_now(), 1);
    }
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    const Counts want = counts({
        {Category::Productive, true, (10 + 4) * 2 * kMin - 60},  // 10:00:30-10:10, 10:46-10:50
        {Category::Idle, true, 60},                         // 10:00:00-10:00:30, no sample
        {Category::Stalled, true, (30 + 2) * 2 * kMin},     // 10:10-10:40 running, 10:40-10:42 stopping
        {Category::Stalled, false, 3 * 2 * kMin},           // 10:42-10:45 waiting after a stall
        {Category::Restart, true, 1 * 2 * kMin},            // 10:45-10:46
    }, 60);
    EXPECT_EQ(r.ledger().run_total(0), want);
    EXPECT_EQ(testing::sum_all(want), 50 * 2 * kMin);
    // The move leaves no negative row behind in any view.
    for (By by : {By::Run, By::Machine, By::Pool, By::Workspace})
        for (const Row& row : r.ledger().query(by, {T0, T0 + kHour}))
            for (int i = 0; i < kCategories; ++i) {
                EXPECT_GE(row.counts.held[i], 0);
                EXPECT_GE(row.counts.not_held[i], 0);
            }
}

TEST(GoodputScenario, StallTimeoutFromTheConfigLineAndTheCommandLine) {
    // Progress at 10:01 only, busy every minute until the end at 10:20.
    auto make = [](const std::string& config) {
        Log log;
        if (!config.empty()) log.line(config);
        log.submit(T0, "r", "ws", "p", 1, 1).place(T0, "r", 0, "m").move(T0, "start", "r", 0);
        log.progress(T0 + kMin, "r", 0, 1).util_minutes(T0, T0 + 20 * kMin, "r", 0, "50");
        log.move(T0 + 20 * kMin, "end", "r");
        return log.text();
    };
    {  // default 600 s: detected at 10:11, stalled from 10:01: 19 min stalled, 1 productive
        Replayer r;
        ASSERT_EQ(replay_text(make(""), r), "");
        EXPECT_EQ(r.ledger().run_total(0), counts({{Category::Productive, true, 60},
                                                   {Category::Stalled, true, 19 * 60}}));
    }
    {  // the log says 1800 s: never detected before the end (10:31 > 10:20)
        Replayer r;
        ASSERT_EQ(replay_text(make(R"({"event":"config","stall_timeout_s":1800})"), r), "");
        EXPECT_EQ(r.ledger().run_total(0), counts({{Category::Productive, true, 20 * 60}}));
    }
    {  // the command line wins over the log: 300 s, detected at 10:06, stalled from 10:01
        ReplayOptions o;
        o.stall_timeout_s = 300;
        Replayer r(o);
        ASSERT_EQ(replay_text(make(R"({"event":"config","stall_timeout_s":1800})"), r), "");
        EXPECT_EQ(r.ledger().run_total(0), counts({{Category::Productive, true, 60},
                                                   {Category::Stalled, true, 19 * 60}}));
    }
}

TEST(GoodputScenario, OwnerStopWindsDownProductivelyAndPreemptionWaits) {
    // "own": 8 GPUs, waits 1 min, starts 2 min, busy 7 min, stopped by its owner at 10:10 and
    // winding down until its end at 10:12 (productive although no samples come).
    // "pre": 1 GPU, placed and started at once, busy 5 min, preempted at 10:05, stopping 1 min,
    // released at 10:06, waits 10 min, restarts 1 min, busy 3 min, ends at 10:20.
    Log log;
    log.submit(T0, "own", "ws", "a100", 1, 8).submit(T0, "pre", "ws", "a100", 1, 1);
    log.place(T0, "pre", 0, "m2").move(T0, "start", "pre", 0);
    log.place(T0 + kMin, "own", 0, "m1").move(T0 + 3 * kMin, "start", "own", 0);
    log.util_minutes(T0, T0 + 5 * kMin, "pre", 0, "100");
    log.util_minutes(T0 + 3 * kMin, T0 + 10 * kMin, "own", 0, "99, 98, 97, 96, 95, 94, 93, 92");
    log.stop(T0 + 5 * kMin, "pre", 0, "preemption").move(T0 + 6 * kMin, "release", "pre", 0);
    log.stop(T0 + 10 * kMin, "own", 0, "owner").move(T0 + 12 * kMin, "end", "own");
    log.place(T0 + 16 * kMin, "pre", 0, "m2").move(T0 + 17 * kMin, "start", "pre", 0);
    log.util_minutes(T0 + 17 * kMin, T0 + 20 * kMin, "pre", 0, "100").move(T0 + 20 * kMin, "end", "pre");
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    EXPECT_EQ(r.ledger().run_total(0), counts({
                                           {Category::Waiting, false, 1 * 8 * kMin},      // 480
                                           {Category::Starting, true, 2 * 8 * kMin},      // 960
                                           {Category::Productive, true, 9 * 8 * kMin},    // 4320
                                       }));
    EXPECT_EQ(r.ledger().run_total(1), counts({
                                           {Category::Productive, true, 8 * kMin},   // 5 + 3 min
                                           {Category::Preemption, true, 1 * kMin},   // stopping
                                           {Category::Preemption, false, 10 * kMin}, // waiting again
                                           {Category::Restart, true, 1 * kMin},
                                       }));
    // An owner's stop ends with "end", not "release": a clear error with file and line.
    Log bad;
    bad.submit(T0, "x", "ws", "p", 2, 1).place_all(T0, "x", "m").move(T0, "start", "x");
    bad.stop(T0 + kMin, "x", 1, "owner").move(T0 + 2 * kMin, "release", "x", 1);
    Replayer rb;
    EXPECT_EQ(replay_text(bad.text(), rb),
              "test.jsonl:5: 'release' event: release: run 'x' worker 1 is not failed or stopping "
              "for a stall or preemption (an owner's stop ends with end)");
}

TEST(GoodputScenario, FivePercentIsBusyFourPointNineIsIdle) {
    // Four runs of 2 GPUs, each running 10 minutes (10:00-10:10) with one sample at the start of
    // each minute (each decides its minute: the log's sample period is 60 s):
    //   five: [5, 5] -> mean 5.0 >= 5: productive 10 x 2 min = 1200
    //   low: [4.9, 4.9] -> 4.9 < 5: idle 1200
    //   mixed: [0, 10] -> mean 5.0: productive; uneven: [9.8, 0] -> mean 4.9: idle
    // and "bad": samples [4294967295, null] and [-1, 50] each minute (one value per GPU per
    // line; 3 invalid, the 50 counts: productive) for 5 minutes, then no samples for 5 minutes:
    // the sample at 10:04 decides 2 periods (to 10:06): productive 6 min x 2 = 720; 10:06-10:10
    // no sample, no progress: idle and unmeasured 4 min x 2 = 480.
    Log log;
    const char* names[] = {"five", "low", "mixed", "uneven", "bad"};
    const char* samples[] = {"5, 5", "4.9, 4.9", "0, 10", "9.8, 0"};
    for (const char* n : names) log.submit(T0, n, "ws", "p", 1, 2);
    for (const char* n : names) log.place(T0, n, 0, "m").move(T0, "start", n, 0);
    for (int m = 0; m < 10; ++m) {
        for (int i = 0; i < 4; ++i) log.util(T0 + m * kMin, names[i], 0, samples[i]);
        if (m < 5) {
            log.util(T0 + m * kMin, "bad", 0, "4294967295, null");
            log.util(T0 + m * kMin, "bad", 0, "-1, 50");
        }
    }
    log.move(T0 + 10 * kMin, "end", "five").move(T0 + 10 * kMin, "end", "low");
    log.move(T0 + 10 * kMin, "end", "mixed").move(T0 + 10 * kMin, "end", "uneven");
    log.move(T0 + 10 * kMin, "end", "bad");
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    EXPECT_EQ(r.ledger().run_total(0), counts({{Category::Productive, true, 1200}}));
    EXPECT_EQ(r.ledger().run_total(1), counts({{Category::Idle, true, 1200}}));
    EXPECT_EQ(r.ledger().run_total(2), counts({{Category::Productive, true, 1200}}));
    EXPECT_EQ(r.ledger().run_total(3), counts({{Category::Idle, true, 1200}}));
    EXPECT_EQ(r.ledger().run_total(4),
              counts({{Category::Productive, true, 720}, {Category::Idle, true, 480}}, 480));
    EXPECT_EQ(r.invalid_samples(), 5 * 3);
    EXPECT_EQ(r.unmeasured_gpu_s(), 480);
    EXPECT_EQ(r.ledger().run_total(4).unmeasured, 480);
    // The busy threshold is configurable: at 4.9 % the "low" run is productive.
    ReplayOptions o;
    o.busy_pct = 4.9;
    Replayer r49(o);
    ASSERT_EQ(replay_text(log.text(), r49), "");
    EXPECT_EQ(r49.ledger().run_total(1), counts({{Category::Productive, true, 1200}}));
}

TEST(GoodputScenario, CountAcrossAnHourAndAnIsoWeekBoundary) {
    // Sunday 2026-11-22 23:58:00 UTC (ISO week 47) to Monday 2026-11-23 00:03:00 (week 48).
    const Seconds monday = 1795392000;  // 2026-11-23T00:00:00Z
    ASSERT_EQ(format_rfc3339(monday), "2026-11-23T00:00:00Z");
    // "busy": 4 GPUs running busy 23:58 -> 00:03: 2 min on Sunday, 3 on Monday.
    // "late": 2 GPUs submitted 23:59:30, waiting until placed at 00:00:30 (30 s each side of
    // midnight), starting until 00:01:30, then running without samples (idle) until 00:03:00.
    Log log;
    log.submit(monday - 2 * kMin, "busy", "ws", "p", 1, 4)
        .place(monday - 2 * kMin, "busy", 0, "m1")
        .move(monday - 2 * kMin, "start", "busy", 0)
        .util_minutes(monday - 2 * kMin, monday + 3 * kMin, "busy", 0, "100")
        .submit(monday - 30, "late", "ws", "p", 1, 2)
        .place(monday + 30, "late", 0, "m2")
        .move(monday + 90, "start", "late", 0)
        .move(monday + 3 * kMin, "end", "busy")
        .move(monday + 3 * kMin, "end", "late");
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    const Period sunday_hour{monday - kHour, monday};
    const Period monday_hour{monday, monday + kHour};
    auto rows = r.ledger().query(By::Run, sunday_hour);
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0].counts, counts({{Category::Productive, true, 2 * 4 * kMin}}));  // 480
    EXPECT_EQ(rows[1].counts, counts({{Category::Waiting, false, 30 * 2}}));          // 60
    rows = r.ledger().query(By::Run, monday_hour);
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0].counts, counts({{Category::Productive, true, 3 * 4 * kMin}}));  // 720
    // late, to the second: waiting 00:00:00-00:00:30 = 30 s x 2 = 60 (not held); starting
    // 00:00:30-00:01:30 = 60 s x 2 = 120; running 00:01:30-00:03 without samples or progress:
    // idle and unmeasured 90 s x 2 = 180. 23:59:30 -> 00:03 = 210 s x 2 = 60 + 60 + 120 + 180.
    Counts late = counts({{Category::Waiting, false, 60}, {Category::Starting, true, 120},
                          {Category::Idle, true, 180}});
    late.unmeasured = 180;
    EXPECT_EQ(rows[1].counts, late);
    EXPECT_EQ(r.unmeasured_gpu_s(), 180);
    // Weekly: week 47 (from 2026-11-16) holds Sunday's minutes, week 48 Monday's.
    auto weeks = r.ledger().weekly(By::Run, r.end_s(), 1);
    ASSERT_TRUE(weeks.has_value());
    ASSERT_EQ(weeks->size(), 2U);
    EXPECT_EQ(iso_week_label((*weeks)[0].week_start_s), "2026-W47");
    EXPECT_EQ(format_rfc3339((*weeks)[0].week_start_s), "2026-11-16T00:00:00Z");
    EXPECT_EQ(iso_week_label((*weeks)[1].week_start_s), "2026-W48");
    ASSERT_EQ((*weeks)[0].rows.size(), 2U);
    EXPECT_EQ((*weeks)[0].rows[0].counts.held_of(Category::Productive), 480);
    EXPECT_EQ((*weeks)[0].rows[1].counts.not_held_of(Category::Waiting), 60);
    EXPECT_EQ((*weeks)[1].rows[0].counts.held_of(Category::Productive), 720);
}

TEST(GoodputScenario, PeriodOf401DaysIsRejected) {
    EXPECT_TRUE(make_period(T0 - 400 * 86400, T0).has_value());
    const auto p = make_period(T0 - 401 * 86400, T0);
    ASSERT_FALSE(p.has_value());
    EXPECT_EQ(p.error().message, "the period is 401 days long; a period is at most 400 days");
    EXPECT_FALSE(make_period(T0, T0 - 1).has_value());
    // Weekly: 56 complete weeks and the current one fit in 400 days; 57 do not.
    GoodputLedger l;
    EXPECT_TRUE(l.weekly(By::Run, T0, 56).has_value());
    EXPECT_FALSE(l.weekly(By::Run, T0, 57).has_value());
}

TEST(GoodputScenario, GangEventsWithoutWorkerApplyToEveryWorkerAndPartsSplitMachines) {
    // A gang of 2 workers x 8 GPUs, each placed on two machines (4 + 4): waiting 30 s
    // (10:00:30-10:01), starting 4 min (10:01-10:05), then idle (no samples, no progress: all
    // unmeasured) 55 min until the run ends at 11:00.
    Log log;
    log.submit(T0 + 30, "g", "ws", "a100", 2, 8);
    log.line(fmt::format(R"({{"t":{},"event":"place","run":"g","worker":0,)"
                         R"("parts":[{{"machine":"m1","gpus":4}},{{"machine":"m2","gpus":4}}]}})",
                         T0 + kMin));
    log.line(fmt::format(R"({{"t":"{}","event":"place","run":"g","worker":1,)"
                         R"("parts":[{{"machine":"m3","gpus":4}},{{"machine":"m4","gpus":4}}]}})",
                         format_rfc3339(T0 + kMin)));
    log.move(T0 + 5 * kMin, "start", "g").move(T0 + kHour, "end", "g");
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    // waiting: the first count (10:01) covers 30 s since the submission: 30 x 16 = 480.
    EXPECT_EQ(r.ledger().run_total(0), counts({{Category::Waiting, false, 30 * 16},
                                               {Category::Starting, true, 4 * 16 * kMin},
                                               {Category::Idle, true, 55 * 16 * kMin}},
                                              55 * 16 * kMin));
    const auto machines = r.ledger().query(By::Machine, {T0, T0 + kHour});
    ASSERT_EQ(machines.size(), 4U);
    for (const Row& m : machines)
        EXPECT_EQ(m.counts, counts({{Category::Starting, true, 4 * 4 * kMin},
                                    {Category::Idle, true, 55 * 4 * kMin}},
                                   55 * 4 * kMin));
    EXPECT_EQ(r.unmeasured_gpu_s(), 55 * 16 * kMin);  // 52,800
}

TEST(GoodputScenario, RunsStillGoingAreCountedToTheEnd) {
    // A run still running at its last event (10:30:20) is counted to 10:30 (the minute count);
    // with --end 12:00 to 12:00; events after --end are not applied.
    Log log;
    log.submit(T0, "r", "ws", "p", 1, 1).place(T0, "r", 0, "m").move(T0, "start", "r", 0);
    log.util(T0 + 30 * kMin + 20, "r", 0, "50");
    {
        Replayer r;
        ASSERT_EQ(replay_text(log.text(), r), "");
        EXPECT_EQ(r.end_s(), T0 + 30 * kMin + 20);
        EXPECT_EQ(testing::sum_all(r.ledger().run_total(0)), 30 * kMin);
    }
    {
        ReplayOptions o;
        o.end_s = T0 + 2 * kHour;
        Replayer r(o);
        ASSERT_EQ(replay_text(log.text(), r), "");
        // The 50 % sample at 10:30:20 decides 2 periods (120 s, to 10:32:20): productive 120 s;
        // the rest of 10:00-12:00 has no sample and no progress: idle and unmeasured 7080 s.
        EXPECT_EQ(r.ledger().run_total(0),
                  counts({{Category::Idle, true, 7080}, {Category::Productive, true, 120}}, 7080));
    }
    {
        ReplayOptions o;
        o.end_s = T0 + 10 * kMin;
        Replayer r(o);
        ASSERT_EQ(replay_text(log.text(), r), "");
        EXPECT_EQ(r.ledger().run_total(0), counts({{Category::Idle, true, 10 * kMin}}, 10 * kMin));
        EXPECT_EQ(r.invalid_samples(), 0);
    }
}

TEST(GoodputScenario, AQuietGapOfYearsIsSkippedNotLoopedOver) {
    // A run at Unix time 0 and one in 2026: 493,000 hour boundaries between them. With nothing
    // going, the replay jumps to the last one (the test would take minutes otherwise).
    Log log;
    log.submit(0, "old", "ws", "p", 1, 1).move(60, "end", "old");
    log.submit(T0, "new", "ws", "p", 1, 2).place(T0, "new", 0, "m").move(T0, "start", "new", 0);
    log.move(T0 + kHour, "end", "new");
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    EXPECT_EQ(r.ledger().run_total(0), counts({{Category::Waiting, false, 60}}));
    EXPECT_EQ(r.ledger().run_total(1), counts({{Category::Idle, true, 2 * kHour}}, 2 * kHour));
}

struct BadCase {
    std::string log;
    std::string error;
};

TEST(GoodputEventLog, BadLinesNameTheLineAndWhatWasExpected) {
    const std::string sub =
        R"({"t":"2026-11-02T10:00:00Z","event":"submit","run":"r","workspace":"w","pool":"p","workers":2,"gpus":4})"
        "\n";
    const std::vector<BadCase> cases = {
        {"{\"t\":1,\"event\":\"submit\"\n", "test.jsonl:1: expected one JSON object per line"},
        {"[1,2]\n", "test.jsonl:1: expected a JSON object, got [1,2]"},
        {R"({"t":1,"event":"launch","run":"r"})", "test.jsonl:1: field 'event': expected config, submit, place, start, stop, fail, release, end, util or progress, got \"launch\""},
        {R"({"event":"start","run":"r"})", "test.jsonl:1: field 't' is missing"},
        {R"({"t":"yesterday","event":"start","run":"r"})", "test.jsonl:1: field 't': malformed time 'yesterday'"},
        {R"({"t":1.5,"event":"start","run":"r"})", "test.jsonl:1: field 't': expected an RFC 3339 time"},
        {sub + R"({"t":"2026-11-02T10:00:00Z","event":"start","run":"r","wrker":1})", "test.jsonl:2: field 'wrker' is not part of a 'start' event (expected t, event, run, worker)"},
        {sub + "\n" + R"({"t":"2026-11-02T09:59:59Z","event":"start","run":"r"})", "test.jsonl:3: time 2026-11-02T09:59:59Z is before the previous event's time 2026-11-02T10:00:00Z (events must be in time order)"},
        {sub + R"({"t":"2026-11-02T10:00:00Z","event":"place","run":"q","machine":"m"})", "test.jsonl:2: run 'q' has not been submitted"},
        {sub + sub, "test.jsonl:2: run 'r' was already submitted"},
        {sub + R"({"t":"2026-11-02T10:00:00Z","event":"start","run":"r","worker":2})", "test.jsonl:2: field 'worker': run 'r' has workers 0..1, got 2"},
        {sub + R"({"t":"2026-11-02T10:00:00Z","event":"start","run":"r","worker":1})", "test.jsonl:2: 'start' event: start: run 'r' worker 1 is not placed"},
        {sub + R"({"t":"2026-11-02T10:00:00Z","event":"stop","run":"r","worker":0,"reason":"boredom"})", "test.jsonl:2: field 'reason': expected owner, stall or preemption, got \"boredom\""},
        {sub + R"({"t":"2026-11-02T10:00:00Z","event":"place","run":"r","machine":"m","gpus":0})", "test.jsonl:2: field 'gpus': expected GPUs held, an integer 1..1048576, got 0"},
        {sub + R"({"t":"2026-11-02T10:00:00Z","event":"place","run":"r"})", "test.jsonl:2: a 'place' event needs either 'machine'"},
        {sub + R"({"t":"2026-11-02T10:00:00Z","event":"util","run":"r","worker":0,"gpus_pct":["high"]})", "test.jsonl:2: field 'gpus_pct': expected a non-empty array of percents"},
        {sub + R"({"t":"2026-11-02T10:00:00Z","event":"util","run":"r","gpus_pct":[1]})", "test.jsonl:2: field 'worker' is missing (a 'util' event needs it)"},
        {sub + R"({"t":"2026-11-02T10:00:00Z","event":"progress","run":"r","worker":0,"step":1.5})", "test.jsonl:2: field 'step': expected an integer step count, -2^63..2^63-1, got 1.5"},
        {R"({"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":0})", "test.jsonl:1: field 'gpus': expected GPUs per worker, an integer 1..1048576, got 0"},
        {R"({"t":1,"event":"submit","run":"r","pool":"p","gpus":1})", "test.jsonl:1: field 'workspace' is missing (a 'submit' event needs it)"},
        {sub + R"({"event":"config","busy_pct":5})", "test.jsonl:2: a 'config' line must come first"},
        {R"({"event":"config","busy_pct":500})", "test.jsonl:1: field 'busy_pct': expected a percent 0..100, got 500"},
        {R"({"event":"config","thresholds":[{"metric":"pool_goodput_week","op":"<","value":1}]})", "test.jsonl:1: thresholds: unknown metric 'pool_goodput_week'"},
        {R"({"event":"config","thresholds":[{"metric":"pool_goodput_hour","op":"<","value":1}]})" "\n" + sub, "test.jsonl:2: thresholds: metric 'pool_goodput_hour' needs a 'scope' (a pool name)"},
    };
    for (const auto& c : cases) {
        Replayer r;
        const std::string got = replay_text(c.log, r);
        EXPECT_EQ(got.substr(0, c.error.size()), c.error) << "log:\n" << c.log;
    }
    // An --end before the first event: nothing applied, an empty ledger, and an error (there
    // is nothing to account: the table would be of a 1970 period).
    ReplayOptions o;
    o.end_s = 0;
    Replayer r(o);
    EXPECT_EQ(replay_text(sub, r), "test.jsonl: no events at or before the end "
                                   "1970-01-01T00:00:00Z (the first is at 2026-11-02T10:00:00Z)");
    EXPECT_TRUE(r.empty());
    EXPECT_EQ(r.ledger().row_count(), 0U);
}

TEST(GoodputEventLog, EveryJsonExceptionIsAFileLineErrorNotACrash) {
    // Numbers beyond a double (nlohmann throws out_of_range 406 while parsing), floats and
    // huge values where an integer is read (get<int>() would throw or wrap), and numbers far
    // past 2^64 (parsed as floats): each a FILE:LINE message naming the field.
    const std::string sub =
        R"({"t":1793613600,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":2})"
        "\n";
    const std::vector<BadCase> cases = {
        {sub + R"({"t":1793613600,"event":"util","run":"r","worker":0,"gpus_pct":[1e400,50]})",
         "test.jsonl:2: field 'gpus_pct': a number out of range (number overflow parsing '1e400'"},
        {R"({"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":1e400})",
         "test.jsonl:1: field 'gpus': a number out of range (number overflow parsing '1e400'"},
        {R"({"event":"config","busy_pct":1e999})",
         "test.jsonl:1: field 'busy_pct': a number out of range (number overflow parsing '1e999'"},
        {R"({"event":"config","thresholds":[{"metric":"workers_stalled","op":">","value":-1e400}]})",
         "test.jsonl:1: field 'value': a number out of range (number overflow parsing '-1e400'"},
        {R"({"t":1e400,"event":"start","run":"r"})",
         "test.jsonl:1: field 't': a number out of range"},
        {R"({"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":2.0})",
         "test.jsonl:1: field 'gpus': expected GPUs per worker, an integer 1..1048576, got 2.0"},
        {R"({"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":1e300})",
         "test.jsonl:1: field 'gpus': expected GPUs per worker, an integer 1..1048576, got 1e+300"},
        {R"({"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":99999999999999999999999})",
         "test.jsonl:1: field 'gpus': expected GPUs per worker, an integer 1..1048576, got 9.999999999999999e+22"},
        {sub + R"({"t":1793613600,"event":"start","run":"r","worker":18446744073709551615})",
         "test.jsonl:2: field 'worker': expected a worker index 0..1048575, got 18446744073709551615"},
        {sub + R"({"t":1793613600,"event":"progress","run":"r","worker":0,"step":18446744073709551615})",
         "test.jsonl:2: field 'step': expected an integer step count, -2^63..2^63-1, got 18446744073709551615"},
        {R"({"t":-9223372036854775808,"event":"start","run":"r"})",
         "test.jsonl:1: field 't': expected an RFC 3339 time (\"2026-11-02T10:00:30Z\") or integer Unix seconds, 1970-01-01T00:00:00Z..9999-12-31T23:59:59Z (0..253402300799), got -9223372036854775808"},
        {R"({"t":253402300800,"event":"start","run":"r"})", "test.jsonl:1: field 't': expected"},
        {R"({"event":"config","stall_timeout_s":2147483648})",
         "test.jsonl:1: field 'stall_timeout_s': expected an integer number of seconds 1..2147483647, got 2147483648"},
        {"{\"t\":1,\"event\":\"start\",\"run\":\"r\xff\"}",
         "test.jsonl:1: expected one JSON object per line (invalid JSON at byte"},
    };
    for (const auto& c : cases) {
        Replayer r;
        const std::string got = replay_text(c.log, r);
        EXPECT_EQ(got.substr(0, c.error.size()), c.error) << "log:\n" << c.log;
    }
    // The largest values still accepted: t = 9999-12-31T23:59:59Z as an integer and a string.
    for (const char* t : {"253402300799", "\"9999-12-31T23:59:59Z\""}) {
        Replayer r;
        EXPECT_EQ(replay_text(fmt::format(R"({{"t":{},"event":"submit","run":"r","workspace":"w",)"
                                          R"("pool":"p","gpus":1}})",
                                          t) + "\n",
                              r),
                  "");
        EXPECT_EQ(r.first_s(), 253402300799);
    }
}

TEST(GoodputEventLog, ARunAsksForAtMost2To20Gpus) {
    // workers x gpus <= 1048576 = 2^20: 1024 x 1024 is accepted; 1024 x 1025 = 1049600 is not,
    // nor 1000000 x 1000000 = 10^12 (each field alone is in range).
    auto submit = [](std::int64_t workers, std::int64_t gpus) {
        return fmt::format(R"({{"t":1793613600,"event":"submit","run":"r","workspace":"w",)"
                           R"("pool":"p","workers":{},"gpus":{}}})",
                           workers, gpus) +
               "\n";
    };
    {
        Replayer r;
        EXPECT_EQ(replay_text(submit(1024, 1024), r), "");
        EXPECT_EQ(r.counter()->workers(), 1024);
    }
    const std::vector<BadCase> cases = {
        {submit(1024, 1025), "test.jsonl:1: a run asks for at most 1048576 GPUs: workers x gpus = "
                             "1024 x 1025 = 1049600 is over 1048576"},
        {submit(1000000, 1000000), "test.jsonl:1: a run asks for at most 1048576 GPUs: workers x "
                                   "gpus = 1000000 x 1000000 = 1000000000000 is over 1048576"},
        {submit(2000000000, 1), "test.jsonl:1: field 'workers': expected the gang size, an "
                                "integer 1..1048576, got 2000000000"},
        {submit(1, 1048577), "test.jsonl:1: field 'gpus': expected GPUs per worker, an integer "
                             "1..1048576, got 1048577"},
        // A worker placed over parts holds at most 2^20 GPUs: 2 x 524289 = 1048578.
        {submit(1, 8) + R"({"t":1793613600,"event":"place","run":"r","parts":[)"
                        R"({"machine":"a","gpus":524289},{"machine":"b","gpus":524289}]})",
         "test.jsonl:2: field 'parts': a worker holds at most 1048576 GPUs, the parts hold over that"},
    };
    for (const auto& c : cases) {
        Replayer r;
        EXPECT_EQ(replay_text(c.log, r), c.error) << "log:\n" << c.log;
    }
}

TEST(GoodputEventLog, AnEmptyLogIsAnError) {
    for (const std::string text : {"", "\n  \n", "{\"event\":\"config\",\"busy_pct\":5}\n"}) {
        Replayer r;
        EXPECT_EQ(replay_text(text, r), "test.jsonl: no events") << text;
    }
}

TEST(GoodputEventLog, DuplicateKeysAreRejected) {
    const std::vector<BadCase> cases = {
        {R"({"t":1,"event":"start","run":"a","run":"b"})", "test.jsonl:1: duplicate key 'run'"},
        {R"({"event":"config","thresholds":[{"metric":"workers_stalled","op":">","op":"<","value":1}]})",
         "test.jsonl:1: duplicate key 'op'"},
    };
    for (const auto& c : cases) {
        Replayer r;
        EXPECT_EQ(replay_text(c.log, r), c.error) << c.log;
    }
    // The same key in two different objects is fine (each threshold has its own "op").
    Replayer r;
    EXPECT_EQ(replay_text(R"({"event":"config","thresholds":[{"metric":"workers_stalled","op":">","value":1},)"
                          R"({"metric":"runs_with_straggler","op":">","value":1}]})" "\n"
                          R"({"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":1})" "\n",
                          r),
              "");
}

TEST(GoodputEventLog, UtilAtMostOneValuePerGpu) {
    // 2 workers x 2 GPUs (7 lines); worker 1 is placed on parts of 3 + 1 GPUs (4 held). Worker 0: 2
    // values are fine, 1 is fine (fewer: the others are not sampled), 3 are not. Worker 1: 4
    // values are fine (the GPUs it holds), 5 are not.
    Log log;
    log.submit(T0, "r", "ws", "p", 2, 2).place(T0, "r", 0, "m1");
    log.line(fmt::format(R"({{"t":{},"event":"place","run":"r","worker":1,"parts":)"
                         R"([{{"machine":"m2","gpus":3}},{{"machine":"m3","gpus":1}}]}})",
                         T0));
    log.move(T0, "start", "r").util(T0 + 30, "r", 0, "50, 60").util(T0 + 31, "r", 0, "70");
    log.util(T0 + 32, "r", 1, "1, 2, 3, 4");
    {
        Replayer r;
        ASSERT_EQ(replay_text(log.text(), r), "");
    }
    Log three = log;
    three.util(T0 + 40, "r", 0, "1, 2, 3");
    Replayer r3;
    EXPECT_EQ(replay_text(three.text(), r3),
              "test.jsonl:8: field 'gpus_pct': 3 values, but run 'r' worker 0 has 2 GPUs (at most "
              "one value per GPU)");
    Log five = log;
    five.util(T0 + 40, "r", 1, "1, 2, 3, 4, 5");
    Replayer r5;
    EXPECT_EQ(replay_text(five.text(), r5),
              "test.jsonl:8: field 'gpus_pct': 5 values, but run 'r' worker 1 has 4 GPUs (at most "
              "one value per GPU)");
}

}  // namespace
}  // namespace astraeus::goodput
