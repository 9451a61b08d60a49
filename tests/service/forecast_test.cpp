// The forecast of pending runs (service/forecast.hpp): the pool's scheduler run forward on a
// fork of the live adapter. Every expected start is worked out by hand in the comments; the
// live adapter is then run forward itself to check that it decides as the forecast said, and
// that the forecast left it unchanged.
#include <gtest/gtest.h>

#include <map>

#include "astraeus/policies/registry.hpp"
#include "astraeus/service/forecast.hpp"
#include "astraeus/service/round_adapter.hpp"

using namespace astraeus;
using service::ForecastInput;
using service::RoundAdapter;

namespace {

std::unique_ptr<RoundAdapter> adapter(ClusterSpec spec, Seconds lease_s) {
    AstraeaOptions base;
    base.lease_s = lease_s;
    auto opt = policy_options("astraea", base);
    EXPECT_TRUE(opt);
    auto ad = RoundAdapter::make(std::move(spec), *opt, "consolidate");
    EXPECT_TRUE(ad) << ad.error().message;
    return std::move(*ad);
}

/// A forecast input at `now` whose runs take their time limits (`limit`: job -> seconds).
ForecastInput limits_input(Seconds now, std::map<int, Seconds> limit) {
    ForecastInput in;
    in.now = now;
    in.work_s = [limit = std::move(limit)](int j) { return limit.at(j); };
    return in;
}

/// job -> (position, start) of a forecast.
std::map<int, std::pair<int, Seconds>> by_job(const std::vector<service::RunForecast>& f) {
    std::map<int, std::pair<int, Seconds>> m;
    for (const auto& x : f) m[x.job] = {x.position, x.start_s};
    return m;
}

}  // namespace

// 4 GPUs; R (4 GPUs, time limit 600 s) runs from 0; P1 (limit 1,000) and P2 (limit 500) wait
// from 10 and 20. Leases longer than everything. R ends at 600: P1 (never ran, submitted
// first) starts at 600 and ends at 1,600, when P2 starts.
TEST(Forecast, TimeLimitsChainTheStarts) {
    auto a = adapter(ClusterSpec::uniform(1, 4), 1'000'000);
    a->set_tenants({{"ml", 1.0}});
    const int r = *a->submit(0, 4, 0, 600);
    ASSERT_EQ(a->round(0).size(), 1u);
    const int p1 = *a->submit(0, 4, 10, 1000);
    const int p2 = *a->submit(0, 4, 20, 500);
    EXPECT_TRUE(a->round(20).empty());
    ForecastInput in = limits_input(20, {{r, 600}, {p1, 1000}, {p2, 500}});
    auto f = service::forecast_pool(*a, in);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].job, p1);
    EXPECT_EQ(by_job(f)[p1], std::make_pair(1, Seconds{600}));
    EXPECT_EQ(by_job(f)[p2], std::make_pair(2, Seconds{1600}));
    // The live adapter is unchanged, and decides as forecast.
    EXPECT_TRUE(a->is_running(r) && a->is_pending(p1) && a->is_pending(p2));
    EXPECT_EQ(a->free_gpus(), 0);
    a->remove(r, 600);
    auto d = a->round(600);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].job, p1);
    // Refreshed after that decision: P2 alone, first, at 1,600.
    in.now = 600;
    f = service::forecast_pool(*a, in);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(by_job(f)[p2], std::make_pair(1, Seconds{1600}));
}

// Without a time limit a run is expected to run as long again as it has, at least
// kUnknownRunS (3,600 s): R ran 100 s at 100, so it ends at 100 + 3,600 = 3,700; with 5,000 s
// done at 5,000, at 10,000.
TEST(Forecast, UnknownRunTimesAreEstimatedFromTheRunSoFar) {
    auto a = adapter(ClusterSpec::uniform(1, 4), 1'000'000);
    a->set_tenants({{"ml", 1.0}});
    (void)*a->submit(0, 4, 0, 0);
    ASSERT_EQ(a->round(0).size(), 1u);
    const int p = *a->submit(0, 2, 50, 0);
    EXPECT_TRUE(a->round(50).empty());
    ForecastInput in;
    in.now = 100;
    EXPECT_EQ(by_job(service::forecast_pool(*a, in))[p], std::make_pair(1, Seconds{3700}));
    in.now = 5000;
    EXPECT_EQ(by_job(service::forecast_pool(*a, in))[p], std::make_pair(1, Seconds{10000}));
}

// A lease end is a decision: R (4 GPUs, limit 2,000) holds a 900-s lease from 0; P (limit
// 300) and Q (limit 100) wait from 10 and 20, never ran (F = 0). At 900 R's lease ends: P
// (F = 0, submitted first) starts before R (F > 0, it ran 900 s). P ends at its limit, 1,200;
// then Q (F = 0) goes before R again.
TEST(Forecast, LeaseEndsAreDecisions) {
    auto a = adapter(ClusterSpec::uniform(1, 4), 900);
    a->set_tenants({{"ml", 1.0}});
    const int r = *a->submit(0, 4, 0, 2000);
    auto d = a->round(0);
    ASSERT_EQ(d.size(), 1u);
    ASSERT_EQ(d[0].lease_end_s, 900);
    const int p = *a->submit(0, 4, 10, 300);
    const int q = *a->submit(0, 4, 20, 100);
    EXPECT_TRUE(a->round(20).empty());
    ForecastInput in = limits_input(20, {{r, 2000}, {p, 300}, {q, 100}});
    in.lease_end_s = [&](int j) { return j == r ? Seconds{900} : Seconds{-1}; };
    auto f = by_job(service::forecast_pool(*a, in));
    EXPECT_EQ(f[p], std::make_pair(1, Seconds{900}));
    EXPECT_EQ(f[q], std::make_pair(2, Seconds{1200}));
    // The live adapter, run forward, agrees.
    a->lease_end(r, 900);
    d = a->round(900);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].job, p);
    a->remove(p, 1200);
    d = a->round(1200);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].job, q);
}

// Lost machines: 2 machines of 4 GPUs. A (1 x 4, limit 1,000) runs on one; the other is lost
// while free (its 4 GPUs withheld). B (1 x 4) could start were the lost machine up: the reason
// says so, and the forecast starts it when A ends (the lost machine stays lost). C (2 x 4)
// needs both machines: no machine up holds it today, and its start is unknown.
TEST(Forecast, LostMachinesInReasonsAndStarts) {
    auto a = adapter(ClusterSpec::uniform(2, 4), 1'000'000);
    a->set_tenants({{"ml", 1.0}});
    const int A = *a->submit(0, 4, 0, 1000, 4);
    auto d = a->round(0);
    ASSERT_EQ(d.size(), 1u);
    const int lost = 1 - d[0].placement.parts.at(0).machine;
    a->set_machine_up(lost, false);
    const int B = *a->submit(0, 4, 10, 500, 4);
    const int C = *a->submit(0, 8, 20, 500, 4);
    EXPECT_TRUE(a->round(20).empty());
    auto name = [](int m) { return "gpu-" + std::to_string(m) + " (lost)"; };
    EXPECT_EQ(a->pending_reason(B, 1, 4, name), "waiting for GPUs of gpu-" + std::to_string(lost) + " (lost)");
    EXPECT_EQ(a->pending_reason(C, 2, 4, name),
              "no machine up fits 2 x 4 GPUs today (it needs gpu-" + std::to_string(lost) + " (lost))");
    EXPECT_EQ(a->pending_reason(C, 2, 4), "no machine up fits 2 x 4 GPUs today (it needs machine " +
                                              std::to_string(lost) + ")");
    ForecastInput in = limits_input(20, {{A, 1000}, {B, 500}, {C, 500}});
    auto f = by_job(service::forecast_pool(*a, in));
    EXPECT_EQ(f[B], std::make_pair(1, Seconds{1000}));
    EXPECT_EQ(f[C], std::make_pair(2, Seconds{-1}));
    // The machine back: nothing lost; C's 8 GPUs with A's 4 would pass ml's quota of 8, the whole
    // pool (ml is alone in it): it waits for A's GPUs, not for a share another workspace holds.
    a->set_machine_up(lost, true);
    EXPECT_EQ(a->pending_reason(C, 2, 4), "waiting for GPUs: 4 of 8 GPUs of the pool are in use (4 by this workspace), 4 free");
}

// The cost bound: with max_rounds = 1 only the round at now runs; nothing starts then.
TEST(Forecast, TheRoundBoundLeavesLaterStartsUnknown) {
    auto a = adapter(ClusterSpec::uniform(1, 4), 1'000'000);
    a->set_tenants({{"ml", 1.0}});
    const int r = *a->submit(0, 4, 0, 600);
    ASSERT_EQ(a->round(0).size(), 1u);
    const int p = *a->submit(0, 4, 10, 600);
    ForecastInput in;
    in.now = 10;
    in.work_s = [&](int j) { return j == r || j == p ? Seconds{600} : Seconds{0}; };
    in.max_rounds = 1;
    EXPECT_EQ(by_job(service::forecast_pool(*a, in))[p], std::make_pair(1, Seconds{-1}));
    in.max_rounds = 2;
    EXPECT_EQ(by_job(service::forecast_pool(*a, in))[p], std::make_pair(1, Seconds{600}));
}

// The work bound: R (4 GPUs, limit 600) runs; P1 (limit 1,000) and P2 (limit 500) wait. The
// rounds see, after their time's events: at 20 P1, P2 pending and R running (3 job-rounds); at
// 600 (R ended) P1, P2 pending (2; 5 in all): P1 starts; at 1,600 (P1 ended) P2 pending (1; 6
// in all): P2 starts. A budget of 5 knows P1's start but not P2's; 4 neither; 6 both.
TEST(Forecast, TheWorkBoundLeavesLaterStartsUnknown) {
    auto a = adapter(ClusterSpec::uniform(1, 4), 1'000'000);
    a->set_tenants({{"ml", 1.0}});
    const int r = *a->submit(0, 4, 0, 600);
    ASSERT_EQ(a->round(0).size(), 1u);
    const int p1 = *a->submit(0, 4, 10, 1000);
    const int p2 = *a->submit(0, 4, 20, 500);
    EXPECT_TRUE(a->round(20).empty());
    ForecastInput in = limits_input(20, {{r, 600}, {p1, 1000}, {p2, 500}});
    EXPECT_EQ(in.work_budget, service::kForecastWorkBudget);
    in.work_budget = 5;
    auto f = by_job(service::forecast_pool(*a, in));
    EXPECT_EQ(f[p1], std::make_pair(1, Seconds{600}));
    EXPECT_EQ(f[p2], std::make_pair(2, Seconds{-1}));
    in.work_budget = 4;
    f = by_job(service::forecast_pool(*a, in));
    EXPECT_EQ(f[p1], std::make_pair(1, Seconds{-1}));
    EXPECT_EQ(f[p2], std::make_pair(2, Seconds{-1}));
    in.work_budget = 6;
    f = by_job(service::forecast_pool(*a, in));
    EXPECT_EQ(f[p1], std::make_pair(1, Seconds{600}));
    EXPECT_EQ(f[p2], std::make_pair(2, Seconds{1600}));
}
