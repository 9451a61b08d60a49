// compat mode against the reference simulator's published results on its bundled synthetic
// trace (spec/astraea.md section 7): 500 jobs, 20 equal tenants, 1 x 40 x 8 = 320 GPUs,
// lease 900 s, T_starve 21600 s, T_delay 300 s, block scheduling, consolidate, fair quotas.
#include <gtest/gtest.h>

#include <cmath>

#include "astraeus/config/tenant_config.hpp"
#include "astraeus/sim/engine.hpp"
#include "astraeus/sim/metrics.hpp"
#include "astraeus/trace/reference_csv.hpp"

namespace astraeus {
namespace {

const std::string kDir = ASTRAEUS_DATA_DIR "/astraea-artifact/";

Workload fake_job_workload() {
    auto tenants = read_tenant_config(kDir + "share.csv", kDir + "name.lst");
    EXPECT_TRUE(tenants.has_value());
    auto trace = read_reference_jobs(kDir + "fake_job.csv");
    EXPECT_TRUE(trace.has_value());
    auto w = apply_tenants(std::move(*trace), *tenants, UnknownTenant::Drop, "fake_job.csv");
    EXPECT_TRUE(w.has_value());
    return *w;
}

SimConfig philly_experiment(JobOrder order) {
    SimConfig c;
    c.cluster = ClusterSpec::uniform(40, 8);
    c.options.mode = Mode::Compat;
    c.options.job_order = order;
    c.options.lease_s = 900;
    c.options.starvation_s = 21600;
    c.options.delay_s = 300;
    c.options.block_scheduling = true;
    c.options.quota_mode = QuotaMode::Fair;
    c.options.checkpoint_s = c.options.restore_s = 0;
    return c;
}

struct Row {
    const char* name;
    JobOrder order;
    QuotaMode quota;
    Seconds lease;
    double avg_jct, fj_min, fj_median, fj_max;
    Seconds makespan;
    long preemptions, checkpoints;
};

// spec/astraea.md section 7.
const Row kRows[] = {
    {"fairness", JobOrder::Fairness, QuotaMode::Fair, 900, 6068.50, 0.0619, 0.9541, 8.6113, 18802, 315, 1048},
    {"disc_fairness", JobOrder::DiscFairness, QuotaMode::Fair, 900, 6086.32, 0.0449, 0.9426, 8.6113, 19512, 315, 1050},
    {"job_reward", JobOrder::JobReward, QuotaMode::Fair, 900, 5831.16, 0.1143, 1.0, 8.4329, 19282, 385, 1048},
    {"themis", JobOrder::Themis, QuotaMode::Fair, 900, 5376.84, 0.1791, 1.0224, 8.0777, 19372, 385, 1048},
    {"yarn_cs", JobOrder::Fifo, QuotaMode::Static, 10000000, 8995.88, 0.0116, 0.8495, 10.1717, 32455, 0, 0},
    {"fifo", JobOrder::Fifo, QuotaMode::Fair, 900, 5870.61, 0.0403, 1.0, 8.9317, 18742, 0, 1048},
    {"las", JobOrder::Las, QuotaMode::Fair, 900, 5942.38, 0.0506, 0.9666, 5.9537, 18422, 0, 1051},
    {"srtf", JobOrder::Srtf, QuotaMode::Fair, 900, 4915.31, 0.2566, 1.0713, 7.1115, 18712, 0, 1051},
    {"smallest_first", JobOrder::SmallestFirst, QuotaMode::Fair, 900, 4780.78, 0.1069, 1.113, 5.9537, 18143, 0, 1052},
};

Summary run_row(const Workload& w, const Row& row) {
    SimConfig c = philly_experiment(row.order);
    c.options.quota_mode = row.quota;
    c.options.lease_s = row.lease;
    auto r = simulate(w, c);
    EXPECT_TRUE(r.has_value());
    return summarize(w, *r, c.cluster.total_gpus());
}

double rel(double got, double want) { return std::abs(got - want) / std::abs(want); }

TEST(CompatReference, FairnessOrderMatchesEveryFigure) {
    const Workload w = fake_job_workload();
    const Summary s = run_row(w, kRows[0]);
    EXPECT_EQ(s.jobs_admitted, 417u);
    EXPECT_EQ(s.jobs_done, 417u);
    EXPECT_LE(rel(s.jct_s.mean, 6068.50), 0.005);
    EXPECT_LE(std::abs(s.makespan_s - 18802), 10);
    EXPECT_LE(rel(static_cast<double>(s.preemptions), 315), 0.02);
    EXPECT_LE(rel(static_cast<double>(s.checkpoints), 1048), 0.02);
    EXPECT_LE(rel(s.fj_min, 0.0619), 0.02);
    EXPECT_LE(rel(s.fj_median, 0.9541), 0.02);
    EXPECT_LE(rel(s.fj_max, 8.6113), 0.02);
}

TEST(CompatReference, EveryRowWithinTwoPercentOnAverageJct) {
    const Workload w = fake_job_workload();
    for (const Row& row : kRows) {
        SCOPED_TRACE(row.name);
        const Summary s = run_row(w, row);
        EXPECT_EQ(s.jobs_admitted, 417u);
        EXPECT_LE(rel(s.jct_s.mean, row.avg_jct), 0.02) << s.jct_s.mean;
    }
}

// Our compat engine reproduces the reference to the printed precision on every row; this
// pins that, so a change that moves any figure is noticed.
TEST(CompatReference, EveryRowMatchesToPrintedPrecision) {
    const Workload w = fake_job_workload();
    for (const Row& row : kRows) {
        SCOPED_TRACE(row.name);
        const Summary s = run_row(w, row);
        EXPECT_NEAR(s.jct_s.mean, row.avg_jct, 0.005);
        EXPECT_EQ(s.makespan_s, row.makespan);
        EXPECT_EQ(s.preemptions, row.preemptions);
        EXPECT_EQ(s.checkpoints, row.checkpoints);
        EXPECT_NEAR(s.fj_min, row.fj_min, 0.00005);
        EXPECT_NEAR(s.fj_median, row.fj_median, 0.00005);
        EXPECT_NEAR(s.fj_max, row.fj_max, 0.00005);
    }
}

TEST(CompatReference, QuotaIsFifteenFromTheFloatFloor) {
    // 20 weights of 0.1 sum to 2.0000000000000004 in floating point, so each tenant gets
    // int(320 * 0.049999999999999996) = 15 GPUs and the 83 16-GPU jobs are dropped.
    const Workload w = fake_job_workload();
    auto q = tenant_quotas(w, 320, Mode::Compat);
    ASSERT_TRUE(q.has_value());
    for (int v : *q) EXPECT_EQ(v, 15);
    auto d = tenant_quotas(w, 320, Mode::Default);
    ASSERT_TRUE(d.has_value());
    for (int v : *d) EXPECT_EQ(v, 16);
}

}  // namespace
}  // namespace astraeus
