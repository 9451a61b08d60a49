// Same input and seed give byte-identical outputs (per-job CSV, tenant series, summary).
#include <gtest/gtest.h>

#include "astraeus/config/tenant_config.hpp"
#include "astraeus/sim/report.hpp"
#include "astraeus/trace/reference_csv.hpp"

namespace astraeus {
namespace {

std::string outputs(Mode mode, JobOrder order, std::uint64_t seed) {
    const std::string dir = ASTRAEUS_DATA_DIR "/astraea-artifact/";
    auto tenants = read_tenant_config(dir + "share.csv", dir + "name.lst");
    auto trace = read_reference_jobs(dir + "fake_job.csv");
    auto w = apply_tenants(std::move(*trace), *tenants, UnknownTenant::Drop, "fake_job.csv");
    SimConfig c;
    c.options.mode = mode;
    c.options.job_order = order;
    c.options.seed = seed;
    c.options.lease_s = 900;
    if (mode == Mode::Compat) c.options.checkpoint_s = c.options.restore_s = 0;
    auto r = simulate(*w, c);
    EXPECT_TRUE(r);
    const Summary s = summarize(*w, *r, c.cluster.total_gpus());
    return jobs_csv(*w, *r) + tenants_csv(*w, *r) + summary_json(*w, *r, s).dump();
}

TEST(Determinism, SameInputSameSeedSameBytes) {
    for (Mode m : {Mode::Compat, Mode::Default}) {
        for (JobOrder o : {JobOrder::Fairness, JobOrder::Themis, JobOrder::Random}) {
            SCOPED_TRACE(std::string(to_string(m)) + " " + std::string(to_string(o)));
            EXPECT_EQ(outputs(m, o, 7), outputs(m, o, 7));
        }
    }
}

TEST(Determinism, TheSeedMattersForTheRandomOrder) {
    EXPECT_NE(outputs(Mode::Default, JobOrder::Random, 1),
              outputs(Mode::Default, JobOrder::Random, 2));
}

}  // namespace
}  // namespace astraeus
