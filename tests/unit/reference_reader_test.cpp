#include <gtest/gtest.h>

#include "astraeus/config/tenant_config.hpp"
#include "astraeus/trace/reference_csv.hpp"

namespace astraeus {
namespace {

const std::string kDir = ASTRAEUS_TESTS_DIR "/fixtures/reference/";

std::string error_of(const Result<Workload>& r) { return r ? "" : r.error().message; }

TEST(ReferenceReader, ReadsSortsAndSkipsZeroGpuRows) {
    SkipCounts skips;
    auto w = read_reference_jobs(kDir + "good.csv", &skips);
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_EQ(skips.summary(), "1 (num_gpu = 0: 1)");
    ASSERT_EQ(w->jobs.size(), 3u);  // job 3 asks for 0 GPUs: skipped, as the reference does
    // sorted by submit, ties in file order: 1 (0), 2 (5), 4 (5)
    EXPECT_EQ(w->jobs[0].id, 1);
    EXPECT_EQ(w->jobs[1].id, 2);
    EXPECT_EQ(w->jobs[2].id, 4);
    EXPECT_EQ(w->jobs[2].gpus, 4);
    EXPECT_EQ(w->jobs[2].duration_s, 30);
    ASSERT_EQ(w->tenants.size(), 2u);
    EXPECT_EQ(w->tenants[w->jobs[1].tenant].name, "B");
}

TEST(ReferenceReader, BadRowsNameFileLineAndField) {
    EXPECT_EQ(error_of(read_reference_jobs(kDir + "bad_gpus.csv")),
              kDir + "bad_gpus.csv:3: field 'num_gpu': expected an integer from 1 to 1000000, got 'two'");
    EXPECT_EQ(error_of(read_reference_jobs(kDir + "bad_submit.csv")),
              kDir + "bad_submit.csv:3: field 'submit_time': expected an integer from 0 to 10000000000, got '-5'");
    EXPECT_EQ(error_of(read_reference_jobs(kDir + "huge_gpus.csv")),
              kDir + "huge_gpus.csv:2: field 'num_gpu': expected an integer from 1 to 1000000, got '9999999999'");
    EXPECT_EQ(error_of(read_reference_jobs(kDir + "dup_id.csv")),
              kDir + "dup_id.csv:3: field 'job_id': duplicate job id 1");
    EXPECT_EQ(error_of(read_reference_jobs(kDir + "short_row.csv")),
              kDir + "short_row.csv:2: expected 5 fields, found 4");
    EXPECT_EQ(error_of(read_reference_jobs(kDir + "no_submit.csv")),
              kDir + "no_submit.csv:1: missing column 'submit_time' in the header");
    EXPECT_NE(error_of(read_reference_jobs(kDir + "missing.csv")).find("cannot open"),
              std::string::npos);
}

TEST(ReferenceReader, NameListWithCarriageReturnsGivesTheOrder) {
    auto t = read_reference_tenants(kDir + "share.csv", kDir + "names_cr.lst");
    ASSERT_TRUE(t) << t.error().message;
    ASSERT_EQ(t->tenants.size(), 2u);
    EXPECT_EQ(t->tenants[0].name, "B");
    EXPECT_EQ(t->tenants[1].name, "A");
    EXPECT_DOUBLE_EQ(t->tenants[1].weight, 0.25);
    // share_order: declaration order (A then B) as tenant indexes
    EXPECT_EQ(t->share_order, (std::vector<int>{1, 0}));
}

TEST(ReferenceReader, BadShareIsAnError) {
    auto t = read_reference_tenants(kDir + "bad_share.csv", "");
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().message,
              kDir + "bad_share.csv:3: field 'share': expected a number from 0 to 1e15, got 'zero'");
}

TEST(TenantConfig, JsonQuotasMixedKeysAndTheDocumentedExample) {
    auto t = read_tenant_config(kDir + "tenants.json", "");
    ASSERT_TRUE(t) << t.error().message;
    ASSERT_EQ(t->tenants.size(), 2u);
    EXPECT_EQ(t->tenants[0].name, "A");
    EXPECT_DOUBLE_EQ(t->tenants[0].weight, 3);
    EXPECT_DOUBLE_EQ(t->tenants[1].weight, 5);
    auto bad = read_tenant_config(kDir + "tenants_no_weight.json", "");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("tenants[0] ('A')"), std::string::npos);
    auto mixed = read_tenant_config(kDir + "tenants_mixed.json", "");
    ASSERT_FALSE(mixed);
    EXPECT_NE(mixed.error().message.find("tenants[1] ('B'): use \"weight\" for every tenant"),
              std::string::npos);
    auto example = read_tenant_config(ASTRAEUS_TESTS_DIR "/../docs/examples/tenants.json", "");
    ASSERT_TRUE(example) << example.error().message;
    EXPECT_EQ(example->tenants.size(), 4u);
}

TEST(TenantConfig, JsonUnknownKeysAndBothKeysAreErrors) {
    // A typo was read as a missing weight ("expected a number ..."), a top-level typo and an
    // entry with both "weight" and "quota_gpus" were accepted silently.
    auto typo = read_tenant_config(kDir + "tenants_typo.json", "");
    ASSERT_FALSE(typo);
    EXPECT_EQ(typo.error().message, kDir + "tenants_typo.json: tenants[1] ('B'): unknown key "
                                           "'wieght' (expected name, weight or quota_gpus)");
    auto top = read_tenant_config(kDir + "tenants_top_key.json", "");
    ASSERT_FALSE(top);
    EXPECT_EQ(top.error().message,
              kDir + "tenants_top_key.json: unknown key 'tenant' (expected \"tenants\")");
    // A later tenant without either key was reported as mixing "weight" and "quota_gpus".
    auto missing = read_tenant_config(kDir + "tenants_second_no_weight.json", "");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message,
              kDir + "tenants_second_no_weight.json: tenants[1] ('B'): no \"weight\" (or "
                     "\"quota_gpus\"): expected a number from 0 to 1e15");
    auto both = read_tenant_config(kDir + "tenants_both.json", "");
    ASSERT_FALSE(both);
    EXPECT_EQ(both.error().message, kDir + "tenants_both.json: tenants[0] ('A'): give \"weight\" "
                                           "or \"quota_gpus\", not both");
}

TEST(ApplyTenants, UnknownTenantIsAnErrorOrDropped) {
    auto trace = read_reference_jobs(kDir + "good.csv");
    ASSERT_TRUE(trace);
    TenantTable only_a{{{"A", 1.0}}, {0}};
    auto err = apply_tenants(*trace, only_a, UnknownTenant::Error, "good.csv");
    ASSERT_FALSE(err);
    EXPECT_NE(err.error().message.find("job 2: tenant 'B' has no weight"), std::string::npos);
    auto dropped = apply_tenants(*trace, only_a, UnknownTenant::Drop, "good.csv");
    ASSERT_TRUE(dropped);
    EXPECT_EQ(dropped->jobs[0].tenant, 0);
    EXPECT_EQ(dropped->jobs[1].tenant, -1);
    auto added = apply_tenants(*trace, only_a, UnknownTenant::DefaultWeight, "good.csv");
    ASSERT_TRUE(added);
    ASSERT_EQ(added->tenants.size(), 2u);
    EXPECT_EQ(added->tenants[1].name, "B");
}

}  // namespace
}  // namespace astraeus
