#include <gtest/gtest.h>

#include "astraeus/sim/engine.hpp"
#include "astraeus/sim/metrics.hpp"
#include "astraeus/sim/report.hpp"

namespace astraeus {
namespace {

Workload tenants_with(std::vector<double> weights) {
    Workload w;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        std::string name = "t";
        name += std::to_string(i);  // (operator+ trips GCC 12's -Wrestrict false positive)
        w.tenants.push_back({name, weights[i]});
        w.share_order.push_back(static_cast<int>(i));
    }
    return w;
}

TEST(Quotas, LargestRemainderSumsToTheCluster) {
    // 8 GPUs over three equal tenants: floors 2, 2, 2; remainders 2/3 each -> +1 to the first
    // two in declaration order.
    auto q = tenant_quotas(tenants_with({1, 1, 1}), 8, Mode::Default);
    ASSERT_TRUE(q);
    EXPECT_EQ(*q, (std::vector<int>{3, 3, 2}));
    // 10 GPUs, weights 1:2:7 -> exact 1, 2, 7
    EXPECT_EQ(*tenant_quotas(tenants_with({1, 2, 7}), 10, Mode::Default),
              (std::vector<int>{1, 2, 7}));
    // 100 GPUs, 0.15 : 0.35 : 0.5 -> 15, 35, 50
    EXPECT_EQ(*tenant_quotas(tenants_with({0.15, 0.35, 0.5}), 100, Mode::Default),
              (std::vector<int>{15, 35, 50}));
}

TEST(Quotas, CompatFloorsAndRefusesZero) {
    // floor(8 * 1/3) = 2 each: a GPU is lost (quirk 3)
    EXPECT_EQ(*tenant_quotas(tenants_with({1, 1, 1}), 8, Mode::Compat), (std::vector<int>{2, 2, 2}));
    auto zero = tenant_quotas(tenants_with({1, 100}), 8, Mode::Compat);
    ASSERT_FALSE(zero);
    EXPECT_NE(zero.error().message.find("tenant 't0' gets a quota of 0 GPUs"), std::string::npos);
    // default: a zero quota is legal; the GPU goes to the larger remainder
    EXPECT_EQ(*tenant_quotas(tenants_with({1, 100}), 8, Mode::Default), (std::vector<int>{0, 8}));
}

TEST(Metrics, PercentileInterpolatesLikeNumpy) {
    // numpy.percentile([1, 2, 3, 4], 50) = 2.5; 95 -> 3.85; 0 -> 1
    EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
    EXPECT_NEAR(percentile({4, 1, 3, 2}, 95), 3.85, 1e-12);
    EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0), 1);
}

TEST(Metrics, JainIndex) {
    EXPECT_DOUBLE_EQ(jain_index({1, 1, 1, 1}), 1.0);
    EXPECT_DOUBLE_EQ(jain_index({1, 0, 0, 0}), 0.25);
    EXPECT_DOUBLE_EQ(jain_index({1, 3}), 16.0 / 20.0);  // (1+3)^2 / (2 * (1+9))
}

TEST(Simulate, RejectsALeaseShorterThanItsOverheads) {
    Workload w = tenants_with({1});
    Job job;
    job.id = 1;
    job.tenant = 0;
    job.duration_s = 10;
    w.jobs.push_back(job);
    SimConfig c;
    c.options.lease_s = 20;
    c.options.checkpoint_s = 5;
    c.options.restore_s = 20;
    auto r = simulate(w, c);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("must be longer than checkpoint + restore"), std::string::npos);
}

}  // namespace
}  // namespace astraeus

namespace astraeus {
namespace {

TEST(Metrics, TenantFairnessFiguresOverTenantsWithJobs) {
    Workload w = tenants_with({1, 1, 1});
    for (int u = 0; u < 2; ++u) {  // tenant 2 has no jobs: left out of the tenant figures
        Job j;
        j.id = u;
        j.tenant = u;
        j.duration_s = 100;
        w.jobs.push_back(j);
    }
    SimResult r;
    r.runs.resize(2);
    for (auto& run : r.runs) {
        run.status = RunStatus::Done;
        run.first_start_s = 0;
        run.end_s = 100;
        run.fairness = 1.0;
        run.deserved_gpu_s = 100;
    }
    r.runs[1].deserved_gpu_s = 0;  // deserved nothing: F_j undefined, left out
    r.runs[1].fairness = 0;
    r.tenant_fairness = {0.9, 1.3, 0.1};
    r.end_s = 100;
    const Summary s = summarize(w, r, 8);
    EXPECT_DOUBLE_EQ(s.fu_min, 0.9);
    EXPECT_NEAR(s.fu_max_shortfall, 0.1, 1e-12);
    EXPECT_NEAR(s.fu_max_dev, 0.3, 1e-12);
    EXPECT_NEAR(s.fu_max_over_min, 1.3 / 0.9, 1e-12);
    EXPECT_NEAR(s.fu_jain, (2.2 * 2.2) / (2 * (0.81 + 1.69)), 1e-12);
    EXPECT_DOUBLE_EQ(s.share_fair, 1.0);
    EXPECT_EQ(s.jobs_without_fairness, 1u);
    EXPECT_DOUBLE_EQ(s.fj_min, 1.0);
}

TEST(Report, CsvFieldsAreQuotedWhenTheyMustBe) {
    EXPECT_EQ(csv_field("plain"), "plain");
    EXPECT_EQ(csv_field("A,B"), "\"A,B\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
}

TEST(Options, OutOfRangeValuesAreErrorsNamingTheOption) {
    AstraeaOptions o;
    EXPECT_FALSE(check_options(o));
    o.starvation_s = 0;  // once hung default mode: a zero-delay timer loop
    ASSERT_TRUE(check_options(o));
    EXPECT_EQ(check_options(o)->message,
              "the starvation threshold (s) must be between 1 and 10000000000, got 0");
    o = {};
    o.window_buckets = 2000000000;
    EXPECT_NE(check_options(o)->message.find("fairness window"), std::string::npos);
    o = {};
    o.delay_s = -1;
    EXPECT_NE(check_options(o)->message.find("delay threshold"), std::string::npos);
    o = {};
    o.lease_s = 4611686018427387904;
    EXPECT_NE(check_options(o)->message.find("lease"), std::string::npos);
}

TEST(Quotas, AbsurdWeightsAreErrors) {
    auto q = tenant_quotas(tenants_with({1e308, 1}), 8, Mode::Default);
    ASSERT_FALSE(q);
    EXPECT_NE(q.error().message.find("tenant 't0': weight must be between 0 and 1e15"),
              std::string::npos);
}

}  // namespace
}  // namespace astraeus

namespace astraeus {
namespace {

TEST(Simulate, LongIdleGapsCostNothing) {
    // Two jobs 9e9 s (285 years) apart: hourly samples only around the work, not for every
    // idle hour (which would be 2.5 M rows); both jobs still run exactly.
    Workload w = tenants_with({1});
    for (Seconds submit : {Seconds{5}, Seconds{9'000'000'000}}) {
        Job j;
        j.id = submit;
        j.tenant = 0;
        j.submit_s = submit;
        j.duration_s = 100;
        w.jobs.push_back(j);
    }
    SimConfig c;
    auto r = simulate(w, c);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->runs[0].end_s, 105);
    EXPECT_EQ(r->runs[1].end_s, 9'000'000'100);
    // 24-bucket window: at most the window before the second job plus the first bucket.
    EXPECT_LE(r->tenant_series.size(), 26u);
}

}  // namespace
}  // namespace astraeus
