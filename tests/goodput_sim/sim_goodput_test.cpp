// Goodput in the simulator (sim/goodput_recorder, sim/lifecycle_model, the event engine's
// hooks): tiny workloads whose ledgers are computed by hand, the non-interference of goodput
// with the schedule, determinism, and the bundled utilization table.
//
// The rule used in the hand computations (goodput/counter.hpp, spec "The count"): every state
// counts for the seconds it really lasted, from the simulator's event times; the counts are
// made every UTC minute and at the end.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "astraeus/config/tenant_config.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/sim/goodput_recorder.hpp"
#include "astraeus/sim/metrics.hpp"
#include "astraeus/sim/report.hpp"
#include "astraeus/trace/reference_csv.hpp"

namespace astraeus {
namespace {

using goodput::Category;

Job job(int tenant, int gpus, Seconds submit_s, Seconds duration_s) {
    Job j;
    j.tenant = tenant;
    j.gpus = gpus;
    j.submit_s = submit_s;
    j.duration_s = duration_s;
    return j;
}

Workload workload(std::vector<std::string> tenants, std::vector<Job> jobs) {
    Workload w;
    for (auto& n : tenants) w.tenants.push_back({n, 1.0});
    for (int u = 0; u < static_cast<int>(w.tenants.size()); ++u) w.share_order.push_back(u);
    w.jobs = std::move(jobs);
    for (std::size_t i = 0; i < w.jobs.size(); ++i) w.jobs[i].id = static_cast<std::int64_t>(i);
    return w;
}

SimConfig config(int machines, int gpus, Seconds lease_s, LifecycleConfig lc) {
    SimConfig c;
    c.cluster = ClusterSpec::uniform(machines, gpus);
    c.cluster_name = "test";
    c.options.lease_s = lease_s;
    c.options.checkpoint_s = 0;
    c.options.restore_s = 0;
    c.options.delay_s = 0;  // no delay-job preemptions
    c.goodput = lc;
    return c;
}

GpuSeconds held(const goodput::Counts& c, Category k) { return c.held_of(k); }
GpuSeconds not_held(const goodput::Counts& c, Category k) { return c.not_held_of(k); }

GpuSeconds sum(const goodput::Counts& c) {
    GpuSeconds s = 0;
    for (Category k : goodput::kAllCategories) s += c.total_of(k);
    return s;
}

TEST(SimGoodput, LifecycleNoneIsProductivePlusWaiting) {
    // 1 machine x 8 GPUs. A: 8 GPUs, submit 0, 3600 s. B: 4 GPUs, submit 600, 1200 s: waits for
    // A's GPUs until 3600, runs 3600..4800. Lease 7200: no lease ends.
    const Workload w = workload({"t"}, {job(0, 8, 0, 3600),
                                        job(0, 4, 600, 1200)});
    auto r = simulate(w, config(1, 8, 7200, LifecycleConfig::none()));
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_TRUE(r->goodput);
    const auto& L = r->goodput->ledger;
    const goodput::Counts a = L.run_total(0), b = L.run_total(1);
    EXPECT_EQ(held(a, Category::Productive), 8 * 3600);  // 28,800
    EXPECT_EQ(sum(a), 8 * 3600);                         // (end - submit) x GPUs
    EXPECT_EQ(not_held(b, Category::Waiting), 4 * 3000); // 600..3600
    EXPECT_EQ(held(b, Category::Productive), 4 * 1200);  // 3600..4800
    EXPECT_EQ(sum(b), 4 * (4800 - 600));                 // 16,800
    const auto f = goodput::figures(L.total());
    ASSERT_TRUE(f.goodput);
    EXPECT_DOUBLE_EQ(*f.goodput, 1.0);
}

TEST(SimGoodput, LeaseEndNotRenewedIsPreemptionWaitingAndStartupsCount) {
    // SRTF (shortest remaining time first at every lease end), 1 x 4 GPUs, two tenants, lease
    // 900, start-up 60 s, 100 % busy.
    // A (tenant a): 4 GPUs, submit 0, 2000 s (borrows 2 GPUs of b's quota).
    // B (tenant b): 2 GPUs, submit 100, 540 s (within its quota).
    //  A: placed 0, starting 0..60, runs 60..900 (840 s of work), lease end at 900 not renewed
    //     (B has 540 s left, A 1160 s; A no longer fits beside B): preemption waiting
    //     900..1500.
    //  B: waiting 100..900, placed 900, starting 900..960, runs 960..1500, ends.
    //  A: placed again 1500, restart 1500..1560, runs 1560..2400 (lease end renewed in place
    //     on the same GPUs: no event), then the last 2000 - 840 - 840 = 320 s: ends at 2720.
    LifecycleConfig lc = LifecycleConfig::none();
    lc.startup_s = 60;
    const Workload w = workload({"a", "b"}, {job(0, 4, 0, 2000),
                                             job(1, 2, 100, 540)});
    SimConfig c = config(1, 4, 900, lc);
    c.options.policy = "srtf";
    auto r = simulate(w, c);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->runs[0].end_s, 2720);
    EXPECT_EQ(r->runs[1].end_s, 1500);
    const auto& L = r->goodput->ledger;
    const goodput::Counts a = L.run_total(0), b = L.run_total(1);
    EXPECT_EQ(held(a, Category::Starting), 4 * 60);
    EXPECT_EQ(held(a, Category::Productive), 4 * (840 + 1160));
    EXPECT_EQ(not_held(a, Category::Preemption), 4 * 600);
    EXPECT_EQ(held(a, Category::Preemption), 0);
    EXPECT_EQ(held(a, Category::Restart), 4 * 60);
    EXPECT_EQ(sum(a), 4 * 2720);
    EXPECT_EQ(not_held(b, Category::Waiting), 2 * 800);
    EXPECT_EQ(held(b, Category::Starting), 2 * 60);
    EXPECT_EQ(held(b, Category::Productive), 2 * 540);
    EXPECT_EQ(sum(b), 2 * (1500 - 100));
    EXPECT_EQ(r->goodput->events.preemptions, 1);
    EXPECT_EQ(r->goodput->events.placements, 3);
}

TEST(SimGoodput, PlacementFortySecondsIntoAMinuteAndNineSecondStartUps) {
    // 1 x 4 GPUs, start-up 9 s, 100 % busy. A: 4 GPUs, submit 0, 31 s of work: starting 0..9,
    // runs 9..40, ends 40. B: 4 GPUs, submit 0, 60 s of work: waits 0..40 (placed 40 s into
    // the minute), starting 40..49, runs 49..109. To the second, x 4 GPUs:
    //  A: starting 36, productive 124;  B: waiting 160 (not held), starting 36, productive 240.
    // (The minute rule gave B waiting 0 and starting 240: its first minute was placed at the
    // count.)
    LifecycleConfig lc = LifecycleConfig::none();
    lc.startup_s = 9;
    const Workload w = workload({"t"}, {job(0, 4, 0, 31), job(0, 4, 0, 60)});
    auto r = simulate(w, config(1, 4, 7200, lc));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->runs[0].end_s, 40);
    EXPECT_EQ(r->runs[1].end_s, 109);
    const auto& L = r->goodput->ledger;
    const goodput::Counts a = L.run_total(0), b = L.run_total(1);
    EXPECT_EQ(held(a, Category::Starting), 36);
    EXPECT_EQ(held(a, Category::Productive), 124);
    EXPECT_EQ(not_held(b, Category::Waiting), 160);
    EXPECT_EQ(held(b, Category::Starting), 36);
    EXPECT_EQ(held(b, Category::Productive), 240);
    EXPECT_EQ(sum(b), 4 * 109);
    EXPECT_EQ(r->goodput->unmeasured_gpu_s, 0);  // the simulator gives every run a level
}

TEST(SimGoodput, UtilizationEdgeFivePointZeroIsBusyFourPointNineIdle) {
    // The busy threshold's edge (>= 5 %): one 4-GPU job, 90 s of work from 0 on 1 x 4 GPUs, no
    // start-up, every running second at a fixed level. At 5.0 %: productive 90 x 4 = 360, idle
    // 0; at 4.9 %: productive 0, idle 360. A level decides: nothing unmeasured either way.
    for (const double pct : {5.0, 4.9}) {
        LifecycleConfig lc = LifecycleConfig::none();
        lc.full_utilization = false;
        lc.fixed_utilization_pct = pct;
        const Workload w = workload({"t"}, {job(0, 4, 0, 90)});
        auto r = simulate(w, config(1, 4, 7200, lc));
        ASSERT_TRUE(r) << r.error().message;
        const goodput::Counts a = r->goodput->ledger.run_total(0);
        EXPECT_EQ(held(a, Category::Productive), pct >= 5.0 ? 360 : 0) << pct;
        EXPECT_EQ(held(a, Category::Idle), pct >= 5.0 ? 0 : 360) << pct;
        EXPECT_EQ(sum(a), 360) << pct;
        EXPECT_EQ(r->goodput->unmeasured_gpu_s, 0) << pct;
    }
    LifecycleConfig bad = LifecycleConfig::none();
    bad.fixed_utilization_pct = 101;
    ASSERT_FALSE(check_lifecycle(bad));
    EXPECT_NE(check_lifecycle(bad).error().message.find("fixed_utilization_pct"), std::string::npos);
}

TEST(SimGoodput, FailureHoldsThenRestarts) {
    // 1 x 4 GPUs, one job of 1000 s, start-up 60 s, an early failure certain at running age 1 s
    // (window 2 s: age = 1 + floor(u x 1) = 1), held 180 s, lease 3600.
    //  place 0, start 60, fail 61 (the 60..61 work is lost), release 241, placed again 241,
    //  start 301, runs the whole 1000 s: ends 1301.
    // To the second: [0,60) starting; [60,61) productive; [61,241) failure (held);
    // [241,301) restart; [301,1301) productive: 1 + 1000 = 1001 s.
    LifecycleConfig lc = LifecycleConfig::none();
    lc.startup_s = 60;
    lc.early_failure_p = 1.0;
    lc.early_failure_window_s = 2;
    lc.failure_hold_s = 180;
    const Workload w = workload({"a"}, {job(0, 4, 0, 1000)});
    auto r = simulate(w, config(1, 4, 3600, lc));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->runs[0].end_s, 1301);
    const goodput::Counts a = r->goodput->ledger.run_total(0);
    EXPECT_EQ(held(a, Category::Starting), 4 * 60);
    EXPECT_EQ(held(a, Category::Failure), 4 * 180);
    EXPECT_EQ(not_held(a, Category::Failure), 0);
    EXPECT_EQ(held(a, Category::Restart), 4 * 60);
    EXPECT_EQ(held(a, Category::Productive), 4 * 1001);
    EXPECT_EQ(sum(a), 4 * 1301);
    EXPECT_EQ(r->goodput->events.failures, 1);
}

TEST(SimGoodput, TwentySecondFailureCostsTwentySeconds) {
    // The case in the simulator: as FailureHoldsThenRestarts with a failure held 20 s.
    //  place 0, start 60, fail 61, release 81, placed again 81, start 141, runs 1000 s: ends 1141.
    // x 4 GPUs: starting 240, failure 80 (held; none waiting: placed again at once), restart 240,
    // productive 4 x 1001; all 4 x 1141. (The minute rule put the 20 s in whatever state held
    // at the minute's count: failure 0.)
    LifecycleConfig lc = LifecycleConfig::none();
    lc.startup_s = 60;
    lc.early_failure_p = 1.0;
    lc.early_failure_window_s = 2;
    lc.failure_hold_s = 20;
    const Workload w = workload({"a"}, {job(0, 4, 0, 1000)});
    auto r = simulate(w, config(1, 4, 3600, lc));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->runs[0].end_s, 1141);
    const goodput::Counts a = r->goodput->ledger.run_total(0);
    EXPECT_EQ(held(a, Category::Starting), 4 * 60);
    EXPECT_EQ(held(a, Category::Failure), 4 * 20);
    EXPECT_EQ(not_held(a, Category::Failure), 0);
    EXPECT_EQ(held(a, Category::Restart), 4 * 60);
    EXPECT_EQ(held(a, Category::Productive), 4 * 1001);
    EXPECT_EQ(sum(a), 4 * 1141);
}

TEST(SimGoodput, LeaseEndNotRenewedCountsTheCheckpointAsHeldPreemption) {
    // As LeaseEndNotRenewedIsPreemptionWaitingAndStartupsCount with a checkpoint of 60 s at
    // every lease end (the lease's last 60 s write it).
    //  A: placed 0, starting 0..60, runs 60..840 (work 900 - 60 - 60 = 780 s); not renewed at
    //     900: stop(preemption) at 840, release at 900; waiting (preemption) 900..1500.
    //  B: waiting 100..900, starting 900..960, runs 960..1500 (540 s), ends.
    //  A: placed again 1500, restart 1500..1560, runs 1560..2400 (lease end renewed on the
    //     same GPUs: the checkpoint minute stays running), then the last
    //     2000 - 780 - (900 - 60 - 60) = 440 s: ends at 2840.
    // Held preemption: [840, 900) = 60 s x 4 GPUs (840 is a minute boundary).
    LifecycleConfig lc = LifecycleConfig::none();
    lc.startup_s = 60;
    const Workload w = workload({"a", "b"}, {job(0, 4, 0, 2000),
                                             job(1, 2, 100, 540)});
    SimConfig c = config(1, 4, 900, lc);
    c.options.policy = "srtf";
    c.options.checkpoint_s = 60;
    auto r = simulate(w, c);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->runs[0].end_s, 2840);
    EXPECT_EQ(r->runs[1].end_s, 1500);
    const goodput::Counts a = r->goodput->ledger.run_total(0);
    EXPECT_EQ(held(a, Category::Starting), 4 * 60);
    EXPECT_EQ(held(a, Category::Productive), 4 * (780 + 1280));  // 60..840, 1560..2840
    EXPECT_EQ(held(a, Category::Preemption), 4 * 60);              // 840..900
    EXPECT_EQ(not_held(a, Category::Preemption), 4 * 600);         // 900..1500
    EXPECT_EQ(held(a, Category::Restart), 4 * 60);
    EXPECT_EQ(sum(a), 4 * 2840);
    EXPECT_EQ(r->goodput->events.preemptions, 1);
}

TEST(SimGoodput, LastFailedAttemptEndsTheJobForGood) {
    // FailureHoldsThenRestarts with --max-attempts 1: place 0, start 60, fail 61, holds its
    // GPUs 180 s and ends at 241 in the failed state (never placed again).
    // To the second: [0,60) starting; [60,61) productive (the work lost stays productive);
    // [61,241) failed, holding: failure 180 s x 4 GPUs (the minute rule gave 181: the running
    // second 60..61 counted with its minute, failed at the count).
    LifecycleConfig lc = LifecycleConfig::none();
    lc.startup_s = 60;
    lc.early_failure_p = 1.0;
    lc.early_failure_window_s = 2;
    lc.failure_hold_s = 180;
    lc.max_attempts = 1;
    const Workload w = workload({"a"}, {job(0, 4, 0, 1000)});
    auto r = simulate(w, config(1, 4, 3600, lc));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->runs[0].status, RunStatus::Pending);  // admitted, not done
    EXPECT_EQ(r->runs[0].life_s, 241);
    EXPECT_EQ(r->end_s, 241);
    const goodput::Counts a = r->goodput->ledger.run_total(0);
    EXPECT_EQ(held(a, Category::Starting), 4 * 60);
    EXPECT_EQ(held(a, Category::Failure), 4 * 180);
    EXPECT_EQ(held(a, Category::Productive), 4 * 1);
    EXPECT_EQ(held(a, Category::Restart), 0);
    EXPECT_EQ(sum(a), 4 * 241);
    EXPECT_EQ(r->goodput->events.failures, 1);
    EXPECT_EQ(r->goodput->events.failed_for_good, 1);
    EXPECT_EQ(r->goodput->events.most_failures, 1);
    const Summary s = summarize(w, *r, 4);
    EXPECT_EQ(s.jobs_admitted, 1u);
    EXPECT_EQ(s.jobs_done, 0u);
    // With 2 attempts the second one completes (FailureHoldsThenRestarts: ends at 1301).
    lc.max_attempts = 2;
    auto r2 = simulate(w, config(1, 4, 3600, lc));
    ASSERT_TRUE(r2) << r2.error().message;
    EXPECT_EQ(r2->runs[0].status, RunStatus::Done);
    EXPECT_EQ(r2->runs[0].end_s, 1301);
    EXPECT_EQ(r2->goodput->events.failed_for_good, 0);
}

TEST(SimGoodput, JobsThatNeverCheckpointEndAfterMaxAttempts) {
    // The highest failure rate allowed, 10 per GPU-hour, on 8-GPU jobs of 2 hours with no
    // checkpoint of their own and a lease longer than the trace: 80 failures per running hour
    // (mean 45 s), so an attempt survives 2 hours with probability e^-160. Without a bound the
    // jobs retry forever; with --max-attempts 5 each fails exactly 5 times, then for good.
    LifecycleConfig lc = LifecycleConfig::none();
    lc.failure_rate_gpu_hour = 10;
    lc.job_checkpoint_s = 0;
    lc.max_attempts = 5;
    const Workload w = workload({"a"}, {job(0, 8, 0, 7200), job(0, 8, 30, 7200)});
    auto r = simulate(w, config(2, 8, 1000000, lc));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->goodput->events.failures, 2 * 5);
    EXPECT_EQ(r->goodput->events.failed_for_good, 2);
    EXPECT_EQ(r->goodput->events.most_failures, 5);
    for (int j = 0; j < 2; ++j) {
        EXPECT_EQ(r->runs[j].status, RunStatus::Pending);
        // every second from submission to the end counted once, x 8 GPUs
        EXPECT_EQ(sum(r->goodput->ledger.run_total(j)), 8 * r->runs[j].life_s);
    }
}

TEST(SimGoodput, BadValuesNameTheirFlag) {
    LifecycleConfig c;
    c.early_failure_p = 2;
    EXPECT_EQ(check_lifecycle(c).error().message,
              "--early-failure: expected a probability from 0 to 1, got 2");
    c = {};
    c.failure_rate_gpu_hour = 10.5;
    EXPECT_EQ(check_lifecycle(c).error().message,
              "--failure-rate: expected a rate from 0 to 10 per GPU-hour, got 10.5");
    c = {};
    c.stall_timeout_s = 59;
    EXPECT_EQ(check_lifecycle(c).error().message,
              "--stall-timeout: expected seconds from 60 to 86400, got 59");
    c = {};
    c.max_attempts = 0;
    EXPECT_EQ(check_lifecycle(c).error().message,
              "--max-attempts: expected a whole number from 1 to 100, got 0");
    EXPECT_EQ(LifecycleConfig::named("x").error().message,
              "--lifecycle: expected calibrated or none, got 'x'");
    EXPECT_TRUE(check_lifecycle(LifecycleConfig{}));
    EXPECT_TRUE(check_lifecycle(LifecycleConfig::none()));
}

TEST(SimGoodput, WeekHeadingsShowTheDateAsReplayDoes) {
    // Epoch 1511740800 = Monday 2017-11-27T00:00:00Z (ISO week 2017-W48); a job of 1 hour.
    Workload w = workload({"a"}, {job(0, 1, 0, 3600)});
    w.epoch_unix_s = 1511740800;
    auto r = simulate(w, config(1, 1, 7200, LifecycleConfig::none()));
    ASSERT_TRUE(r) << r.error().message;
    const std::string text = goodput_text(*r->goodput, goodput::By::Workspace, 1);
    EXPECT_NE(text.find("\nWeek 2017-W48 (from 2017-11-27)\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("T00:00:00Z"), std::string::npos) << text;
}

TEST(SimGoodput, StallDetectedAfterTheTimeoutIsStalledFromItsOnset) {
    // 1 x 4 GPUs, one job of 3000 s, no start-up, stalls every 6 minutes of running on
    // average; timeout 600 s; stopped 60 s; then placed again. The minutes from the onset to
    // the detection move to stalled; every second is counted once.
    LifecycleConfig lc = LifecycleConfig::none();
    lc.stall_rate_job_hour = 10;  // mean 6 minutes to the onset
    lc.stall_timeout_s = 600;
    lc.stall_stop_s = 60;
    const Workload w = workload({"a"}, {job(0, 4, 0, 3000)});
    SimConfig c = config(1, 4, 100000, lc);
    auto r = simulate(w, c);
    ASSERT_TRUE(r) << r.error().message;
    const goodput::Counts a = r->goodput->ledger.run_total(0);
    EXPECT_GE(r->goodput->events.stalls, 1);
    EXPECT_GE(held(a, Category::Stalled), 4 * 600);
    // An attempt runs its 3000 s without a stall with probability e^(-3000/360) = 2.4e-4 (its
    // own checkpoints come every 3600 s): the job fails for good at its 100th stall (the
    // default --max-attempts) unless an attempt gets through. Either way every second from
    // submission (0) to its end is counted once.
    EXPECT_EQ(r->goodput->events.stalls + r->goodput->events.failures,
              r->goodput->events.most_failures);
    if (r->runs[0].status != RunStatus::Done) {
        EXPECT_EQ(r->goodput->events.most_failures, 100);
        EXPECT_EQ(r->goodput->events.failed_for_good, 1);
    }
    EXPECT_EQ(sum(a), 4 * r->runs[0].life_s);
}

TEST(SimGoodput, LifecycleNoneLeavesTheScheduleAsWithoutGoodput) {
    const std::string dir = ASTRAEUS_DATA_DIR "/astraea-artifact/";
    auto tenants = read_tenant_config(dir + "share.csv", dir + "name.lst");
    auto trace = read_reference_jobs(dir + "fake_job.csv");
    auto w = apply_tenants(std::move(*trace), *tenants, UnknownTenant::Drop, "fake_job.csv");
    SimConfig off;
    off.options.lease_s = 900;
    SimConfig none = off;
    none.goodput = LifecycleConfig::none();
    auto a = simulate(*w, off), b = simulate(*w, none);
    ASSERT_TRUE(a && b);
    EXPECT_FALSE(a->goodput);
    EXPECT_EQ(jobs_csv(*w, *a), jobs_csv(*w, *b));
    // and the count adds up: every job's ledger is (end - submit) x GPUs.
    for (std::size_t j = 0; j < w->jobs.size(); ++j) {
        if (b->runs[j].status != RunStatus::Done) continue;
        EXPECT_EQ(sum(b->goodput->ledger.run_total(static_cast<int>(j))),
                  GpuSeconds{w->jobs[j].gpus} * (b->runs[j].end_s - w->jobs[j].submit_s));
    }
}

std::string goodput_bytes(std::uint64_t seed) {
    const std::string dir = ASTRAEUS_DATA_DIR "/astraea-artifact/";
    auto tenants = read_tenant_config(dir + "share.csv", dir + "name.lst");
    auto trace = read_reference_jobs(dir + "fake_job.csv");
    auto w = apply_tenants(std::move(*trace), *tenants, UnknownTenant::Drop, "fake_job.csv");
    SimConfig c;
    c.options.lease_s = 900;
    c.options.seed = seed;
    LifecycleConfig lc;
    lc.machine_loss_rate_day = 1.0;  // make every model fire on this small trace
    lc.stall_rate_job_hour = 0.05;
    c.goodput = lc;
    auto r = simulate(*w, c);
    EXPECT_TRUE(r) << r.error().message;
    if (!r) return "";
    // Calibrated: every job's ledger still adds up to (end - submit) x GPUs.
    for (std::size_t j = 0; j < w->jobs.size(); ++j) {
        if (r->runs[j].status != RunStatus::Done) continue;
        EXPECT_EQ(sum(r->goodput->ledger.run_total(static_cast<int>(j))),
                  GpuSeconds{w->jobs[j].gpus} * (r->runs[j].end_s - w->jobs[j].submit_s));
    }
    const auto& e = r->goodput->events;
    EXPECT_GT(e.failures, 0);
    EXPECT_GT(e.machine_losses, 0);
    EXPECT_GT(e.stalls, 0);
    EXPECT_GT(e.stragglers, 0);
    return goodput_json(*r->goodput, goodput::By::Run, 2).dump(2) + jobs_csv(*w, *r);
}

TEST(SimGoodput, SameSeedSameGoodputJson) {
    const std::string a = goodput_bytes(3);
    EXPECT_EQ(a, goodput_bytes(3));
    EXPECT_NE(a, goodput_bytes(4));
}

TEST(SimGoodput, CompatModeIsRefused) {
    const Workload w = workload({"a"}, {job(0, 4, 0, 100)});
    SimConfig c = config(1, 4, 900, LifecycleConfig::none());
    c.options.mode = Mode::Compat;
    auto r = simulate(w, c);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("--mode default"), std::string::npos);
}

TEST(SimGoodput, BundledUtilizationTableMatchesTheCode) {
    std::ifstream in(ASTRAEUS_DATA_DIR "/goodput/philly_gpu_util_quantiles.csv");
    ASSERT_TRUE(in);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "quantile_pct,gpu_util_pct");
    const auto& q = philly_gpu_util_quantiles();
    int n = 0;
    while (std::getline(in, line)) {
        const auto comma = line.find(',');
        EXPECT_EQ(std::stoi(line.substr(0, comma)), n);
        EXPECT_DOUBLE_EQ(std::stod(line.substr(comma + 1)), q[static_cast<std::size_t>(n)]);
        ++n;
    }
    EXPECT_EQ(n, 101);
    // The share of idle (< 5 %) draws: Philly's CDF has 34.5 % of its samples under 5 %
    // (cluster_summary's companion gpu_util_cdf.csv); the interpolated inverse CDF gives
    // 34 + (5 - 3.7667) / (6.2 - 3.7667) = 34.51 %.
    LifecycleModel m(LifecycleConfig{}, 1);
    int idle = 0;
    const int draws = 100000;
    for (int i = 0; i < draws; ++i)
        idle += m.utilization_pct((i + 0.5) / draws) < 5.0;
    EXPECT_NEAR(idle / double(draws), 0.3451, 0.0005);
}

}  // namespace
}  // namespace astraeus
