// The rounds never touch a run that is stopping (owner stop, time limit, failure): it is leaving
// (RoundAdapter::wind_down), keeps its GPUs until it is gone, and is never preempted by a brand-new
// job (the delay-job rule), placed again or renewed. And a service gang of W workers x G GPUs is
// placed as W chunks of G, each on one machine (sched/gang_placement.hpp); trace jobs (no worker
// shape) keep the placer's own split. Values are computed by hand in each comment.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

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

// 4 workers x 2 GPUs on free GPUs (1, 3, 2, 8): m3 alone holds all 4 (8 / 2), so the gang is
// packed there, {3:2} x 4, one machine (best fit per worker would have used m2, m1 and m3).
TEST(PlacementWorkers, PacksOnTheFewestMachines) {
    ConsolidatePlacer placer;
    ClusterState c(ClusterSpec::uniform(4, 8));
    c.take(0, 7);
    c.take(1, 5);
    c.take(2, 6);
    const auto p = place_gang(placer, c, shaped(8, 2));
    ASSERT_TRUE(p);
    ASSERT_EQ(p->parts.size(), 4u);
    for (std::size_t k = 0; k < 4; ++k) {
        EXPECT_EQ(p->parts[k].machine, 3) << k;
        EXPECT_EQ(p->parts[k].gpus, 2) << k;
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

std::set<int> machines_of(const Placement& p) {
    std::set<int> m;
    for (const auto& part : p.parts) m.insert(part.machine);
    return m;
}

// Machines of 2, 2 and 4 GPUs. A 3 x 2 gang: no machine holds 3 workers, m2 holds the most (2),
// then the last worker goes on the smallest machine that holds it (m0, 2 free): {m2, m2, m0},
// 2 machines (per-worker best fit took m0, m1, m2: 3). A 4 x 1 gang on the same free GPUs
// packs on m2. Heterogeneous pools with fragmentation: free (3, 5, 4) and 2 x 2: m2 (4 free)
// holds both and fits best (m1's 5 would leave 1 GPU stranded): {m2, m2}.
TEST(PlacementWorkers, HeterogeneousPoolsPackOnTheFewestMachines) {
    ConsolidatePlacer placer;
    ClusterSpec spec;
    spec.machine_gpus = {2, 2, 4};
    ClusterState c(spec);
    const auto p = place_gang(placer, c, shaped(6, 2));
    ASSERT_TRUE(p);
    ASSERT_EQ(p->parts.size(), 3u);
    EXPECT_EQ(p->parts[0].machine, 2);
    EXPECT_EQ(p->parts[1].machine, 2);
    EXPECT_EQ(p->parts[2].machine, 0);
    EXPECT_EQ(machines_of(*p).size(), 2u);
    EXPECT_EQ(c.free_gpus(), 2);
    ClusterState e(spec);
    const auto q = place_gang(placer, e, shaped(4, 1));
    ASSERT_TRUE(q);
    EXPECT_EQ(machines_of(*q), std::set<int>{2});
    ClusterSpec odd;
    odd.machine_gpus = {3, 5, 4};
    ClusterState f(odd);
    const auto r = place_gang(placer, f, shaped(4, 2));
    ASSERT_TRUE(r);
    EXPECT_EQ(machines_of(*r), std::set<int>{2});
    // 5 workers x 1 on free (3, 5, 4): m1 holds all 5: one machine.
    ClusterState h(odd);
    const auto s = place_gang(placer, h, shaped(5, 1));
    ASSERT_TRUE(s);
    EXPECT_EQ(machines_of(*s), std::set<int>{1});
}

// The simulator's trace jobs have no worker shape: the pool's placer (consolidate) places them,
// whole chunks of the largest machine (4) first. On 2 + 2 + 4 GPUs a 6-GPU job: chunk 4 on m2,
// chunk 2 on m0 (first fit): 2 machines; a 4-GPU job: m2 alone.
TEST(PlacementWorkers, TraceJobsOnHeterogeneousPoolsUseTheFewestMachines) {
    ConsolidatePlacer placer;
    ClusterSpec spec;
    spec.machine_gpus = {2, 2, 4};
    ClusterState c(spec);
    const auto p = place_gang(placer, c, shaped(6, 0));
    ASSERT_TRUE(p);
    EXPECT_EQ(machines_of(*p), (std::set<int>{0, 2}));
    ClusterState e(spec);
    const auto q = place_gang(placer, e, shaped(4, 0));
    ASSERT_TRUE(q);
    EXPECT_EQ(machines_of(*q), std::set<int>{2});
}

// The same pool through the service's rounds (RoundAdapter, the module `astraeus serve` runs):
// a 3 x 2 run starts on 2 machines; after it ends, a 2 x 2 run starts on 1 machine (m2).
TEST(PlacementWorkers, ServiceRoundsPackHeterogeneousPools) {
    ClusterSpec spec;
    spec.machine_gpus = {2, 2, 4};
    auto r = adapter(spec, "astraea");
    r->set_tenants({{"ml", 1.0}});
    const int a = *r->submit(0, 6, 0, 0, 2);
    const auto d = r->round(0);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].job, a);
    EXPECT_EQ(machines_of(d[0].placement), (std::set<int>{0, 2}));
    r->remove(a, 100);
    const int b = *r->submit(0, 4, 100, 0, 2);
    const auto e = r->round(100);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].job, b);
    EXPECT_EQ(machines_of(e[0].placement), std::set<int>{2});
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

// Runs that stop or move at a lease end: lease-ended runs left pending (not renewed) plus
// starts of lease-ended runs that are not renewals on the GPUs they held (the service stops
// and restarts those: `run.preempted`, then a new attempt).
int moved_at_lease_end(const RoundAdapter& r, const std::vector<int>& ended,
                       const std::vector<Decision>& d) {
    int n = 0;
    for (int j : ended)
        if (r.is_pending(j)) ++n;
    for (const Decision& x : d)
        if (x.kind == Decision::Kind::Preempt ||
            (std::find(ended.begin(), ended.end(), x.job) != ended.end() && !x.renewal))
            ++n;
    return n;
}

// 4 runs of 1 GPU of one workspace on 3 machines of 1 GPU, lease 900 s, default astraea. At
// each lease end 3 leases end together and 1 swap is due (the waiting run is the least served):
// 1 run stops, 2 renew in place, the waiting one takes the stopped one's GPU. Control
// (keep_renewals off): the waiting run, ranked first, takes the first machine (a renewing run's
// GPU), each renewal moves to the next: 3 runs stopped for 1 swap (the field report).
TEST(LeaseEnds, OnePreemptionPerLeaseEnd) {
    for (const bool keep : {true, false}) {
        AstraeaOptions base;
        base.lease_s = 900;
        auto opt = policy_options("astraea", base);
        ASSERT_TRUE(opt);
        opt->improve.keep_renewals = keep;
        auto r = std::move(*RoundAdapter::make(ClusterSpec::uniform(3, 1), *opt, "consolidate"));
        r->set_tenants({{"ml", 1.0}});
        std::vector<int> runs;
        for (int k = 0; k < 4; ++k) runs.push_back(*r->submit(0, 1, 0, 0, 1));
        ASSERT_EQ(r->round(0).size(), 3u);
        for (Seconds t = 900; t <= 3600; t += 900) {
            std::vector<int> ended;
            for (int j : runs)
                if (r->is_running(j)) ended.push_back(j);
            ASSERT_EQ(ended.size(), 3u) << t;
            for (int j : ended) r->lease_end(j, t);
            const auto d = r->round(t);
            EXPECT_EQ(r->free_gpus(), 0) << t;
            const int moved = moved_at_lease_end(*r, ended, d);
            if (keep) {
                EXPECT_EQ(moved, 1) << "lease end at " << t;
            } else if (t == 900) {
                EXPECT_EQ(moved, 3) << "control";
            }
        }
    }
}

}  // namespace
}  // namespace astraeus
