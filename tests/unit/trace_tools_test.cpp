// Slicing, statistics, tenant assignment and the native round trip. Hand-made workloads have
// their answers worked out in the comments; numbers about the real Philly files were computed
// independently with python3 (csv/json + zoneinfo) from data/philly/.
#include <gtest/gtest.h>

#include <sstream>

#include <map>

#include "astraeus/trace/native_trace.hpp"
#include "astraeus/trace/philly_joblog.hpp"
#include "astraeus/trace/read_trace.hpp"
#include "astraeus/trace/rfold_csv.hpp"
#include "astraeus/trace/slice.hpp"
#include "astraeus/trace/stats.hpp"
#include "astraeus/trace/tenant_assign.hpp"

namespace astraeus {
namespace {

const std::string kPhilly = ASTRAEUS_DATA_DIR "/philly/";

Job make_job(std::int64_t id, int tenant, int gpus, Seconds submit, Seconds duration) {
    Job j;
    j.id = id;
    j.tenant = tenant;
    j.gpus = gpus;
    j.submit_s = submit;
    j.duration_s = duration;
    return j;
}

void expect_same(const Workload& a, const Workload& b) {
    EXPECT_EQ(a.epoch_unix_s, b.epoch_unix_s);
    EXPECT_EQ(a.share_order, b.share_order);
    ASSERT_EQ(a.tenants.size(), b.tenants.size());
    for (std::size_t u = 0; u < a.tenants.size(); ++u) {
        EXPECT_EQ(a.tenants[u].name, b.tenants[u].name);
        EXPECT_EQ(a.tenants[u].weight, b.tenants[u].weight);
    }
    ASSERT_EQ(a.jobs.size(), b.jobs.size());
    std::size_t diffs = 0;
    for (std::size_t i = 0; i < a.jobs.size(); ++i) {
        const Job &x = a.jobs[i], &y = b.jobs[i];
        const bool same = x.id == y.id && x.tenant == y.tenant && x.gpus == y.gpus &&
                          x.submit_s == y.submit_s && x.duration_s == y.duration_s &&
                          x.weight == y.weight && x.name == y.name;
        if (!same && diffs++ < 5) ADD_FAILURE() << "job " << i << " (id " << x.id << ") differs";
    }
    EXPECT_EQ(diffs, 0u);
}

// ---- busiest_days / slice_window / cap_duration ----

// Epoch 2017-10-01 20:00 UTC, so relative times and UTC days do not line up:
//   A: Oct 1 20:00, 1 GPU x 100 s =100 | B: Oct 2 00:00, 2 x 50 = 100 | C: Oct 2 23:59:59, 4 x 100
//   = 400 | D: Oct 3 00:00, 1 x 300 = 300 | E: Oct 5 00:00, 8 x 100 = 800.
// Per day: Oct 1: 100, Oct 2: 500, Oct 3: 300, Oct 4: 0, Oct 5: 800.
Workload days_workload() {
    Workload w;
    w.epoch_unix_s = 1506888000;  // 2017-10-01 20:00:00 UTC
    const Seconds oct2 = 4 * 3600;
    w.jobs = {make_job(1, -1, 1, 0, 100), make_job(2, -1, 2, oct2, 50),
              make_job(3, -1, 4, oct2 + 86399, 100), make_job(4, -1, 1, oct2 + 86400, 300),
              make_job(5, -1, 8, oct2 + 3 * 86400, 100)};
    return w;
}

TEST(BusiestDays, HandWorkload) {
    const Workload w = days_workload();
    const Seconds oct2 = 4 * 3600;
    auto one = busiest_days(w, 1);  // Oct 5 alone: 800
    ASSERT_TRUE(one);
    EXPECT_EQ(one->from_s, oct2 + 3 * 86400);
    EXPECT_EQ(one->demand_gpu_seconds, 800);
    // Two days: Oct 1-2 600, Oct 2-3 800, Oct 3-4 300, Oct 4-5 800: the earliest 800 wins.
    auto two = busiest_days(w, 2);
    ASSERT_TRUE(two);
    EXPECT_EQ(two->first_day_unix_s, 1506902400);  // 2017-10-02 00:00 UTC
    EXPECT_EQ(two->from_s, oct2);
    EXPECT_EQ(two->to_s, oct2 + 2 * 86400);
    EXPECT_EQ(two->demand_gpu_seconds, 800);
    // Three days: Oct 1-3 900, Oct 2-4 800, Oct 3-5 1100.
    auto three = busiest_days(w, 3);
    ASSERT_TRUE(three);
    EXPECT_EQ(three->from_s, oct2 + 86400);
    EXPECT_EQ(three->demand_gpu_seconds, 1100);
    // Longer than the trace: one window from the first day (Oct 1 00:00 = 20 h before the epoch).
    auto ten = busiest_days(w, 10);
    ASSERT_TRUE(ten);
    EXPECT_EQ(ten->from_s, -20 * 3600);
    EXPECT_EQ(ten->demand_gpu_seconds, 1700);
    EXPECT_FALSE(busiest_days(w, 0));
    EXPECT_FALSE(busiest_days(Workload{}, 3));
}

TEST(Slice, WindowRebasesTimesAndEpoch) {
    Workload w = days_workload();
    w.tenants = {{"a", 2.0}};
    w.share_order = {0};
    const Seconds oct2 = 4 * 3600;
    const Workload s = slice_window(w, oct2, oct2 + 2 * 86400);  // jobs B, C, D
    EXPECT_EQ(s.epoch_unix_s, 1506902400);
    ASSERT_EQ(s.jobs.size(), 3u);
    EXPECT_EQ(s.jobs[0].id, 2);
    EXPECT_EQ(s.jobs[0].submit_s, 0);
    EXPECT_EQ(s.jobs[1].submit_s, 86399);
    EXPECT_EQ(s.jobs[2].id, 4);
    EXPECT_EQ(s.jobs[2].submit_s, 86400);
    EXPECT_EQ(s.tenants.size(), 1u);
    EXPECT_EQ(s.tenants[0].weight, 2.0);
    EXPECT_TRUE(slice_window(w, 10, 10).jobs.empty());
    const Workload capped = cap_duration(w, 99);
    EXPECT_EQ(capped.jobs[0].duration_s, 99);
    EXPECT_EQ(capped.jobs[1].duration_s, 50);
}

TEST(BusiestDays, RealPhillyTrace) {
    // python3: arrivals mapped through 2017-08-14 23:27:00 America/Los_Angeles, demand per UTC
    // day, best 14-day window: 2017-10-16 .. 2017-10-29, 2,739,121,625 GPU-s, 28,241 jobs.
    auto w = read_trace(kPhilly + "philly_trace.csv.gz", "rfold-philly");
    ASSERT_TRUE(w) << w.error().message;
    auto best = busiest_days(*w, 14);
    ASSERT_TRUE(best);
    EXPECT_EQ(best->first_day_unix_s, 1508112000);  // 2017-10-16 00:00:00 UTC
    EXPECT_EQ(best->demand_gpu_seconds, 2739121625);
    EXPECT_EQ(slice_window(*w, best->from_s, best->to_s).jobs.size(), 28241u);
    // Without the calendar (epoch 0): days 61..74 after the first arrival, 2,746,815,414 GPU-s
    // (763,004.28 GPU-h), 28,484 jobs.
    auto rel = read_trace(kPhilly + "philly_trace.csv.gz", "rfold");
    ASSERT_TRUE(rel);
    auto best_rel = busiest_days(*rel, 14);
    ASSERT_TRUE(best_rel);
    EXPECT_EQ(best_rel->from_s, 61 * 86400);
    const Workload rel_slice = slice_window(*rel, best_rel->from_s, best_rel->to_s);
    EXPECT_EQ(rel_slice.jobs.size(), 28484u);
    // It stays without dates: epoch 0, not 61 days after 1970-01-01 (5,270,400 s).
    EXPECT_EQ(rel_slice.epoch_unix_s, 0);
}

// ---- stats ----

TEST(Stats, HandWorkload) {
    // Ten jobs, run times 100..1000 s, GPUs 1,1,1,2,2,4,4,4,4,8, submits 0,60,..,540.
    // Tenant a: jobs 0-4, b: jobs 5-8, job 9 none.
    Workload w;
    w.epoch_unix_s = 1506902400;
    w.tenants = {{"a", 1.0}, {"b", 1.0}, {"idle", 1.0}};
    const int gpus[] = {1, 1, 1, 2, 2, 4, 4, 4, 4, 8};
    for (int i = 0; i < 10; ++i)
        w.jobs.push_back(make_job(i, i < 5 ? 0 : i < 9 ? 1 : -1, gpus[i], 60 * i, 100 * (i + 1)));
    const TraceStats s = compute_stats(w);
    EXPECT_EQ(s.jobs, 10);
    // 100+200+300 + 2*400+2*500 + 4*(600+700+800+900) + 8*1000 = 22400
    EXPECT_EQ(s.gpu_seconds, 22400);
    EXPECT_DOUBLE_EQ(s.gpu_hours(), 22400.0 / 3600.0);
    EXPECT_EQ(s.jobs_by_gpus, (std::map<int, std::int64_t>{{1, 3}, {2, 2}, {4, 4}, {8, 1}}));
    // Nearest rank on 10 values: p50 -> 5th, p90 -> 9th, p99 -> ceil(9.9) = 10th.
    EXPECT_EQ(s.duration_p50_s, 500);
    EXPECT_EQ(s.duration_p90_s, 900);
    EXPECT_EQ(s.duration_p99_s, 1000);
    EXPECT_EQ(s.duration_max_s, 1000);
    EXPECT_EQ(s.first_submit_s, 0);
    EXPECT_EQ(s.last_submit_s, 540);
    ASSERT_EQ(s.tenants.size(), 4u);
    EXPECT_EQ(s.tenants[0].jobs, 5);
    EXPECT_EQ(s.tenants[0].gpu_seconds, 2400);
    EXPECT_EQ(s.tenants[1].jobs, 4);
    EXPECT_EQ(s.tenants[1].gpu_seconds, 12000);
    EXPECT_EQ(s.tenants[2].jobs, 0);
    EXPECT_EQ(s.tenants[3].name, "(none)");
    EXPECT_EQ(s.tenants[3].gpu_seconds, 8000);

    const auto j = stats_json(s);
    EXPECT_EQ(j["jobs"], 10);
    EXPECT_EQ(j["gpu_seconds"], 22400);
    EXPECT_EQ(j["duration_s"]["p90"], 900);
    EXPECT_EQ(j["jobs_by_gpus"][3]["gpus"], 8);
    EXPECT_EQ(j["jobs_by_gpus"][3]["jobs"], 1);
    EXPECT_EQ(j["span"]["last_submit_utc"], "2017-10-02 00:09:00");
    EXPECT_EQ(j["tenants"][1]["name"], "b");
    const std::string text = stats_text(s);
    EXPECT_NE(text.find("jobs:            10\n"), std::string::npos) << text;
    EXPECT_NE(text.find("GPU-hours:       6.2"), std::string::npos) << text;
    EXPECT_NE(text.find(" 1:3 2:2 4:4 8:1\n"), std::string::npos) << text;
    // Submits 0..540 s: 9.0 min (it said "0.0 days").
    EXPECT_NE(text.find("submit span:     0 s .. 540 s (9.0 min), "), std::string::npos) << text;
    // Three tenants (one without jobs) and the "(none)" row, which is not a tenant (it said 4).
    EXPECT_NE(text.find("tenants:         3 (and jobs without a tenant: the (none) row)\n"), std::string::npos) << text;
}

TEST(Stats, LongTenantNamesKeepTheColumns) {
    // A name longer than 16 characters pushed its row right of the header. Every line of the
    // tenant table is 2 + 20 (the longest name) + 1 + 9 + 1 + 7 + 1 + 13 + 1 + 7 = 62 long.
    Workload w;
    w.tenants = {{"a-twenty-char-tenant", 1.0}, {"b", 1.0}};
    w.jobs.push_back(make_job(1, 0, 1, 0, 3600));
    w.jobs.push_back(make_job(2, 1, 2, 10, 1800));
    const std::string text = stats_text(compute_stats(w));
    const auto from = text.find("  tenant");
    ASSERT_NE(from, std::string::npos) << text;
    std::istringstream table(text.substr(from));
    int lines = 0;
    for (std::string line; std::getline(table, line); ++lines) EXPECT_EQ(line.size(), 62u) << line;
    EXPECT_EQ(lines, 3);
    EXPECT_NE(text.find("  a-twenty-char-tenant         1   50.0%           1.0   50.0%\n"),
              std::string::npos) << text;
}

TEST(Stats, RealPhillyFiles) {
    // python3 on philly_trace.csv.gz: 111,549 jobs, sum size*round(duration) = 13,039,807,588
    // GPU-s; nearest-rank p50/p90/p99 = 1321/33476/756454 s; max 5,196,151 s; last arrival
    // 11,176,511 s; 96,662 one-GPU jobs.
    auto rfold = read_trace(kPhilly + "philly_trace.csv.gz", "auto");
    ASSERT_TRUE(rfold) << rfold.error().message;
    const TraceStats r = compute_stats(*rfold);
    EXPECT_EQ(r.jobs, 111549);
    EXPECT_EQ(r.gpu_seconds, 13039807588);
    EXPECT_EQ(r.duration_p50_s, 1321);
    EXPECT_EQ(r.duration_p90_s, 33476);
    EXPECT_EQ(r.duration_p99_s, 756454);
    EXPECT_EQ(r.duration_max_s, 5196151);
    EXPECT_EQ(r.last_submit_s, 11176511);
    EXPECT_EQ(r.jobs_by_gpus.at(1), 96662);
    EXPECT_EQ(r.jobs_by_gpus.at(128), 11);

    // python3 + zoneinfo on sampled_jobs.json.gz: 5,910 jobs, earliest submit 2017-09-18
    // 05:25:35 PDT = 1505737535, last 7,433,331 s later; GPU-s 2,742,491,066; run time
    // p50/p90/p99/max 14791/187175/686106/2214025 s; ee9e8c 1631 jobs, 911,503,744 GPU-s.
    SkipCounts skips;
    auto dre = read_trace(kPhilly + "sampled_jobs.json.gz", "auto", &skips);
    ASSERT_TRUE(dre) << dre.error().message;
    EXPECT_EQ(skips.total(), 0);
    const TraceStats d = compute_stats(*dre);
    EXPECT_EQ(d.jobs, 5910);
    EXPECT_EQ(d.epoch_unix_s, 1505737535);
    EXPECT_EQ(d.last_submit_s, 7433331);
    EXPECT_EQ(d.gpu_seconds, 2742491066);
    EXPECT_EQ(d.duration_p50_s, 14791);
    EXPECT_EQ(d.duration_p90_s, 187175);
    EXPECT_EQ(d.duration_p99_s, 686106);
    EXPECT_EQ(d.duration_max_s, 2214025);
    ASSERT_EQ(d.tenants.size(), 11u);
    EXPECT_EQ(d.tenants[0].name, "ee9e8c");
    EXPECT_EQ(d.tenants[0].jobs, 1631);
    EXPECT_EQ(d.tenants[0].gpu_seconds, 911503744);
    EXPECT_EQ(d.tenants[10].name, "51b7ef");
    EXPECT_EQ(d.tenants[10].jobs, 10);
}

TEST(RfoldPhilly, AgreesWithTheDreSampleToTheSecond) {
    // The calendar anchor of read_rfold_philly: python3 finds 5,894 of the 5,910 DRE jobs with
    // an RFold row of the same GPU count and the same UTC submit second.
    auto rfold = read_trace(kPhilly + "philly_trace.csv.gz", "rfold-philly");
    auto dre = read_trace(kPhilly + "sampled_jobs.json.gz", "philly-joblog");
    ASSERT_TRUE(rfold && dre);
    std::map<std::pair<int, std::int64_t>, int> rows;
    for (const Job& j : rfold->jobs) ++rows[{j.gpus, rfold->epoch_unix_s + j.submit_s}];
    int matched = 0;
    for (const Job& j : dre->jobs)
        matched += rows.contains({j.gpus, dre->epoch_unix_s + j.submit_s});
    EXPECT_EQ(matched, 5894);
}

// ---- tenant assignment ----

TEST(TenantAssign, BucketsAndMix) {
    EXPECT_EQ(gpu_bucket(1), 0u);
    EXPECT_EQ(gpu_bucket(2), 1u);
    EXPECT_EQ(gpu_bucket(3), 2u);
    EXPECT_EQ(gpu_bucket(4), 2u);
    EXPECT_EQ(gpu_bucket(8), 3u);
    EXPECT_EQ(gpu_bucket(16), 4u);
    EXPECT_EQ(gpu_bucket(17), 5u);
    EXPECT_EQ(gpu_bucket(128), 5u);
    EXPECT_EQ(gpu_bucket_label(2), "3-4");
    EXPECT_EQ(gpu_bucket_label(5), "17+");
    // python3 on the DRE sample: bucket 2 GPUs has 507 jobs, 198 of them in 0e4a51; 9-16 has
    // 342 jobs, 94 in b436b2; no 1-GPU job; ee9e8c 1631 jobs overall.
    auto dre = read_trace(kPhilly + "sampled_jobs.json.gz", "philly-joblog");
    ASSERT_TRUE(dre);
    const TenantMix mix = mix_from_workload(*dre);
    ASSERT_EQ(mix.tenants.size(), 11u);
    auto vc = [&](const std::string& name) {
        for (std::size_t m = 0; m < mix.tenants.size(); ++m)
            if (mix.tenants[m] == name) return m;
        ADD_FAILURE() << name;
        return std::size_t{0};
    };
    EXPECT_EQ(mix.total(), 5910);
    EXPECT_EQ(mix.bucket_total(0), 0);
    EXPECT_EQ(mix.bucket_total(1), 507);
    EXPECT_EQ(mix.counts[1][vc("0e4a51")], 198);
    EXPECT_EQ(mix.bucket_total(4), 342);
    EXPECT_EQ(mix.counts[4][vc("b436b2")], 94);
    EXPECT_EQ(mix.overall[vc("ee9e8c")], 1631);
    EXPECT_DOUBLE_EQ(mix.probability(0, vc("ee9e8c")), 1631.0 / 5910.0);  // empty: overall mix
    EXPECT_FALSE(assign_tenants(Workload{}, TenantMix{}, 1));
}

// Chi-square critical values at the 0.1 % level, df = 1..10 (standard table).
constexpr double kChi2Critical[] = {0,      10.828, 13.816, 16.266, 18.467, 20.515,
                                    22.458, 24.322, 26.124, 27.877, 29.588};

TEST(TenantAssign, ReproducesTheMixOnTheWholePhillyTrace) {
    auto dre = read_trace(kPhilly + "sampled_jobs.json.gz", "philly-joblog");
    auto rfold = read_trace(kPhilly + "philly_trace.csv.gz", "rfold");
    ASSERT_TRUE(dre && rfold);
    const TenantMix mix = mix_from_workload(*dre);
    auto assigned = assign_tenants(*rfold, mix, 1);
    ASSERT_TRUE(assigned) << assigned.error().message;
    ASSERT_EQ(assigned->jobs.size(), 111549u);
    // Observed counts per (bucket, VC name).
    std::array<std::map<std::string, std::int64_t>, kGpuBuckets> seen;
    std::array<std::int64_t, kGpuBuckets> n{};
    for (const Job& j : assigned->jobs) {
        ASSERT_GE(j.tenant, 0);
        ++seen[gpu_bucket(j.gpus)][assigned->tenants[static_cast<std::size_t>(j.tenant)].name];
        ++n[gpu_bucket(j.gpus)];
    }
    EXPECT_EQ(n[0], 96662);  // python3: one-GPU jobs in the RFold trace
    for (std::size_t b = 0; b < kGpuBuckets; ++b) {
        double chi2 = 0;
        int df = -1;
        for (std::size_t m = 0; m < mix.tenants.size(); ++m) {
            const double p = mix.probability(b, m);
            const std::int64_t observed = seen[b][mix.tenants[m]];
            if (p == 0) {
                EXPECT_EQ(observed, 0) << mix.tenants[m] << " in bucket " << gpu_bucket_label(b);
                continue;
            }
            const double expected = p * static_cast<double>(n[b]);
            chi2 += (static_cast<double>(observed) - expected) *
                    (static_cast<double>(observed) - expected) / expected;
            ++df;
        }
        ASSERT_GE(df, 1);
        EXPECT_LT(chi2, kChi2Critical[df])
            << "bucket " << gpu_bucket_label(b) << ", " << n[b] << " jobs, df " << df;
    }
}

TEST(TenantAssign, SeedStable) {
    auto dre = read_trace(kPhilly + "sampled_jobs.json.gz", "philly-joblog");
    auto rfold = read_trace(kPhilly + "philly_trace.csv.gz", "rfold");
    ASSERT_TRUE(dre && rfold);
    const TenantMix mix = mix_from_workload(*dre);
    auto names = [&](std::uint64_t seed) {
        auto w = assign_tenants(*rfold, mix, seed);
        std::vector<std::string> out;
        for (const Job& j : w->jobs)
            out.push_back(w->tenants[static_cast<std::size_t>(j.tenant)].name);
        return out;
    };
    const auto a = names(1), b = names(1), c = names(2);
    EXPECT_EQ(a, b);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i) differ += a[i] != c[i];
    // Two independent draws agree with probability sum_vc p^2 (about 0.16 for the overall mix),
    // so most jobs differ.
    EXPECT_GT(differ, a.size() / 2);
}

// ---- native round trip ----

TEST(NativeRoundTrip, HandWorkloadWithEveryField) {
    Workload w;
    w.epoch_unix_s = -86400;
    w.tenants = {{"b,quoted \"x\"", 0.1}, {"a", 2690}, {" padded ", 1e-300}};
    w.share_order = {2, 0, 1};
    w.jobs = {make_job(-5, 1, 3, -10, 0), make_job(7, -1, 128, 0, 5196151),
              make_job(1506638472019014199, 0, 8, 0, 60), make_job(9, 2, 1, 12, 1)};
    w.jobs[0].weight = 0.30000000000000004;
    w.jobs[2].name = "application_1506638472019_14199";
    w.jobs[3].name = "a \"b\", c";
    auto back = parse_native(write_native(w), "mem");
    ASSERT_TRUE(back) << back.error().message;
    expect_same(w, *back);
}

TEST(NativeTrace, DuplicateIdsAreNamedAtTheirSecondLineInOrderOrNot) {
    const std::string head = "#astraeus-trace,1\n#tenant,a,1\njob_id,tenant,gpus,submit_s,duration_s,weight\n";
    // Increasing ids, then one repeated: line 6 (header lines 1-3).
    auto inc = parse_native(head + "1,a,1,0,5,1\n4,a,1,0,5,1\n4,a,1,0,5,1\n", "t.csv");
    ASSERT_FALSE(inc);
    EXPECT_EQ(inc.error().message, "t.csv:6: field 'job_id': duplicate job id 4");
    // An id out of order that repeats one from before it went out of order (line 7).
    auto mixed = parse_native(head + "1,a,1,0,5,1\n9,a,1,0,5,1\n3,a,1,0,5,1\n1,a,1,0,5,1\n",
                              "t.csv");
    ASSERT_FALSE(mixed);
    EXPECT_EQ(mixed.error().message, "t.csv:7: field 'job_id': duplicate job id 1");
    // Out of order but unique: read.
    auto fine = parse_native(head + "5,a,1,0,5,1\n2,a,1,0,5,1\n7,a,1,0,5,1\n", "t.csv");
    ASSERT_TRUE(fine) << fine.error().message;
    EXPECT_EQ(fine->jobs.size(), 3u);
}

TEST(NativeRoundTrip, RealTraces) {
    auto dre = read_trace(kPhilly + "sampled_jobs.json.gz", "philly-joblog");
    ASSERT_TRUE(dre);
    auto back = parse_native(write_native(*dre), "dre");
    ASSERT_TRUE(back) << back.error().message;
    expect_same(*dre, *back);

    auto rfold = read_trace(kPhilly + "philly_trace.csv.gz", "rfold-philly");
    ASSERT_TRUE(rfold);
    auto assigned = assign_tenants(*rfold, mix_from_workload(*dre), 3);
    ASSERT_TRUE(assigned);
    assigned->tenants[0].weight = 2690;  // weights survive too
    auto back2 = parse_native(write_native(*assigned), "philly");
    ASSERT_TRUE(back2) << back2.error().message;
    expect_same(*assigned, *back2);
    // Writing again gives the same bytes.
    EXPECT_EQ(write_native(*back2), write_native(*assigned));
}

}  // namespace
}  // namespace astraeus
