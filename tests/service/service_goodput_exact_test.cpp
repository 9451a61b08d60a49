// The count to the second through the service (spec/goodput.md "The count", issue 19): the
// issue's cases driven by a scripted executor on a manual clock (Service::open_manual), each
// run's ledger read through the service's own API (run_goodput: GET /v1/runs/{run}/goodput;
// goodput: GET /v1/goodput), over a SQLite store in a temporary directory. The same cases on the
// counter alone: tests/unit/goodput_exact_test.cpp; in the simulator: tests/goodput_sim.
// Every expected value is computed by hand in the comments, in GPU-seconds; the API answers
// GPU-hours (GPU-seconds / 3600), compared exactly (the same division).
//
// Whole seconds: the service's clock and every executor event are Unix seconds, so a wind-down
// of 0.2 s is one that ends in the second it began: 0 s of productive wind-down (and a 3 s one,
// 3 s); what the service implements is "every whole second between two events, in the state
// it was in".
#include <gtest/gtest.h>

#include "astraeus/goodput_io/rfc3339.hpp"
#include "scripted_service.hpp"

using namespace scripted_service;

TEST(ServiceGoodputExact, TwentySecondFailureCostsTwentySeconds) {
    // 1 worker x 2 GPUs, submitted and placed 10:00:00, running busy (level 90 %) from
    // 10:00:10; fails at 10:00:30; released at 10:00:50 and placed again at once (the machine is
    // free: no wait after the failure); running busy again from 10:01:00 until it finishes at
    // 10:02:00. starting 10 s, productive 20 + 60 = 80 s, failure held 20 s, restart 10 s;
    // x 2 GPUs: 20, 160, 40, 20; nothing waits; 240 = 120 s x 2 in all. Old minute rule:
    // failure 0.
    Harness x;
    const auto run = x.submit("fails-once", 2);
    EXPECT_EQ(x.launched_at(run, 1), T0);
    x.emit(K::Started, T0 + 10, run, 90);
    x.emit(K::Failed, T0 + 30, run);
    x.emit(K::Released, T0 + 50, run);
    x.at(T0 + 50);
    ASSERT_EQ(x.launched_at(run, 2), T0 + 50);  // attempt 2 placed at the release
    x.emit(K::Started, T0 + 60, run, 90);
    x.emit(K::Finished, T0 + 120, run);
    x.at(T0 + 120);
    const json j = x.ledger("fails-once");
    EXPECT_DOUBLE_EQ(held(j, "starting"), h(20));
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(160));
    EXPECT_DOUBLE_EQ(held(j, "failure"), h(40));
    EXPECT_DOUBLE_EQ(all(j, "failure"), h(40));  // no wait after it
    EXPECT_DOUBLE_EQ(held(j, "restart"), h(20));
    EXPECT_DOUBLE_EQ(held(j, "idle"), 0);
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(240));
    EXPECT_DOUBLE_EQ(j.at("waiting_gpu_hours").get<double>(), 0);
    EXPECT_DOUBLE_EQ(unmeasured(j), 0);
}

TEST(ServiceGoodputExact, FailureThenAWaitBeforeThePlacementAgain) {
    // One machine of 8 GPUs. "a" (2 GPUs) and "big" (6 GPUs) are placed at 10:00:00 and run busy
    // (level 90 %). "a" fails at 10:00:20 and holds its GPUs until its release at 10:00:40;
    // "c" (2 GPUs), submitted at 10:00:30, waits meanwhile (8 of 8 GPUs held: a failed run's
    // GPUs are not free). At the release the round places "c" on the 2 free GPUs (the policy's
    // choice, asserted) and "a" waits again until "big" finishes at 10:01:30; "a" restarts
    // 10:01:30-10:01:40 and runs busy until 10:02:00; "c" starts 10:00:50, busy until 10:02:00.
    // a, x 2 GPUs: productive 20 + 20 = 40 s -> 80; failure held 10:00:20-10:00:40 = 20 s -> 40,
    //   not held (waiting after the failure) 10:00:40-10:01:30 = 50 s -> 100; restart 10 s -> 20.
    // c, x 2: waiting 10 s -> 20; starting 10 s -> 20; productive 70 s -> 140.
    // big, x 6: productive 90 s -> 540.
    Harness x;
    const auto a = x.submit("a", 2);
    const auto big = x.submit("big", 6);
    x.emit(K::Started, T0, a, 90);
    x.emit(K::Started, T0, big, 90);
    x.emit(K::Failed, T0 + 20, a);
    x.at(T0 + 30);
    const auto c = x.submit("c", 2);
    EXPECT_EQ(x.launched_at(c, 1), -1);
    x.emit(K::Released, T0 + 40, a);
    x.emit(K::Finished, T0 + 90, big);
    x.at(T0 + 40);
    ASSERT_EQ(x.launched_at(c, 1), T0 + 40);
    EXPECT_EQ(x.launched_at(a, 2), -1);
    x.emit(K::Started, T0 + 50, c, 90);
    x.at(T0 + 90);
    ASSERT_EQ(x.launched_at(a, 2), T0 + 90);
    x.emit(K::Started, T0 + 100, a, 90);
    x.emit(K::Finished, T0 + 120, a);
    x.emit(K::Finished, T0 + 120, c);
    x.at(T0 + 120);
    const json j = x.ledger("a");
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(80));
    EXPECT_DOUBLE_EQ(held(j, "failure"), h(40));
    EXPECT_DOUBLE_EQ(all(j, "failure"), h(140));
    EXPECT_DOUBLE_EQ(held(j, "restart"), h(20));
    EXPECT_DOUBLE_EQ(all(j, "waiting"), 0);  // only the wait for the first placement
    EXPECT_DOUBLE_EQ(j.at("waiting_gpu_hours").get<double>(), h(100));  // every not-held part
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(140));
    const json k = x.ledger("c");
    EXPECT_DOUBLE_EQ(all(k, "waiting"), h(20));
    EXPECT_DOUBLE_EQ(held(k, "starting"), h(20));
    EXPECT_DOUBLE_EQ(held(k, "productive"), h(140));
    const json g = x.ledger("big");
    EXPECT_DOUBLE_EQ(held(g, "productive"), h(540));
    EXPECT_DOUBLE_EQ(g.at("allocated_gpu_hours").get<double>(), h(540));
}

TEST(ServiceGoodputExact, PlacementFortySecondsIntoAMinute) {
    // A blocker of 8 GPUs holds the machine 10:00:00-10:00:40 (busy). The run (2 GPUs),
    // submitted 10:00:00, is placed at 10:00:40, when the blocker finishes; started 10:01:00
    // (level 80 %), finishes 10:02:00: waiting 40 s x 2 = 80 (not held), starting 20 s x 2 = 40,
    // productive 60 s x 2 = 120. Blocker: productive 40 s x 8 = 320. The old rule counted the
    // minute of the placement as held.
    Harness x;
    const auto blocker = x.submit("blocker", 8);
    const auto run = x.submit("late", 2);
    x.emit(K::Started, T0, blocker, 90);
    x.emit(K::Finished, T0 + 40, blocker);
    x.at(T0 + 40);
    ASSERT_EQ(x.launched_at(run, 1), T0 + 40);
    x.emit(K::Started, T0 + 60, run, 80);
    x.at(T0 + 61);
    // The count at 10:01 has happened: [10:00, 10:01) is in the ledger, split to the second;
    // 10:01:00-10:01:01 waits for the next count.
    json j = x.ledger("late");
    EXPECT_DOUBLE_EQ(all(j, "waiting"), h(80));
    EXPECT_DOUBLE_EQ(held(j, "starting"), h(40));
    EXPECT_DOUBLE_EQ(held(j, "productive"), 0);
    x.emit(K::Finished, T0 + 120, run);
    x.at(T0 + 120);
    j = x.ledger("late");
    EXPECT_DOUBLE_EQ(all(j, "waiting"), h(80));
    EXPECT_DOUBLE_EQ(j.at("waiting_gpu_hours").get<double>(), h(80));
    EXPECT_DOUBLE_EQ(held(j, "starting"), h(40));
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(120));
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(160));
    EXPECT_DOUBLE_EQ(j.at("goodput").get<double>(), 120.0 / 160.0);
    const json b = x.ledger("blocker");
    EXPECT_DOUBLE_EQ(held(b, "productive"), h(320));
    EXPECT_DOUBLE_EQ(b.at("allocated_gpu_hours").get<double>(), h(320));
}

TEST(ServiceGoodputExact, SubSecondWindDownOfAnIdleRunStoppedByItsOwner) {
    // Two runs of 2 GPUs, placed and running from 10:00:00, sampled idle (0 %) every 10 s;
    // their owner stops both at 10:00:40 (stop_run on the service's clock).
    // "quick" is gone 0.2 s later: on the service's whole-second clock the StopDone is at
    // 10:00:40, the second of the stop: idle 40 s x 2 = 80, productive 0 (the old rule gave the
    // minute to the wind-down: 120 productive; the user saw 20 GPU-s).
    // "slow" winds down 3 s (StopDone 10:00:43): idle 80, productive 3 s x 2 = 6.
    Harness x;
    const auto quick = x.submit("quick", 2);
    const auto slow = x.submit("slow", 2);
    for (auto run : {quick, slow}) {
        x.emit(K::Started, T0, run);
        for (int k = 0; k < 4; ++k) x.sample(T0 + 10 * k, run, 0);
    }
    x.at(T0 + 40);
    ASSERT_TRUE(x.service().stop_run(x.caller(), "quick", {}));
    ASSERT_TRUE(x.service().stop_run(x.caller(), "slow", {}));
    ASSERT_EQ(x.script().stops.size(), 2U);
    EXPECT_EQ(x.script().stops[0].first, T0 + 40);
    x.emit(K::StopDone, T0 + 40, quick);
    x.emit(K::StopDone, T0 + 43, slow);
    x.at(T0 + 43);
    const json q = x.ledger("quick");
    EXPECT_DOUBLE_EQ(held(q, "idle"), h(80));
    EXPECT_DOUBLE_EQ(held(q, "productive"), 0);
    EXPECT_DOUBLE_EQ(q.at("allocated_gpu_hours").get<double>(), h(80));
    EXPECT_DOUBLE_EQ(unmeasured(q), 0);  // the samples decided every second
    const json s = x.ledger("slow");
    EXPECT_DOUBLE_EQ(held(s, "idle"), h(80));
    EXPECT_DOUBLE_EQ(held(s, "productive"), h(6));
    EXPECT_DOUBLE_EQ(s.at("allocated_gpu_hours").get<double>(), h(86));
}

TEST(ServiceGoodputExact, NineSecondStartUpRunningAtProgress) {
    // --running-at progress (the submission's "running_at": "progress"), 1 worker x 2 GPUs,
    // placed 10:00:00, its process up at 10:00:02 (WorkerStarted: still starting), the first
    // progress at 10:00:09 (the executor's Started, then that Progress), then progress reported
    // through the API (report_progress) every 30 s until 10:02:09; no utilization source;
    // finishes 10:02:30. starting 9 s x 2 = 18; running 10:00:09-10:02:30 = 141 s, all decided
    // by progress: productive 282; idle 0, unmeasured 0. (The user saw starting 0,
    // idle 188.)
    Harness x;
    const auto run = x.submit("ddp", 2, {{"running_at", "progress"}});
    ASSERT_TRUE(x.script().launched.at(0).run.running_at_progress);
    x.emit(K::WorkerStarted, T0 + 2, run, -1, 0);
    x.emit(K::Started, T0 + 9, run);
    x.progress(T0 + 9, run, 1);
    for (int k = 1; k <= 4; ++k) {
        x.at(T0 + 9 + 30 * k);
        auto r = x.service().report_progress(x.caller(), "ddp", {}, json{{"worker", 0}, {"step", k + 1}}.dump());
        ASSERT_TRUE(r) << r.error().message;
        EXPECT_FALSE(r->at("workers").at(0).at("stalled").get<bool>());
    }
    x.emit(K::Finished, T0 + 150, run);
    x.at(T0 + 150);
    const json j = x.ledger("ddp");
    EXPECT_DOUBLE_EQ(held(j, "starting"), h(18));
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(282));
    EXPECT_DOUBLE_EQ(held(j, "idle"), 0);
    EXPECT_DOUBLE_EQ(unmeasured(j), 0);
    EXPECT_FALSE(j.contains("unmeasured_gpu_hours"));
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(300));
}

TEST(ServiceGoodputExact, StallDetectedLateCountsFromTheLastProgress) {
    // Stall timeout 120 s. 1 worker x 1 GPU, placed and running busy (level 90 %) from
    // 10:00:00; progress at 10:00:10 and 10:00:25, then none: stalled from 10:02:25. The service
    // first looks at 10:02:24 (not stalled: productive 120 counted to 10:02), then at 10:02:30,
    // 5 s after the detection was due: the stall counts from the last progress, 10:00:25, so
    // productive is 25 and stalled 95 (10:00:25-10:02:00, moved from productive). Progress
    // again at 10:03:40 (API) ends it; finishes 10:04:00: productive 25 + 20 = 45; stalled
    // 10:00:25-10:03:40 = 195; 240 in all.
    Harness x(120);
    const auto run = x.submit("stuck", 1);
    x.emit(K::Started, T0, run, 90);
    x.progress(T0 + 10, run, 1);
    x.progress(T0 + 25, run, 2);
    x.at(T0 + 144);
    json j = x.ledger("stuck");
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(120));
    EXPECT_DOUBLE_EQ(held(j, "stalled"), 0);
    x.at(T0 + 150);
    j = x.ledger("stuck");
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(25));
    EXPECT_DOUBLE_EQ(held(j, "stalled"), h(95));
    auto stalls = x.service().stalls(x.caller());
    ASSERT_TRUE(stalls);
    EXPECT_NE(stalls->dump().find("stuck"), std::string::npos) << stalls->dump();
    x.at(T0 + 220);
    auto r = x.service().report_progress(x.caller(), "stuck", {}, json{{"worker", 0}, {"step", 3}}.dump());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_FALSE(r->at("workers").at(0).at("stalled").get<bool>());
    x.emit(K::Finished, T0 + 240, run);
    x.at(T0 + 240);
    j = x.ledger("stuck");
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(45));
    EXPECT_DOUBLE_EQ(held(j, "stalled"), h(195));
    EXPECT_DOUBLE_EQ(held(j, "idle"), 0);
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(240));
}

TEST(ServiceGoodputExact, UtilizationEdgesFivePointZeroAndFourPointNine) {
    // Sample period 10 s (a sample decides at most 20 s). Runs of 1 GPU, placed and running
    // from 10:00:00, finishing 10:01:00:
    // "samples": samples 50 % at 10:00:00, 4.9 % at 10:00:10, 5.0 % at 10:00:20, then none:
    //   productive 10 (50 %) + 20 (5.0 %, 10:00:20-10:00:40) = 30; idle 10 (4.9 %) + 20
    //   undecided (10:00:40-10:01:00, no progress) = 30; unmeasured 20.
    // "samples-progress": the same samples and a progress report at 10:00:05: its undecided
    //   20 s are productive: productive 50, idle 10, unmeasured 0.
    // "level-5.0" / "level-4.9": the executor's level at Started (5.0 % / 4.9 %), no samples:
    //   productive 60 / idle 60; a level decides, so nothing is unmeasured.
    Harness x;
    const auto a = x.submit("samples", 1);
    const auto b = x.submit("samples-progress", 1);
    const auto c = x.submit("level-5.0", 1);
    const auto d = x.submit("level-4.9", 1);
    for (auto run : {a, b}) {
        x.emit(K::Started, T0, run);
        x.sample(T0, run, 50);
        x.sample(T0 + 10, run, 4.9);
        x.sample(T0 + 20, run, 5.0);
        x.emit(K::Finished, T0 + 60, run);
    }
    x.progress(T0 + 5, b, 1);
    x.emit(K::Started, T0, c, 5.0);
    x.emit(K::Started, T0, d, 4.9);
    x.emit(K::Finished, T0 + 60, c);
    x.emit(K::Finished, T0 + 60, d);
    x.at(T0 + 60);
    const json ja = x.ledger("samples");
    EXPECT_DOUBLE_EQ(held(ja, "productive"), h(30));
    EXPECT_DOUBLE_EQ(held(ja, "idle"), h(30));
    EXPECT_DOUBLE_EQ(unmeasured(ja), h(20));
    const json jb = x.ledger("samples-progress");
    EXPECT_DOUBLE_EQ(held(jb, "productive"), h(50));
    EXPECT_DOUBLE_EQ(held(jb, "idle"), h(10));
    EXPECT_DOUBLE_EQ(unmeasured(jb), 0);
    const json jc = x.ledger("level-5.0");
    EXPECT_DOUBLE_EQ(held(jc, "productive"), h(60));
    EXPECT_DOUBLE_EQ(held(jc, "idle"), 0);
    const json jd = x.ledger("level-4.9");
    EXPECT_DOUBLE_EQ(held(jd, "productive"), 0);
    EXPECT_DOUBLE_EQ(held(jd, "idle"), h(60));
    EXPECT_DOUBLE_EQ(unmeasured(jd), 0);
}

TEST(ServiceGoodputExact, NoUtilizationSourceWithAndWithoutProgress) {
    // No sample and no level (an executor without a utilization source, e.g. Slurm before
    // issue 19), 1 worker x 2 GPUs each, placed 10:00:00, started 10:00:15, finishing 10:03:05:
    // "silent" reports no progress: starting 15 s x 2 = 30; idle 170 s x 2 = 340, all of it
    //   unmeasured. After the counts of 10:01 and 10:02 (looked at 10:02:00): idle 45 + 60 =
    //   105 s x 2 = 210, unmeasured 210.
    // "reporting" reports progress at 10:00:15 (with the start) and every 60 s: running is
    //   decided by progress: productive 340, idle 0, nothing unmeasured.
    // GET /v1/goodput?by=run over the hour: the total's unmeasured is 340 (the silent run's).
    Harness x;
    const auto silent = x.submit("silent", 2);
    const auto rep = x.submit("reporting", 2);
    for (auto run : {silent, rep}) {
        x.emit(K::Started, T0 + 15, run);
        x.emit(K::Finished, T0 + 185, run);
    }
    for (int k = 0; k < 3; ++k) x.progress(T0 + 15 + 60 * k, rep, k + 1);
    x.at(T0 + 120);
    json j = x.ledger("silent");
    EXPECT_DOUBLE_EQ(held(j, "idle"), h(210));
    EXPECT_DOUBLE_EQ(unmeasured(j), h(210));
    x.at(T0 + 185);
    j = x.ledger("silent");
    EXPECT_DOUBLE_EQ(held(j, "starting"), h(30));
    EXPECT_DOUBLE_EQ(held(j, "idle"), h(340));
    EXPECT_DOUBLE_EQ(held(j, "productive"), 0);
    EXPECT_DOUBLE_EQ(unmeasured(j), h(340));
    // Unmeasured is a part of idle, not a ninth category: allocated is 30 + 340.
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(370));
    const json r = x.ledger("reporting");
    EXPECT_DOUBLE_EQ(held(r, "starting"), h(30));
    EXPECT_DOUBLE_EQ(held(r, "productive"), h(340));
    EXPECT_DOUBLE_EQ(held(r, "idle"), 0);
    EXPECT_FALSE(r.contains("unmeasured_gpu_hours"));
    auto rows = x.service().goodput(
        x.caller(), {{"by", "run"}, {"start", "2026-11-02T10:00:00Z"}, {"end", "2026-11-02T11:00:00Z"}});
    ASSERT_TRUE(rows) << rows.error().message;
    EXPECT_DOUBLE_EQ(rows->at("total").at("unmeasured_gpu_hours").get<double>(), h(340));
    EXPECT_DOUBLE_EQ(rows->at("total").at("held_gpu_hours").at("productive").get<double>(), h(340));
    EXPECT_EQ(rows->at("rows").size(), 2U);
}

TEST(ServiceGoodputExact, PlacementFortySecondsIntoAMinuteOnAnExecutorHoldingFromStart) {
    // An executor whose runs hold GPUs from Started to their end event (Slurm allocates at the
    // job's start): the service's decision at 10:00:00 is not a placement in the count; Slurm
    // starts the job at 10:00:40 (Started), with no utilization source and no progress; it
    // finishes at 10:01:40. 2 GPUs: waiting 40 s -> 80 (not held); starting 0; running 60 s,
    // decided by nothing: idle 120, all of it unmeasured (not productive, not silently idle).
    Harness x(600, true);
    const auto run = x.submit("job", 2);
    EXPECT_EQ(x.launched_at(run, 1), T0);
    x.emit(K::Started, T0 + 40, run);
    x.emit(K::Finished, T0 + 100, run);
    x.at(T0 + 100);
    const json j = x.ledger("job");
    EXPECT_DOUBLE_EQ(all(j, "waiting"), h(80));
    EXPECT_DOUBLE_EQ(held(j, "starting"), 0);
    EXPECT_DOUBLE_EQ(held(j, "idle"), h(120));
    EXPECT_DOUBLE_EQ(unmeasured(j), h(120));
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(120));
}

TEST(ServiceGoodputExact, ACrashInsideAMinuteLosesNoSecondAndCountsNoneTwice) {
    // Runs of 2 GPUs placed 10:00:00, started 10:00:10: "busy" (level 90 %) and "unknown" (no
    // utilization source, no progress). The service counts 10:01 (looked at 10:01:10: the
    // seconds 10:01:00-10:01:10 are decided, not yet in the ledger), dies at once, and starts
    // again at 10:01:40 (the runs went on meanwhile). Both finish at 10:02:00.
    // busy: starting 10 s -> 20; productive 110 s -> 220. unknown: starting 20; idle 220, all
    // unmeasured. Each: 240 = 120 s x 2, nothing lost in the crash, nothing counted twice.
    Harness x;
    const auto busy = x.submit("busy", 2);
    const auto unknown = x.submit("unknown", 2);
    x.emit(K::Started, T0 + 10, busy, 90);
    x.emit(K::Started, T0 + 10, unknown);
    x.at(T0 + 70);
    json b = x.ledger("busy");
    EXPECT_DOUBLE_EQ(held(b, "productive"), h(100));  // 10:00:10-10:01:00 x 2
    x.restart_at(T0 + 100);
    x.emit(K::Finished, T0 + 120, busy);
    x.emit(K::Finished, T0 + 120, unknown);
    x.at(T0 + 120);
    b = x.ledger("busy");
    EXPECT_DOUBLE_EQ(held(b, "starting"), h(20));
    EXPECT_DOUBLE_EQ(held(b, "productive"), h(220));
    EXPECT_DOUBLE_EQ(b.at("allocated_gpu_hours").get<double>(), h(240));
    const json u = x.ledger("unknown");
    EXPECT_DOUBLE_EQ(held(u, "starting"), h(20));
    EXPECT_DOUBLE_EQ(held(u, "idle"), h(220));
    EXPECT_DOUBLE_EQ(unmeasured(u), h(220));
    EXPECT_DOUBLE_EQ(u.at("allocated_gpu_hours").get<double>(), h(240));
}

TEST(ServiceGoodputExact, DrainAndLostMachineInsideMinutes) {
    // One machine of 8 GPUs, a run of 2 GPUs placed 10:00:00, busy (level 90 %) from 10:00:10.
    // An org admin drains the machine at 10:00:30: the run winds down (preemption, held) until
    // its StopDone at 10:00:35, then waits (preemption, not held) until the undrain at 10:00:50
    // places it again; it restarts until 10:01:00, runs busy, and its machine is lost at
    // 10:01:20 (failure, held) until the executor releases it at 10:01:35; the machine is back
    // at 10:01:30, so the run is placed again at the release, restarts until 10:01:40 and runs
    // busy until it finishes at 10:02:00. x 2 GPUs:
    // starting 10 s -> 20; productive 20 + 20 + 20 = 60 s -> 120; preemption held 5 s -> 10,
    // not held 15 s -> 30; restart 10 + 5 = 15 s -> 30; failure held 15 s -> 30. 240 in all.
    Harness x;
    const auto run = x.submit("moved", 2);
    const std::string machine = x.script().launched.at(0).run.placement.at(0).machine_name;
    const std::int64_t machine_id = x.script().launched.at(0).run.placement.at(0).machine;
    ASSERT_FALSE(machine.empty());
    x.emit(K::Started, T0 + 10, run, 90);
    x.at(T0 + 30);
    auto d = x.service().drain_machine(x.admin(), machine, true);
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->at("runs_stopped").get<int>(), 1);
    x.emit(K::StopDone, T0 + 35, run);
    x.at(T0 + 50);
    EXPECT_EQ(x.launched_at(run, 2), -1);  // drained: not placed again
    d = x.service().drain_machine(x.admin(), machine, false);
    ASSERT_TRUE(d) << d.error().message;
    ASSERT_EQ(x.launched_at(run, 2), T0 + 50);
    x.emit(K::Started, T0 + 60, run, 90);
    ExecEvent lost{K::MachineLost, T0 + 80};
    lost.machine = machine_id;
    ExecEvent back{K::MachineBack, T0 + 90};
    back.machine = machine_id;
    x.at(T0 + 60);
    x.push(lost);
    x.push(back);
    x.emit(K::Released, T0 + 95, run);
    x.at(T0 + 95);
    ASSERT_EQ(x.launched_at(run, 3), T0 + 95);
    x.emit(K::Started, T0 + 100, run, 90);
    x.emit(K::Finished, T0 + 120, run);
    x.at(T0 + 120);
    const json j = x.ledger("moved");
    EXPECT_DOUBLE_EQ(held(j, "starting"), h(20));
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(120));
    EXPECT_DOUBLE_EQ(held(j, "preemption"), h(10));
    EXPECT_DOUBLE_EQ(all(j, "preemption"), h(40));
    EXPECT_DOUBLE_EQ(held(j, "restart"), h(30));
    EXPECT_DOUBLE_EQ(held(j, "failure"), h(30));
    EXPECT_DOUBLE_EQ(all(j, "failure"), h(30));
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(210));
    EXPECT_DOUBLE_EQ(j.at("waiting_gpu_hours").get<double>(), h(30));
}

TEST(ServiceGoodputExact, AWaitAcrossTheHourAndCrashesIsCountedOnceWithItsHours) {
    // A waiting run's wait is an open interval (not a row per minute): its time must still be
    // shown every minute, split at the hour, and survive crashes exactly. One machine of 8 GPUs:
    // "blocker" (8 GPUs) submitted and placed 10:40:00 (its 30-minute lease ends after 11:02),
    // busy (90 %) from 10:40:10, finishes 11:02:00. "waiter" (2 GPUs) submitted 10:40:30, waits
    // until 11:02:00; starts 11:02:10 (90 %) and finishes 11:03:00. Crashes (the service
    // restarts over its store) at 10:42:30 and 11:01:40.
    // waiter, x 2 GPUs, read at 10:42:10 (counted to 10:42): waiting 90 s -> 180; at 11:00:20
    // (counted to 11:00): 1170 s -> 2340, all in hour 10; after the crash at 11:01:40 (the
    // store counted to 11:01): 1230 s -> 2460; at the end: waiting 10:40:30-11:02:00 = 1290 s
    // -> 2580 (hour 10: 1170 s -> 2340; hour 11: 120 s -> 240), starting 10 s -> 20,
    // productive 50 s -> 100.
    Harness x;
    x.at(T0 + 2400);
    const auto blocker = x.submit("blocker", 8);
    x.at(T0 + 2430);
    const auto waiter = x.submit("waiter", 2);
    x.emit(K::Started, T0 + 2410, blocker, 90);
    x.emit(K::Finished, T0 + 3720, blocker);
    x.at(T0 + 2530);
    EXPECT_DOUBLE_EQ(all(x.ledger("waiter"), "waiting"), h(180));
    x.restart_at(T0 + 2550);
    x.at(T0 + 3620);
    EXPECT_DOUBLE_EQ(all(x.ledger("waiter"), "waiting"), h(2340));
    auto hour = [&](Seconds start) {
        svc::Params q{{"by", "run"},
                      {"start", astraeus::goodput::format_rfc3339(start)},
                      {"end", astraeus::goodput::format_rfc3339(start + 3600)}};
        auto g = x.service().goodput(x.caller(), q);
        if (!g) throw std::runtime_error(g.error().message);
        for (const json& r : g->at("rows"))
            if (r.at("run").get<std::string>() == "waiter") return r.at("gpu_hours").at("waiting").get<double>();
        return 0.0;
    };
    EXPECT_DOUBLE_EQ(hour(T0), h(2340));
    EXPECT_DOUBLE_EQ(hour(T0 + 3600), 0);
    x.at(T0 + 3690);
    x.restart_at(T0 + 3700);
    EXPECT_DOUBLE_EQ(all(x.ledger("waiter"), "waiting"), h(2460));
    x.at(T0 + 3720);
    ASSERT_EQ(x.launched_at(waiter, 1), T0 + 3720);
    x.emit(K::Started, T0 + 3730, waiter, 90);
    x.emit(K::Finished, T0 + 3780, waiter);
    x.at(T0 + 3780);
    const json j = x.ledger("waiter");
    EXPECT_DOUBLE_EQ(all(j, "waiting"), h(2580));
    EXPECT_DOUBLE_EQ(held(j, "starting"), h(20));
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(100));
    EXPECT_DOUBLE_EQ(hour(T0), h(2340));
    EXPECT_DOUBLE_EQ(hour(T0 + 3600), h(240));
}

TEST(ServiceGoodputExact, AWaitAfterAFailureAcrossCrashesBeforeAndAfterTheMinute) {
    // FailureThenAWaitBeforeThePlacementAgain with crashes: "a" is released at 10:00:40 and
    // waits (failure, not held) until 10:01:30. Its record then holds its count at 10:00:00 and
    // the pending 10:00:00-10:00:40; the count at 10:01 emits them and leaves its wait open
    // from 10:01 without writing the record. A crash at 10:01:20 must go on from 10:01 (not
    // from the store's 10:01, by chance the same, and not from 10:00:40: checked by a crash at
    // 10:00:45 first in the second pass, after which the wait is open from 10:00:40).
    // Expected as there: a, x 2 GPUs: productive 80, failure held 40, failure in all 140,
    // restart 20; c: waiting 20, starting 20, productive 140; big: productive 540.
    for (bool early : {false, true}) {
        SCOPED_TRACE(early ? "crashes at 10:00:45 and 10:01:20" : "a crash at 10:01:20");
        Harness x;
        const auto a = x.submit("a", 2);
        const auto big = x.submit("big", 6);
        x.emit(K::Started, T0, a, 90);
        x.emit(K::Started, T0, big, 90);
        x.emit(K::Failed, T0 + 20, a);
        x.at(T0 + 30);
        const auto c = x.submit("c", 2);
        x.emit(K::Released, T0 + 40, a);
        x.emit(K::Finished, T0 + 90, big);
        x.at(T0 + 40);
        ASSERT_EQ(x.launched_at(c, 1), T0 + 40);
        x.emit(K::Started, T0 + 50, c, 90);
        if (early) x.restart_at(T0 + 45);
        x.at(T0 + 70);
        EXPECT_DOUBLE_EQ(all(x.ledger("a"), "failure"), h(40 + 40));  // held 40, waited 20 s x 2
        x.restart_at(T0 + 80);
        EXPECT_DOUBLE_EQ(all(x.ledger("a"), "failure"), h(80));
        x.at(T0 + 90);
        ASSERT_EQ(x.launched_at(a, 2), T0 + 90);
        x.emit(K::Started, T0 + 100, a, 90);
        x.emit(K::Finished, T0 + 120, a);
        x.emit(K::Finished, T0 + 120, c);
        x.at(T0 + 120);
        const json j = x.ledger("a");
        EXPECT_DOUBLE_EQ(held(j, "productive"), h(80));
        EXPECT_DOUBLE_EQ(held(j, "failure"), h(40));
        EXPECT_DOUBLE_EQ(all(j, "failure"), h(140));
        EXPECT_DOUBLE_EQ(held(j, "restart"), h(20));
        EXPECT_DOUBLE_EQ(j.at("waiting_gpu_hours").get<double>(), h(100));
        const json k = x.ledger("c");
        EXPECT_DOUBLE_EQ(all(k, "waiting"), h(20));
        EXPECT_DOUBLE_EQ(held(k, "starting"), h(20));
        EXPECT_DOUBLE_EQ(held(k, "productive"), h(140));
        EXPECT_DOUBLE_EQ(held(x.ledger("big"), "productive"), h(540));
    }
}
