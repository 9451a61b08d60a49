#include <gtest/gtest.h>

#include <cmath>

#include "astraeus/accounting/job_fairness.hpp"
#include "astraeus/accounting/tenant_ledger.hpp"
#include "astraeus/base/pyfloat.hpp"

namespace astraeus {
namespace {

TEST(FairnessClass, BoundariesOfTheSpec) {
    EXPECT_EQ(fairness_class(0.0), 0);
    EXPECT_EQ(fairness_class(0.1), 1);
    EXPECT_EQ(fairness_class(0.46), 1);
    EXPECT_EQ(fairness_class(0.48), 2);
    EXPECT_EQ(fairness_class(0.81), 2);
    EXPECT_EQ(fairness_class(0.83), 3);
    EXPECT_EQ(fairness_class(1.0), 3);  // phi = 0: 5 - floor(0.5 / 0.2) = 3
    EXPECT_EQ(fairness_class(1.22), 3);
    EXPECT_EQ(fairness_class(1.24), 4);
    EXPECT_EQ(fairness_class(2.11), 4);
    EXPECT_EQ(fairness_class(2.13), 5);
    EXPECT_EQ(fairness_class(100.0), 5);
}

TEST(PyFloat, FloorDivisionMatchesPython) {
    // Values from CPython 3.11: 0.5 // 0.2 == 2.0, 1.0 // 0.1 == 9.0, -0.5 // 0.2 == -3.0.
    EXPECT_EQ(py_floordiv(0.5, 0.2), 2.0);
    EXPECT_EQ(py_floordiv(1.0, 0.1), 9.0);
    EXPECT_EQ(py_floordiv(-0.5, 0.2), -3.0);
    EXPECT_EQ(py_floordiv(0.6, 0.2), 2.0);  // 0.6 / 0.2 = 2.9999999999999996
}

TEST(JobLedger, DeservedIsCappedByTheGang) {
    RunState r;
    accrue_deserved(r, 2, job_fair_share(1, 3, 3, 12), 10);  // share 4 > g 2: +20
    accrue_deserved(r, 2, job_fair_share(1, 8, 8, 12), 10);  // share 1.5: +15
    EXPECT_DOUBLE_EQ(r.deserved_gpu_s, 35.0);
    r.utilized_gpu_s = 70;
    refresh_fairness(r);
    EXPECT_DOUBLE_EQ(r.fairness, 2.0);
    EXPECT_EQ(fairness_class(r.fairness), 4);
}

TEST(JobLedger, ThemisFinishTimeFairness) {
    RunState r;
    EXPECT_EQ(finish_time_fairness(r, 100), 1.0);  // D = 0
    r.deserved_gpu_s = 400;
    r.utilized_gpu_s = 200;  // U/D = 0.5
    r.executed_s = 50;
    r.life_s = 150;
    // isolated = 50 * 0.5 + (150 - 50) = 125; remaining = 100 - 50 = 50; rho = 150 / 175
    EXPECT_DOUBLE_EQ(finish_time_fairness(r, 100), 150.0 / 175.0);
}

TEST(TenantLedger, WindowKeepsTheLastClosedBuckets) {
    TenantLedger l(2);
    l.accrue(4, 6, 3, 10);  // W 40, demand 60, U 30, D min(6,4)*10 = 40
    EXPECT_EQ(l.window().entitled, 0);  // nothing closed yet
    l.close_bucket();
    l.accrue(4, 2, 2, 10);  // W 40, U 20, D 20
    l.close_bucket();
    l.accrue(4, 0, 0, 100);  // W 400, U 0, D 0
    l.close_bucket();       // the first bucket leaves the window
    const TenantServiceSums s = l.window();
    EXPECT_EQ(s.entitled, 440);
    EXPECT_EQ(s.utilized, 20);
    EXPECT_EQ(s.deserved, 20);
    EXPECT_DOUBLE_EQ(TenantLedger::scheduling_index(s), 20.0 / 440.0);
    EXPECT_DOUBLE_EQ(TenantLedger::fairness(s), 1.0);
    // over the whole run: W 40 + 40 + 400, U 30 + 20, D 40 + 20
    const TenantServiceSums all = l.lifetime();
    EXPECT_EQ(all.entitled, 480);
    EXPECT_EQ(all.utilized, 50);
    EXPECT_EQ(all.deserved, 60);
    EXPECT_DOUBLE_EQ(TenantLedger::fairness(all), 50.0 / 60.0);
}

TEST(TenantLedger, ProRataWindowSlides) {
    TenantLedger l(2);
    l.accrue(1, 1, 1, 100);  // bucket a: U 100
    l.close_bucket();
    l.accrue(1, 1, 0, 100);  // bucket b: U 0
    l.close_bucket();
    l.accrue(1, 1, 1, 25);   // current: U 25, a quarter through
    // window = 3/4 of a (75) + b (0) + current (25) = 100 utilized; W = 75 + 100 + 25 = 200
    const TenantServiceSums s = l.window(0.25);
    EXPECT_EQ(s.utilized, 100);
    EXPECT_EQ(s.entitled, 200);
}

TEST(TenantLedger, EmptyLedgerIsFair) {
    TenantServiceSums s;
    EXPECT_EQ(TenantLedger::fairness(s), 1.0);
    EXPECT_EQ(TenantLedger::scheduling_index(s), 1.0);
}

}  // namespace
}  // namespace astraeus
