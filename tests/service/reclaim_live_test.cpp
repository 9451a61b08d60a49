// Reclaim within quota on the live service (issue 21): the round adapter lists the delay jobs of
// every tenant when reclaim_within_quota is on (the default, as in the simulator), so a new job
// of a tenant within its quota takes an over-served delay job of a tenant over its quota at once;
// with the switch off it waits for a lease end. The same jobs as the hand-worked scenario
// tests/scenarios/default_reclaim_within_quota.scn (and its _off twin).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "astraeus/service/config.hpp"
#include "astraeus/service/round_adapter.hpp"
#include "astraeus/service/scheduler_switches.hpp"

namespace astraeus {
namespace {

using service::Decision;
using service::RoundAdapter;

struct Case {
    int a = -1, b1 = -1, b2 = -1;
    std::vector<Decision> at_1000;  ///< the decisions of the round at a's arrival
};

/// 1 x 4 GPUs, workspaces A and B of equal weight (Q = 2 each), lease 900 s, T_starve 6 h,
/// T_delay 300 s, the service configured with `scheduler` (the value of its "scheduler" key).
Case run_case(const std::string& scheduler) {
    const std::string text = R"({"lease_s": 900, "starvation_s": 21600, "scheduler": )" + scheduler + "}";
    auto cfg = service::parse_config(text, "test");
    EXPECT_TRUE(cfg) << (cfg ? "" : cfg.error().message);
    auto opt = service::scheduler_options(cfg->policy, cfg->lease_s, cfg->starvation_s, cfg->scheduler);
    EXPECT_TRUE(opt);
    auto ad = RoundAdapter::make(ClusterSpec::uniform(1, 4), *opt, "consolidate");
    EXPECT_TRUE(ad);
    RoundAdapter& a = **ad;
    a.set_tenants({{"A", 1.0}, {"B", 1.0}});
    Case c;
    // t=0 b1 (B, 2 GPUs) starts; t=1 b2 (B, 2 GPUs) starts: B holds all 4 GPUs.
    c.b1 = *a.submit(1, 2, 0, 5000);
    EXPECT_EQ(a.round(0).size(), 1u);
    c.b2 = *a.submit(1, 2, 1, 1500);
    EXPECT_EQ(a.round(1).size(), 1u);
    // t=900, 901: their leases end with nobody waiting: renewed in place.
    a.lease_end(c.b1, 900);
    auto r900 = a.round(900);
    EXPECT_EQ(r900.size(), 1u);
    EXPECT_TRUE(r900.size() == 1 && r900[0].job == c.b1 && r900[0].renewal);
    a.lease_end(c.b2, 901);
    auto r901 = a.round(901);
    EXPECT_TRUE(r901.size() == 1 && r901[0].job == c.b2 && r901[0].renewal);
    // t=1000: a (A, 2 GPUs, new) arrives at a full pool.
    c.a = *a.submit(0, 2, 1000, 100);
    c.at_1000 = a.round(1000);
    return c;
}

// Hand-worked (the scenario's arithmetic): at 1000 A holds 0 of its quota 2 (index 0); B holds
// 4 > Q_B = 2 (index about 2). b1 and b2 are delay jobs (100 and 99 s into leases that followed a
// lease end, < T_delay). Judged without their lease's work (900 s each), deserved 1 GPU/s each
// (min(g, Q_B / 2 active jobs)), b1 also 2 GPU/s over [0, 1): F_b1 = 1800 / 1001 = 1.798,
// F_b2 = 1800 / 999 = 1.802, both > 1; victims go highest g x F first: b2. B keeps 2 >= Q_B.
TEST(ReclaimLive, DefaultTakesAnOverServedDelayJobOfAnotherWorkspace) {
    const Case c = run_case("{}");
    ASSERT_EQ(c.at_1000.size(), 2u);
    EXPECT_EQ(c.at_1000[0].kind, Decision::Kind::Preempt);
    EXPECT_EQ(c.at_1000[0].job, c.b2);
    EXPECT_EQ(c.at_1000[1].kind, Decision::Kind::Start);
    EXPECT_EQ(c.at_1000[1].job, c.a);
    EXPECT_EQ(c.at_1000[1].lease_end_s, 1900);
}

// The switch off: only A's own delay jobs (none) are listed; a waits (for b2's lease end at
// 1801 or a completion), nothing is preempted.
TEST(ReclaimLive, SwitchedOffTheArrivalWaits) {
    const Case c = run_case(R"({"reclaim_within_quota": false})");
    EXPECT_TRUE(c.at_1000.empty());
}

TEST(ReclaimLive, SwitchesParseAndDescribe) {
    auto sw = service::parse_scheduler_switches(
        nlohmann::json::parse(R"({"reclaim_within_quota": false, "arrival_headroom": -1,
                                  "arrival_headroom_fraction": 0.004})"),
        "scheduler");
    ASSERT_TRUE(sw);
    EXPECT_EQ(sw->describe(), "arrival_headroom=-1 arrival_headroom_fraction=0.004 reclaim_within_quota=false");
    auto opt = service::scheduler_options("astraea", 900, 21600, *sw);
    ASSERT_TRUE(opt);
    EXPECT_FALSE(opt->improve.reclaim_within_quota);
    EXPECT_EQ(opt->improve.headroom_gpus(1120), 4);  // floor(0.004 x 1120 = 4.48)
    EXPECT_EQ(opt->improve.headroom_gpus(249), 0);   // floor(0.996)
    auto bad = service::parse_scheduler_switches(nlohmann::json::parse(R"({"reclaim_within_quota": 1})"), "scheduler");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("'reclaim_within_quota' must be true or false"), std::string::npos);
    auto far = service::parse_scheduler_switches(nlohmann::json::parse(R"({"arrival_headroom_fraction": 0.6})"),
                                                 "scheduler");
    ASSERT_FALSE(far);
    EXPECT_EQ(far.error().message, "scheduler: key 'arrival_headroom_fraction' must be a number in 0.0..0.5");
}

// The live default is the simulator's: the scaled headroom (0.003 of the pool's GPUs: 3 of
// 1,120, 2 of 800, 0 of 333) with free_before_victims, placed_victims_only and the reclaim.
TEST(ReclaimLive, LiveDefaultFollowsTheSimulator) {
    auto opt = service::scheduler_options("astraea", 900, 21600, {});
    ASSERT_TRUE(opt);
    EXPECT_TRUE(opt->improve.reclaim_within_quota);
    EXPECT_TRUE(opt->improve.free_before_victims);
    EXPECT_TRUE(opt->improve.placed_victims_only);
    EXPECT_EQ(opt->improve.arrival_headroom, -1);
    EXPECT_EQ(opt->improve.headroom_gpus(1120), 3);
    EXPECT_EQ(opt->improve.headroom_gpus(800), 2);
    EXPECT_EQ(opt->improve.headroom_gpus(333), 0);
    EXPECT_EQ(opt->improve.headroom_gpus(334), 1);
    auto paper = service::scheduler_options("astraea-paper", 900, 21600, {});
    ASSERT_TRUE(paper);
    EXPECT_FALSE(paper->improve.reclaim_within_quota);
    EXPECT_EQ(paper->improve.headroom_gpus(1120), 0);
}

}  // namespace
}  // namespace astraeus
