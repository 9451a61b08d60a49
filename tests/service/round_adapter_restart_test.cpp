// The round adapter rebuilt after a restart (service/round_adapter.hpp restore_job,
// restore_running, replay_history) decides as the adapter that lived through the same history:
// a job restored running is not a delay job of its lease, a job that ran is not brand new, and
// the tenant LTGF ledgers are replayed. Each case has a control that shows the value differs
// without the restored state. Times by hand (seconds).
#include <gtest/gtest.h>

#include "astraeus/policies/registry.hpp"
#include "astraeus/service/round_adapter.hpp"

namespace astraeus {
namespace {

using service::Decision;
using service::RoundAdapter;

std::unique_ptr<RoundAdapter> adapter(int machines, int gpus) {
    AstraeaOptions base;
    base.lease_s = 1800;
    auto opt = policy_options("astraea", base);
    EXPECT_TRUE(opt);
    auto ad = RoundAdapter::make(ClusterSpec::uniform(machines, gpus), *opt, "consolidate");
    EXPECT_TRUE(ad);
    return std::move(*ad);
}

Placement on(int machine, int gpus) {
    Placement p;
    p.parts.push_back({machine, gpus});
    return p;
}

// One workspace, 2 GPUs: a (2 GPUs) placed at 0, b (2 GPUs, brand new) waiting since 10. At 200
// a's lease is 200 s old (120 <= 200 < T_delay = 300): a round of the live adapter lets b preempt
// it; after a restart no round before it did, so a keeps its GPUs until its lease end at 1800,
// where b (never served) is chosen.
TEST(RoundAdapterRestart, RestoredRunningJobIsNotADelayJob) {
    auto live = adapter(1, 2);
    live->set_tenants({{"ml", 1.0}});
    const int la = *live->submit(0, 2, 0, 0);
    ASSERT_EQ(live->round(0).size(), 1u);
    const int lb = *live->submit(0, 2, 10, 0);
    EXPECT_TRUE(live->round(10).empty()) << "a's lease is 10 s old: not a delay job";
    auto d = live->round(200);
    ASSERT_EQ(d.size(), 2u) << "control: the live adapter's rule (a is a delay job at 200)";
    EXPECT_EQ(d[0].kind, Decision::Kind::Preempt);
    EXPECT_EQ(d[0].job, la);
    EXPECT_EQ(d[1].job, lb);

    auto r = adapter(1, 2);
    r->set_tenants({{"ml", 1.0}});
    const int a = *r->submit(0, 2, 0, 0);
    const int b = *r->submit(0, 2, 10, 0);
    r->restore_job(a, 0, 0);
    r->restore_job(b, 0, 0);
    r->restore_running(a, on(0, 2), 0, 0);
    EXPECT_TRUE(r->round(200).empty());
    EXPECT_TRUE(r->round(299).empty());
    EXPECT_TRUE(r->is_running(a) && r->is_pending(b));
    r->lease_end(a, 1800);
    d = r->round(1800);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].kind, Decision::Kind::Start);
    EXPECT_EQ(d[0].job, b);
    EXPECT_EQ(d[0].lease_end_s, 1800 + 1800);
    EXPECT_TRUE(r->is_pending(a));
    // A new lease after the restart is an ordinary one again: c (brand new, 2 GPUs) submitted at
    // 2000 preempts b, whose lease is 200 s old.
    const int c = *r->submit(0, 2, 2000, 0);
    d = r->round(2000);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].kind, Decision::Kind::Preempt);
    EXPECT_EQ(d[0].job, b);
    EXPECT_EQ(d[1].job, c);
}

// One workspace, 2 GPUs: c placed at 0 by a round after the restart; b (2 GPUs) waits since 50
// and had run 500 s before the restart (preempted once). At 250, c's lease is 250 s old (a delay
// job): only a brand-new job may preempt it, and b is not one.
TEST(RoundAdapterRestart, AJobThatRanIsNotBrandNew) {
    for (const bool ran : {true, false}) {
        auto r = adapter(1, 2);
        r->set_tenants({{"ml", 1.0}});
        const int c = *r->submit(0, 2, 0, 0);
        ASSERT_EQ(r->round(0).size(), 1u);
        const int b = *r->submit(0, 2, 50, 0);
        if (ran) r->restore_job(b, 500, 1);
        const auto d = r->round(250);
        if (ran) {
            EXPECT_TRUE(d.empty());
            EXPECT_TRUE(r->is_running(c));
        } else {  // control: brand new, it preempts c
            ASSERT_EQ(d.size(), 2u);
            EXPECT_EQ(d[0].kind, Decision::Kind::Preempt);
            EXPECT_EQ(d[1].job, b);
        }
    }
}

// Two workspaces of weight 1 on 4 GPUs (quotas 2 and 2). ml held 4 GPUs over [0, 7200) (run x);
// from 7200 m1 (ml) and c1 (cv) hold 1 GPU each; at 7300 m2 (ml, 2 GPUs) and c2 (cv, 2 GPUs)
// wait for the 2 free GPUs. Both workspaces hold half their quota (ratio 0.5 >= 0.2), so the
// least U/W wins: ml U = 4 x 7200 + 100, cv U = 100 (W = 2 x 7300 each): c2 starts. The live
// adapter and the one replayed from the same history decide the same; without the replay both
// indexes are 1 and ml (declared first) wins.
TEST(RoundAdapterRestart, TenantHistoryIsReplayed) {
    auto live = adapter(1, 4);
    live->set_tenants({{"ml", 1.0}, {"cv", 1.0}});
    const int x = *live->submit(0, 4, 0, 0);
    ASSERT_EQ(live->round(0).size(), 1u);
    live->remove(x, 7200);
    (void)*live->submit(0, 1, 7200, 0);
    (void)*live->submit(1, 1, 7200, 0);
    ASSERT_EQ(live->round(7200).size(), 2u);
    (void)*live->submit(0, 2, 7300, 0);
    const int lc2 = *live->submit(1, 2, 7300, 0);
    auto d = live->round(7300);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].job, lc2);

    for (const bool replay : {true, false}) {
        auto r = adapter(1, 4);
        r->set_tenants({{"ml", 1.0}, {"cv", 1.0}});
        const int m1 = *r->submit(0, 1, 7200, 0);
        const int c1 = *r->submit(1, 1, 7200, 0);
        const int m2 = *r->submit(0, 2, 7300, 0);
        const int c2 = *r->submit(1, 2, 7300, 0);
        r->restore_running(m1, on(0, 1), 7200, 0);
        r->restore_running(c1, on(0, 1), 7200, 0);
        if (replay) {
            std::vector<RoundAdapter::PastRun> past{
                {0, 4, 0, 7200, {{0, 7200}}, -1},
                {0, 1, 7200, -1, {{7200, -1}}, m1},
                {1, 1, 7200, -1, {{7200, -1}}, c1},
                {0, 2, 7300, -1, {}, m2},
                {1, 2, 7300, -1, {}, c2}};
            r->replay_history(past, 0, 7300);
        }
        d = r->round(7300);
        ASSERT_EQ(d.size(), 1u);
        EXPECT_EQ(d[0].job, replay ? c2 : m2) << (replay ? "replayed" : "control: no history");
    }
}

}  // namespace
}  // namespace astraeus
