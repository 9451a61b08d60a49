// The count to the second (spec/goodput.md "The count", issue 19): every state change inside a
// minute is counted for the seconds it really lasted; samples decide running time for at most
// 2 sample periods; progress decides what no sample does; the rest is idle and unmeasured.
// Every expected value is computed by hand in the comments (GPU-seconds).
#include <gtest/gtest.h>

#include "astraeus/goodput/counter.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/goodput_io/pending_count.hpp"
#include "goodput_test_util.hpp"

namespace g = astraeus::goodput;
using astraeus::GpuSeconds;
using astraeus::Seconds;
using g::Category;

namespace {

constexpr Seconds T0 = 1793613600;  // 2026-11-02T10:00:00Z, a minute and hour boundary

struct Fixture {
    explicit Fixture(g::CounterConfig c = {}) : counter(c, ledger) {}
    g::GoodputLedger ledger;
    g::GoodputCounter counter;
    g::Counts run(int r = 0) const { return ledger.run_total(r); }
    GpuSeconds all(int r = 0) const {
        const auto f = g::figures(run(r));
        return f.allocated + f.waiting;
    }
};

const g::HeldPart kM1{1, 2};  // 2 GPUs on machine 1

}  // namespace

TEST(GoodputExact, PlacementFortySecondsIntoAMinute) {
    // Submit 10:00:00 (2 GPUs), placed 10:00:40, started 10:01:00 (level 80 %), ends 10:02:00:
    // waiting 40 s x 2 = 80 (not held), starting 20 s x 2 = 40, productive 60 s x 2 = 120.
    Fixture f;
    const int w = f.counter.add_worker(T0, 0, 2);
    ASSERT_TRUE(f.counter.place(T0 + 40, w, {&kM1, 1}));
    ASSERT_TRUE(f.counter.start(T0 + 60, w));
    ASSERT_TRUE(f.counter.utilization_level(T0 + 60, w, 80));
    // The count at 10:01 has happened: [10:00, 10:01) is in the ledger already, split.
    f.counter.advance(T0 + 61);
    EXPECT_EQ(f.run().not_held_of(Category::Waiting), 80);
    EXPECT_EQ(f.run().held_of(Category::Starting), 40);
    EXPECT_EQ(f.run().held_of(Category::Productive), 0);  // 10:01:00-10:01:01 not counted yet
    ASSERT_TRUE(f.counter.end(T0 + 120, w));
    EXPECT_EQ(f.run().held_of(Category::Productive), 120);
    EXPECT_EQ(f.all(), 120 * 2);
}

TEST(GoodputExact, TwentySecondFailureCostsTwentySeconds) {
    // 1 worker, 2 GPUs, running busy from 10:00:00; fails at 10:00:30, released at 10:00:50,
    // placed again at 10:01:10, restarts until 10:01:20, busy until the end at 10:02:00.
    // productive 30 + 40 = 70 s, failure held 20 s, failure not held 20 s, restart 10 s;
    // x 2 GPUs: 140, 40, 40, 20. Old minute rule: failure 0.
    Fixture f;
    const int w = f.counter.add_worker(T0, 0, 2);
    ASSERT_TRUE(f.counter.place(T0, w, {&kM1, 1}));
    ASSERT_TRUE(f.counter.start(T0, w));
    ASSERT_TRUE(f.counter.utilization_level(T0, w, 90));
    ASSERT_TRUE(f.counter.fail(T0 + 30, w));
    ASSERT_TRUE(f.counter.release(T0 + 50, w));
    const g::HeldPart m2{2, 2};
    ASSERT_TRUE(f.counter.place(T0 + 70, w, {&m2, 1}));
    ASSERT_TRUE(f.counter.start(T0 + 80, w));
    ASSERT_TRUE(f.counter.utilization_level(T0 + 80, w, 90));
    ASSERT_TRUE(f.counter.end(T0 + 120, w));
    const g::Counts c = f.run();
    EXPECT_EQ(c.held_of(Category::Productive), 140);
    EXPECT_EQ(c.held_of(Category::Failure), 40);
    EXPECT_EQ(c.not_held_of(Category::Failure), 40);
    EXPECT_EQ(c.held_of(Category::Restart), 20);
    EXPECT_EQ(f.all(), 240);
    // Machines: m1 held productive 60 + failure 40 (released inside the minute, still on m1);
    // m2 restart 20 + productive 80.
    const auto rows = f.ledger.query(g::By::Machine, {T0, T0 + 3600});
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0].id, 1);
    EXPECT_EQ(rows[0].counts.held_of(Category::Productive), 60);
    EXPECT_EQ(rows[0].counts.held_of(Category::Failure), 40);
    EXPECT_EQ(rows[1].id, 2);
    EXPECT_EQ(rows[1].counts.held_of(Category::Restart), 20);
    EXPECT_EQ(rows[1].counts.held_of(Category::Productive), 80);
}

TEST(GoodputExact, SubSecondWindDownOfAnIdleRun) {
    // Running idle (level 0 %) from 10:00:00; its owner stops it at 10:00:40 and it is gone in
    // 0.2 s, in the same second: 40 s x 2 idle, 0 productive (the old rule gave the minute to
    // the wind-down: 120 productive). A wind-down of 3 s is 3 s x 2 = 6 productive.
    Fixture f;
    const int w = f.counter.add_worker(T0, 0, 2);
    ASSERT_TRUE(f.counter.place(T0, w, {&kM1, 1}));
    ASSERT_TRUE(f.counter.start(T0, w));
    ASSERT_TRUE(f.counter.utilization_level(T0, w, 0));
    ASSERT_TRUE(f.counter.stop(T0 + 40, w, g::Cause::Owner));
    ASSERT_TRUE(f.counter.end(T0 + 40, w));
    EXPECT_EQ(f.run().held_of(Category::Idle), 80);
    EXPECT_EQ(f.run().held_of(Category::Productive), 0);

    const int v = f.counter.add_worker(T0, 1, 2);
    ASSERT_TRUE(f.counter.place(T0, v, {&kM1, 1}));
    ASSERT_TRUE(f.counter.start(T0, v));
    ASSERT_TRUE(f.counter.utilization_level(T0, v, 0));
    ASSERT_TRUE(f.counter.stop(T0 + 40, v, g::Cause::Owner));
    ASSERT_TRUE(f.counter.end(T0 + 43, v));
    EXPECT_EQ(f.run(1).held_of(Category::Idle), 80);
    EXPECT_EQ(f.run(1).held_of(Category::Productive), 6);
}

TEST(GoodputExact, NineSecondStartUpThenProgressDecides) {
    // --running-at progress: placed 10:00:00, the first progress (running) at 10:00:09, progress
    // every 30 s until 10:02:09, no utilization source, ends 10:02:30. Starting 9 s x 2 = 18;
    // running 10:00:09-10:02:30 = 141 s, all of it decided by progress (the first report comes
    // with the start): productive 141 x 2 = 282, nothing idle or unmeasured.
    Fixture f;
    const int w = f.counter.add_worker(T0, 0, 2);
    ASSERT_TRUE(f.counter.place(T0, w, {&kM1, 1}));
    ASSERT_TRUE(f.counter.start(T0 + 9, w));
    for (int k = 0; k <= 4; ++k) ASSERT_TRUE(f.counter.progress(T0 + 9 + 30 * k, w, k + 1));
    ASSERT_TRUE(f.counter.end(T0 + 150, w));
    EXPECT_EQ(f.run().held_of(Category::Starting), 18);
    EXPECT_EQ(f.run().held_of(Category::Productive), 282);
    EXPECT_EQ(f.run().held_of(Category::Idle), 0);
    EXPECT_EQ(f.run().unmeasured, 0);
}

TEST(GoodputExact, NoUtilizationSourceWithoutProgressIsIdleAndUnmeasured) {
    // Started at 10:00:15 (placed 10:00:00), no sample, no progress, ends 10:03:05:
    // starting 15 x 2 = 30; idle 170 s x 2 = 340, all of it unmeasured.
    Fixture f;
    const int w = f.counter.add_worker(T0, 0, 2);
    ASSERT_TRUE(f.counter.place(T0, w, {&kM1, 1}));
    ASSERT_TRUE(f.counter.start(T0 + 15, w));
    f.counter.advance(T0 + 120);  // counts at 10:01 and 10:02: idle 45 + 60 = 105 s so far
    EXPECT_EQ(f.run().held_of(Category::Idle), 210);
    EXPECT_EQ(f.run().unmeasured, 210);
    ASSERT_TRUE(f.counter.end(T0 + 185, w));
    EXPECT_EQ(f.run().held_of(Category::Starting), 30);
    EXPECT_EQ(f.run().held_of(Category::Idle), 340);
    EXPECT_EQ(f.run().unmeasured, 340);
    EXPECT_EQ(f.counter.unmeasured_gpu_s(), 340);
    // Held counts are unchanged by the unmeasured figure (it is a part of idle, not a 9th).
    EXPECT_EQ(g::figures(f.run()).allocated, 370);
}

TEST(GoodputExact, SamplesDecideTwoPeriodsThenProgressOrUnmeasured) {
    // Period 10 s. Running from 10:00:00; samples at 10:00:00 (50 %), 10:00:10 (4.9 %),
    // 10:00:20 (5.0 %), then none: the last one decides 10:00:20-10:00:40, the rest is undecided.
    // Worker A never reports progress; ends 10:01:00: productive 10 + 20 = 30, idle 10 (4.9 %)
    // + 20 undecided = 30, unmeasured 20. 1 GPU each.
    // Worker B reports progress at 10:00:05: its undecided 20 s are productive.
    g::CounterConfig cfg;
    cfg.sample_period_s = 10;
    Fixture f(cfg);
    const g::HeldPart one{1, 1};
    for (int r = 0; r < 2; ++r) {
        const int w = f.counter.add_worker(T0, r, 1);
        ASSERT_TRUE(f.counter.place(T0, w, {&one, 1}));
        ASSERT_TRUE(f.counter.start(T0, w));
        const double a = 50, b = 4.9, c = 5.0;
        ASSERT_TRUE(f.counter.utilization(T0, w, {&a, 1}));
        if (r == 1) {
            ASSERT_TRUE(f.counter.progress(T0 + 5, w, 1));
        }
        ASSERT_TRUE(f.counter.utilization(T0 + 10, w, {&b, 1}));
        ASSERT_TRUE(f.counter.utilization(T0 + 20, w, {&c, 1}));
        ASSERT_TRUE(f.counter.end(T0 + 60, w));
    }
    EXPECT_EQ(f.run(0).held_of(Category::Productive), 30);
    EXPECT_EQ(f.run(0).held_of(Category::Idle), 30);
    EXPECT_EQ(f.run(0).unmeasured, 20);
    EXPECT_EQ(f.run(1).held_of(Category::Productive), 50);
    EXPECT_EQ(f.run(1).held_of(Category::Idle), 10);
    EXPECT_EQ(f.run(1).unmeasured, 0);
}

TEST(GoodputExact, StallDetectedLateMovesFromTheLastProgress) {
    // Stall timeout 120 s. Running busy (level 90 %) from 10:00:00, progress at 10:00:10 and
    // 10:00:25, then none: detected at 10:02:25, counted stalled from 10:00:25. Progress again at
    // 10:03:40 ends it; ends 10:04:00. 1 GPU (machine 1):
    // productive 25 (to the last report) + 20 (10:03:40-10:04) = 45; stalled 10:00:25-10:03:40
    // = 195. The move withdrew 95 s emitted at the counts of 10:01 and 10:02 (35 + 60) and
    // recast the pending 25 s.
    g::CounterConfig cfg;
    cfg.stall_timeout_s = 120;
    Fixture f(cfg);
    const g::HeldPart one{1, 1};
    const int w = f.counter.add_worker(T0, 0, 1);
    ASSERT_TRUE(f.counter.place(T0, w, {&one, 1}));
    ASSERT_TRUE(f.counter.start(T0, w));
    ASSERT_TRUE(f.counter.utilization_level(T0, w, 90));
    ASSERT_TRUE(f.counter.progress(T0 + 10, w, 1));
    ASSERT_TRUE(f.counter.progress(T0 + 25, w, 2));
    f.counter.advance(T0 + 144);
    EXPECT_EQ(f.counter.stalled_now(), 0);
    EXPECT_EQ(f.run().held_of(Category::Productive), 120);  // counted to 10:02, not yet moved
    f.counter.advance(T0 + 145);
    EXPECT_EQ(f.counter.stalled_now(), 1);
    EXPECT_EQ(f.run().held_of(Category::Productive), 25);
    EXPECT_EQ(f.run().held_of(Category::Stalled), 95);
    ASSERT_TRUE(f.counter.progress(T0 + 220, w, 3));
    EXPECT_EQ(f.counter.stalled_now(), 0);
    ASSERT_TRUE(f.counter.end(T0 + 240, w));
    EXPECT_EQ(f.run().held_of(Category::Productive), 45);
    EXPECT_EQ(f.run().held_of(Category::Stalled), 195);
    EXPECT_EQ(f.all(), 240);
}

TEST(GoodputExact, CountsWaitForTheMinuteBoundary) {
    // The cadence stays the minute: what happened after the last boundary is not in the ledger
    // until the next count (the service persists "counted to minute b").
    Fixture f;
    const int w = f.counter.add_worker(T0 + 5, 0, 2);
    ASSERT_TRUE(f.counter.place(T0 + 20, w, {&kM1, 1}));
    ASSERT_TRUE(f.counter.start(T0 + 50, w));
    EXPECT_EQ(g::figures(f.run()).allocated + g::figures(f.run()).waiting, 0);
    f.counter.advance(T0 + 60);
    // waiting 15 x 2 = 30, starting 30 x 2 = 60, running 10 s unmeasured: idle 20.
    EXPECT_EQ(f.run().not_held_of(Category::Waiting), 30);
    EXPECT_EQ(f.run().held_of(Category::Starting), 60);
    EXPECT_EQ(f.run().held_of(Category::Idle), 20);
    EXPECT_EQ(f.run().unmeasured, 20);
}

// ---- the same cases through the event log (`astraeus goodput replay`) ------------------------

TEST(GoodputExactReplay, TheIssueCasesToTheSecond) {
    // One run per case, 2 GPUs each (1 for "edges"), all submitted at 10:00:00; sample period
    // 10 s; the log's lines in time order. By hand, GPU-seconds:
    //  fail20: running busy 10:00:00 (sample every 10 s), fails 10:00:30, released 10:00:50,
    //    ends 10:01:00: productive 30 x 2 = 60, failure held 20 x 2 = 40, not held 10 x 2 = 20.
    //  place40: placed 10:00:40, started 10:01:00 (progress then), ends 10:01:30: waiting 80,
    //    starting 40, productive 30 x 2 = 60 (progress decides).
    //  winddown: running idle (0 % samples), stopped by its owner 10:00:40, ended in the same
    //    second (0.2 s later): idle 40 x 2 = 80, productive 0.
    //  startup9: placed 10:00:00, first progress and start 10:00:09, progress every 20 s,
    //    no utilization source, ends 10:01:00: starting 18, productive 51 x 2 = 102.
    //  edges: 1 GPU, samples 5.0 at 10:00:00 and 4.9 at 10:00:10, ends 10:00:20:
    //    productive 10, idle 10 (none unmeasured).
    //  nosource: started 10:00:00, no sample, no progress, ends 10:01:10: idle 140, all of it
    //    unmeasured.
    using astraeus::goodput::testing::Log;
    Log log;
    log.line_at(0, R"({"event":"config","sample_period_s":10})");
    const char* runs[] = {"fail20", "place40", "winddown", "startup9", "edges", "nosource"};
    for (const char* r : runs) log.submit(T0, r, "ws", "p", 1, std::string(r) == "edges" ? 1 : 2);
    log.place(T0, "fail20", 0, "m1").move(T0, "start", "fail20", 0);
    for (int s = 0; s < 30; s += 10) log.util(T0 + s, "fail20", 0, "90, 90");
    log.move(T0 + 30, "fail", "fail20", 0).move(T0 + 50, "release", "fail20", 0);
    log.move(T0 + 60, "end", "fail20", 0);
    log.place(T0 + 40, "place40", 0, "m2").move(T0 + 60, "start", "place40", 0);
    log.progress(T0 + 60, "place40", 0, 1).move(T0 + 90, "end", "place40", 0);
    log.place(T0, "winddown", 0, "m3").move(T0, "start", "winddown", 0);
    for (int s = 0; s < 40; s += 10) log.util(T0 + s, "winddown", 0, "0, 0");
    log.stop(T0 + 40, "winddown", 0, "owner").move(T0 + 40, "end", "winddown", 0);
    log.place(T0, "startup9", 0, "m4").move(T0 + 9, "start", "startup9", 0);
    for (int s = 9; s < 60; s += 20) log.progress(T0 + s, "startup9", 0, s);
    log.move(T0 + 60, "end", "startup9", 0);
    log.place(T0, "edges", 0, "m5").move(T0, "start", "edges", 0);
    log.util(T0, "edges", 0, "5.0").util(T0 + 10, "edges", 0, "4.9");
    log.move(T0 + 20, "end", "edges", 0);
    log.place(T0, "nosource", 0, "m6").move(T0, "start", "nosource", 0);
    log.move(T0 + 70, "end", "nosource", 0);
    g::Replayer r;
    ASSERT_EQ(astraeus::goodput::testing::replay_text(log.text(), r), "");
    const auto c = [&](const char* name) { return r.ledger().run_total(r.run_id(name)); };
    EXPECT_EQ(c("fail20").held_of(Category::Productive), 60);
    EXPECT_EQ(c("fail20").held_of(Category::Failure), 40);
    EXPECT_EQ(c("fail20").not_held_of(Category::Failure), 20);
    EXPECT_EQ(c("place40").not_held_of(Category::Waiting), 80);
    EXPECT_EQ(c("place40").held_of(Category::Starting), 40);
    EXPECT_EQ(c("place40").held_of(Category::Productive), 60);
    EXPECT_EQ(c("winddown").held_of(Category::Idle), 80);
    EXPECT_EQ(c("winddown").held_of(Category::Productive), 0);
    EXPECT_EQ(c("startup9").held_of(Category::Starting), 18);
    EXPECT_EQ(c("startup9").held_of(Category::Productive), 102);
    EXPECT_EQ(c("startup9").unmeasured, 0);
    EXPECT_EQ(c("edges").held_of(Category::Productive), 10);
    EXPECT_EQ(c("edges").held_of(Category::Idle), 10);
    EXPECT_EQ(c("edges").unmeasured, 0);
    EXPECT_EQ(c("nosource").held_of(Category::Idle), 140);
    EXPECT_EQ(c("nosource").unmeasured, 140);
    EXPECT_EQ(r.unmeasured_gpu_s(), 140);
}

TEST(GoodputExactReplay, StallDetectedLateAndProgressWithoutSamples) {
    // Stall timeout 120 s, sample period 10 s, 1 GPU each, submitted and started 10:00:00.
    //  stall: one sample at 10:00:00 (90 %: decides 10:00:00-10:00:20), progress at 10:00:10
    //    and 10:00:25 (it decides 10:00:20-10:00:25), then none: detected at 10:02:25, after
    //    the counts of 10:01 and 10:02 had emitted 10:00:25-10:02:00 as productive; the move
    //    makes it stalled from 10:00:25. Progress again at 10:03:40 ends the stall; no sample
    //    after, progress decides 10:03:40-10:04:00. Ends 10:04:00:
    //    productive 25 + 20 = 45, stalled 10:00:25-10:03:40 = 195, idle 0, unmeasured 0.
    //  steady: no sample at all, progress at 10:00:00 and every 60 s to 10:03:00 (within the
    //    timeout), ends 10:04:00: productive 240 (progress decides), unmeasured 0.
    //  silent: no sample, no progress, ends 10:04:00: idle 240, unmeasured 240; never stalled
    //    (a worker that never reports progress never stalls).
    using astraeus::goodput::testing::Log;
    Log log;
    log.line_at(0, R"({"event":"config","sample_period_s":10,"stall_timeout_s":120})");
    for (const char* r : {"stall", "steady", "silent"}) {
        log.submit(T0, r, "ws", "p", 1, 1);
        log.place(T0, r, 0, std::string("m-") + r).move(T0, "start", r, 0);
        log.move(T0 + 240, "end", r, 0);
    }
    log.util(T0, "stall", 0, "90");
    log.progress(T0 + 10, "stall", 0, 1).progress(T0 + 25, "stall", 0, 2);
    log.progress(T0 + 220, "stall", 0, 3);
    for (int s = 0; s < 240; s += 60) log.progress(T0 + s, "steady", 0, s + 1);
    g::Replayer r;
    ASSERT_EQ(astraeus::goodput::testing::replay_text(log.text(), r), "");
    const auto c = [&](const char* name) { return r.ledger().run_total(r.run_id(name)); };
    EXPECT_EQ(c("stall").held_of(Category::Productive), 45);
    EXPECT_EQ(c("stall").held_of(Category::Stalled), 195);
    EXPECT_EQ(c("stall").held_of(Category::Idle), 0);
    EXPECT_EQ(c("stall").unmeasured, 0);
    EXPECT_EQ(c("steady").held_of(Category::Productive), 240);
    EXPECT_EQ(c("steady").unmeasured, 0);
    EXPECT_EQ(c("silent").held_of(Category::Idle), 240);
    EXPECT_EQ(c("silent").held_of(Category::Stalled), 0);
    EXPECT_EQ(c("silent").unmeasured, 240);
    EXPECT_EQ(r.unmeasured_gpu_s(), 240);
}

TEST(GoodputExact, PendingTimeSurvivesARestart) {
    // A restart inside a minute (the service's store keeps each worker's pending count as text,
    // GoodputCounter::pending + PendingCount). 1 worker, 2 GPUs on machine 1, submitted 10:00:00,
    // placed 10:00:10, started 10:00:15 (no sample, no progress: unmeasured idle), failed
    // 10:00:25, released 10:00:30; the service dies there. By hand, pending at 10:00:30:
    // waiting 10 s x 2 = 20 (not held), starting 5 x 2 = 10, idle 10 x 2 = 20 (also unmeasured),
    // failure held 5 x 2 = 10.
    g::GoodputLedger before;
    g::GoodputCounter first({}, before);
    const int w = first.add_worker(T0, 0, 2);
    ASSERT_TRUE(first.place(T0 + 10, w, {&kM1, 1}));
    ASSERT_TRUE(first.start(T0 + 15, w));
    ASSERT_TRUE(first.fail(T0 + 25, w));
    ASSERT_TRUE(first.release(T0 + 30, w));
    EXPECT_EQ(first.last_count(w), T0);
    EXPECT_EQ(first.decided_to(w), T0 + 30);
    EXPECT_EQ(g::figures(before.run_total(0)).allocated, 0);  // nothing emitted yet
    g::PendingCount pending;
    first.pending(w, pending);
    const std::string h = std::to_string(T0);
    EXPECT_EQ(pending.text(), "-1," + h + ",7,0,20;1," + h + ",1,1,20;1," + h + ",3,1,10;1," + h +
                                  ",5,1,10;1," + h + ",8,1,20");
    // After the restart: the pending Deltas are added once, and a new worker goes on from
    // 10:00:30 in the stored state (waiting after a failure): placed again 10:01:10, restarts
    // until 10:01:20, busy until its end at 10:02:00. The whole: failure not held 40 x 2 = 80,
    // restart 10 x 2 = 20, productive 40 x 2 = 80; every second of 10:00-10:02 once: 240.
    Fixture f;
    auto rows = g::parse_pending_count(pending.text(), 0);
    ASSERT_TRUE(rows) << rows.error().message;
    for (const g::Delta& d : *rows) f.ledger.add(d);
    const int v = f.counter.add_worker(T0 + 30, 0, 2);
    ASSERT_TRUE(f.counter.place(T0 + 30, v, {&kM1, 1}));
    ASSERT_TRUE(f.counter.fail(T0 + 30, v));
    ASSERT_TRUE(f.counter.release(T0 + 30, v));
    ASSERT_TRUE(f.counter.place(T0 + 70, v, {&kM1, 1}));
    ASSERT_TRUE(f.counter.start(T0 + 80, v));
    ASSERT_TRUE(f.counter.utilization_level(T0 + 80, v, 90));
    ASSERT_TRUE(f.counter.end(T0 + 120, v));
    const g::Counts c = f.run();
    EXPECT_EQ(c.not_held_of(Category::Waiting), 20);
    EXPECT_EQ(c.held_of(Category::Starting), 10);
    EXPECT_EQ(c.held_of(Category::Idle), 20);
    EXPECT_EQ(c.unmeasured, 20);
    EXPECT_EQ(c.held_of(Category::Failure), 10);
    EXPECT_EQ(c.not_held_of(Category::Failure), 80);
    EXPECT_EQ(c.held_of(Category::Restart), 20);
    EXPECT_EQ(c.held_of(Category::Productive), 80);
    EXPECT_EQ(f.all(), 240);
}

TEST(GoodputExact, MalformedPendingCountsAreRefusedNamingTheEntry) {
    EXPECT_TRUE(g::parse_pending_count("", 3)->empty());
    auto one = g::parse_pending_count("-1,3600,7,0,20", 3);
    ASSERT_TRUE(one);
    ASSERT_EQ(one->size(), 1U);
    EXPECT_EQ((*one)[0].run, 3);
    EXPECT_EQ((*one)[0].machine, -1);
    EXPECT_EQ((*one)[0].gpu_s, 20);
    for (const char* bad : {"1,2,3", "1,2,9,0,5", "1,2,3,2,5", "1,2,3,1,5,6", "1,x,3,1,5", ";"}) {
        auto r = g::parse_pending_count(bad, 0);
        EXPECT_FALSE(r) << bad;
        if (!r) {
            EXPECT_NE(r.error().message.find("pending count: entry"), std::string::npos) << r.error().message;
        }
    }
}
