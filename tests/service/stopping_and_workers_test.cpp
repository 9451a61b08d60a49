// The rounds never touch a run that is stopping (owner stop, time limit, failure): it is leaving
// (RoundAdapter::wind_down), keeps its GPUs until it is gone, and is never preempted by a brand-new
// job (the delay-job rule), placed again or renewed. And a service gang of W workers x G GPUs is
// placed as W chunks of G, each on one machine (sched/gang_placement.hpp); trace jobs (no worker
// shape) keep the placer's own split. Values are computed by hand in each comment.
#include <gtest/gtest.h>

#include "astraeus/placement/consolidate.hpp"
#include "astraeus/sched/gang_placement.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/service/round_adapter.hpp"

namespace astraeus {
namespace {

using service::Decision;
using service::RoundAdapter;

// astraea-paper: a brand-new job may preempt any delay job of its tenant (the default astraea
// only an over-served one, F_j > 1, as k16 was in the field), so the controls below show the
// decision that a stopping run must escape. wind_down takes the job off every list a policy reads.
std::unique_ptr<RoundAdapter> adapter(ClusterSpec spec, const char* policy = "astraea-paper") {
    AstraeaOptions base;
    base.lease_s = 1800;
    auto opt = policy_options(policy, base);
    EXPECT_TRUE(opt);
    auto ad = RoundAdapter::make(std::move(spec), *opt, "consolidate");
    EXPECT_TRUE(ad);
    return std::move(*ad);
}

// One workspace, 2 GPUs: a (2 GPUs) placed at 0, b (2 GPUs, brand new) waits from 10. At 200 a's
// lease is 200 s old (120 <= 200 < T_delay = 300), so b may preempt it (control: the live rule,
// the log's `run.preempted` 70 ms after `run.stop`). Stopped by its owner at 190, a is leaving:
// the round at 200 decides nothing, a keeps its 2 GPUs until it is gone (remove at 230), then b
// starts on them; a is never pending again.
TEST(RoundAdapterStopping, StoppingRunIsNotPreemptedByABrandNewJob) {
    for (const bool stopped : {false, true}) {
        auto r = adapter(ClusterSpec::uniform(1, 2));
        r->set_tenants({{"ml", 1.0}});
        const int a = *r->submit(0, 2, 0, 0);
        ASSERT_EQ(r->round(0).size(), 1u);
        const int b = *r->submit(0, 2, 10, 0);
        EXPECT_TRUE(r->round(10).empty());
        if (!stopped) {
            const auto d = r->round(200);
            ASSERT_EQ(d.size(), 2u) << "control: a is a delay job at 200";
            EXPECT_EQ(d[0].kind, Decision::Kind::Preempt);
            EXPECT_EQ(d[0].job, a);
            continue;
        }
        r->wind_down(a, 190);
        EXPECT_TRUE(r->is_winding_down(a));
        EXPECT_TRUE(r->round(200).empty());
        EXPECT_FALSE(r->is_pending(a));
        EXPECT_FALSE(r->is_running(a));
        EXPECT_EQ(r->free_gpus(), 0) << "a's processes still hold its GPUs";
        r->lease_end(a, 1800);  // a lease end of a leaving run changes nothing
        EXPECT_FALSE(r->is_pending(a));
        r->remove(a, 230);
        EXPECT_EQ(r->free_gpus(), 2);
        const auto d = r->round(230);
        ASSERT_EQ(d.size(), 1u);
        EXPECT_EQ(d[0].kind, Decision::Kind::Start);
        EXPECT_EQ(d[0].job, b);
        EXPECT_FALSE(r->is_pending(a));
    }
}

// A run preempted at 200 (waiting again) that its owner then stops (250) is never placed again:
// when b leaves at 300 the 2 GPUs stay free (control: without the stop, a starts at 300).
TEST(RoundAdapterStopping, StoppedWhilePreemptedIsNeverPlacedAgain) {
    for (const bool stopped : {false, true}) {
        auto r = adapter(ClusterSpec::uniform(1, 2));
        r->set_tenants({{"ml", 1.0}});
        const int a = *r->submit(0, 2, 0, 0);
        ASSERT_EQ(r->round(0).size(), 1u);
        const int b = *r->submit(0, 2, 10, 0);
        ASSERT_EQ(r->round(200).size(), 2u);
        ASSERT_TRUE(r->is_pending(a));
        if (stopped) r->wind_down(a, 250);
        r->remove(b, 300);
        const auto d = r->round(300);
        if (!stopped) {
            ASSERT_EQ(d.size(), 1u);
            EXPECT_EQ(d[0].job, a);
            continue;
        }
        EXPECT_TRUE(d.empty());
        EXPECT_EQ(r->free_gpus(), 2);
        r->remove(a, 310);  // its wind-down ends: nothing to give back twice
        EXPECT_EQ(r->free_gpus(), 2);
    }
}

// A failure winds down (GPUs held, not preemptible), then is retried: requeue gives the GPUs
// back and the job waits; the next round places it again (b, submitted later, waits).
TEST(RoundAdapterStopping, FailureWindsDownThenRequeues) {
    auto r = adapter(ClusterSpec::uniform(1, 2));
    r->set_tenants({{"ml", 1.0}});
    const int a = *r->submit(0, 2, 0, 0);
    ASSERT_EQ(r->round(0).size(), 1u);
    (void)*r->submit(0, 2, 10, 0);
    r->wind_down(a, 150);
    EXPECT_TRUE(r->round(200).empty());
    EXPECT_EQ(r->free_gpus(), 0);
    r->requeue(a, 260);
    EXPECT_TRUE(r->is_pending(a));
    EXPECT_FALSE(r->is_winding_down(a));
    EXPECT_EQ(r->free_gpus(), 2);
}

// After a restart, a run restored holding its GPUs while its owner's stop winds down is leaving:
// no round preempts it, and its GPUs come back only when it is removed.
TEST(RoundAdapterStopping, RestoredStoppingRunIsLeaving) {
    auto r = adapter(ClusterSpec::uniform(1, 2));
    r->set_tenants({{"ml", 1.0}});
    const int a = *r->submit(0, 2, 0, 0);
    const int b = *r->submit(0, 2, 10, 0);
    r->restore_job(a, 0, 0);
    r->restore_job(b, 0, 0);
    Placement p;
    p.parts.push_back({0, 2});
    r->restore_running(a, p, 0, 0);
    r->wind_down(a, 190);
    r->replay_history({}, 0, 195);
    EXPECT_TRUE(r->round(200).empty());
    EXPECT_TRUE(r->round(1800).empty());
    EXPECT_EQ(r->free_gpus(), 0);
    r->remove(a, 1900);
    const auto d = r->round(1900);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].job, b);
}

Job shaped(int gpus, int per_worker) {
    Job j;
    j.gpus = gpus;
    j.gpus_per_worker = per_worker;
    return j;
}

// 2 workers x 6 GPUs on 4 x 8 free GPUs: one worker per machine, {m0: 6}, {m1: 6} (best fit:
// after the first, m0 has 2 free < 6). Control: the same 12 GPUs without a worker shape (a trace
// job) keep consolidate's split {m0: 8}, {m1: 4}, which would put a worker across two machines.
TEST(PlacementWorkers, EveryWorkerOnOneMachine) {
    ConsolidatePlacer placer;
    ClusterState c(ClusterSpec::uniform(4, 8));
    const auto p = place_gang(placer, c, shaped(12, 6));
    ASSERT_TRUE(p);
    ASSERT_EQ(p->parts.size(), 2u);
    EXPECT_EQ(p->parts[0].machine, 0);
    EXPECT_EQ(p->parts[0].gpus, 6);
    EXPECT_EQ(p->parts[1].machine, 1);
    EXPECT_EQ(p->parts[1].gpus, 6);
    EXPECT_EQ(c.free_gpus(), 32 - 12);

    ClusterState t(ClusterSpec::uniform(4, 8));
    const auto q = place_gang(placer, t, shaped(12, 0));
    ASSERT_TRUE(q);
    ASSERT_EQ(q->parts.size(), 2u);
    EXPECT_EQ(q->parts[0].gpus, 8);
    EXPECT_EQ(q->parts[1].gpus, 4);
}

// 4 workers x 2 GPUs on free GPUs (1, 3, 2, 8): best fit gives m2 (2 free), m1 (3), then m3
// twice (m1 has 1 left): parts {2:2}, {1:2}, {3:2}, {3:2}. Several workers share a machine.
TEST(PlacementWorkers, BestFitSharesMachines) {
    ConsolidatePlacer placer;
    ClusterState c(ClusterSpec::uniform(4, 8));
    c.take(0, 7);
    c.take(1, 5);
    c.take(2, 6);
    const auto p = place_gang(placer, c, shaped(8, 2));
    ASSERT_TRUE(p);
    const std::vector<std::pair<int, int>> want{{2, 2}, {1, 2}, {3, 2}, {3, 2}};
    ASSERT_EQ(p->parts.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
        EXPECT_EQ(p->parts[k].machine, want[k].first) << k;
        EXPECT_EQ(p->parts[k].gpus, want[k].second) << k;
    }
    // 3 workers x 3 GPUs: only m3 (8 free) holds 3, twice; the third worker finds no machine
    // although 1 + 3 + 2 + 8 = 14 >= 9 GPUs are free: nothing is placed, nothing is taken.
    ClusterState d(ClusterSpec::uniform(4, 8));
    d.take(0, 7);
    d.take(1, 6);
    d.take(2, 6);
    EXPECT_FALSE(place_gang(placer, d, shaped(9, 3)));
    EXPECT_EQ(d.free_gpus(), 1 + 2 + 2 + 8);
}

// A pool of one 8-GPU and one 4-GPU machine holds at most 1 worker of 6 GPUs (8/6 + 4/6 = 1):
// 2 x 6 can never run and submit says so; 3 x 4 fits (2 + 1 = 3 workers).
TEST(PlacementWorkers, NeverFitsIsAnErrorAtSubmit) {
    ClusterSpec spec;
    spec.machine_gpus = {8, 4};
    EXPECT_EQ(workers_that_fit(spec.machine_gpus, 6), 1);
    EXPECT_EQ(workers_that_fit(spec.machine_gpus, 4), 3);
    auto r = adapter(spec);
    r->set_tenants({{"ml", 1.0}});
    auto bad = r->submit(0, 12, 0, 0, 6);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("no placement for 2 x 6 GPUs"), std::string::npos) << bad.error().message;
    EXPECT_NE(bad.error().message.find("at most 1 workers of 6 GPUs"), std::string::npos) << bad.error().message;
    EXPECT_TRUE(r->submit(0, 12, 0, 0, 4));
}

// The round adapter's decision for 2 x 6 on 4 x 8: one part of 6 per worker, on machines 0 and 1.
TEST(PlacementWorkers, RoundAdapterStartsWorkersWhole) {
    auto r = adapter(ClusterSpec::uniform(4, 8), "astraea");
    r->set_tenants({{"ml", 1.0}});
    (void)*r->submit(0, 12, 0, 0, 6);
    const auto d = r->round(0);
    ASSERT_EQ(d.size(), 1u);
    ASSERT_EQ(d[0].placement.parts.size(), 2u);
    EXPECT_EQ(d[0].placement.parts[0].machine, 0);
    EXPECT_EQ(d[0].placement.parts[0].gpus, 6);
    EXPECT_EQ(d[0].placement.parts[1].machine, 1);
    EXPECT_EQ(d[0].placement.parts[1].gpus, 6);
}

}  // namespace
}  // namespace astraeus
