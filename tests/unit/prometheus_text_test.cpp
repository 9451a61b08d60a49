// The Prometheus exposition of /v1/goodput/metrics (spec/goodput.md "Prometheus"): exact text
// for hand-built snapshots, and `promtool check metrics` on a rich one.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "astraeus/goodput_io/prometheus_text.hpp"

namespace {

using astraeus::goodput::MetricScope;
using astraeus::goodput::MetricsSnapshot;
using astraeus::goodput::MetricWindow;
using astraeus::goodput::prometheus_text;
using astraeus::goodput::Category;
using astraeus::goodput::Counts;

Counts counts(std::initializer_list<std::tuple<Category, bool, std::int64_t>> parts) {
    Counts c;
    for (const auto& [cat, held, s] : parts) c.add(cat, held, s);
    return c;
}

const char* kRatioHead =
    "# HELP astraeus_goodput_ratio Productive over held GPU time, in the current UTC hour "
    "(window=hour) or the last 24 hours (window=day).\n"
    "# TYPE astraeus_goodput_ratio gauge\n";
const char* kHoursHead =
    "# HELP astraeus_goodput_gpu_hours GPU-hours by category (held and waiting parts together), "
    "in the current UTC hour (window=hour) or the last 24 hours (window=day).\n"
    "# TYPE astraeus_goodput_gpu_hours gauge\n";
const char* kRunHoursHead =
    "# HELP astraeus_run_goodput_gpu_hours A running run's GPU-hours by category since it was "
    "submitted (held and waiting parts together).\n"
    "# TYPE astraeus_run_goodput_gpu_hours gauge\n";
const char* kRunRatioHead =
    "# HELP astraeus_run_goodput_ratio A running run's goodput since it was submitted: "
    "productive over held.\n"
    "# TYPE astraeus_run_goodput_ratio gauge\n";

TEST(PrometheusText, EmptySnapshotIsEmpty) {
    EXPECT_EQ(prometheus_text(MetricsSnapshot{}), "");
}

TEST(PrometheusText, OneScopeAllCategories) {
    MetricsSnapshot s;
    // held: productive 9 GPU-h (32400 s), idle 1 GPU-h (3600 s) -> allocated 10, ratio 0.9;
    // not held: waiting 0.5 GPU-h (1800 s), preemption 0.25 GPU-h (900 s, waiting again).
    s.goodput.push_back({MetricScope::Pool, "default", MetricWindow::Hour,
                         counts({{Category::Productive, true, 32400},
                                 {Category::Idle, true, 3600},
                                 {Category::Waiting, false, 1800},
                                 {Category::Preemption, false, 900}})});
    const std::string expected =
        std::string(kRatioHead) +
        "astraeus_goodput_ratio{scope=\"pool\",name=\"default\",window=\"hour\"} 0.9\n" +
        kHoursHead +
        "astraeus_goodput_gpu_hours{scope=\"pool\",name=\"default\",window=\"hour\",category=\"productive\"} 9\n"
        "astraeus_goodput_gpu_hours{scope=\"pool\",name=\"default\",window=\"hour\",category=\"idle\"} 1\n"
        "astraeus_goodput_gpu_hours{scope=\"pool\",name=\"default\",window=\"hour\",category=\"stalled\"} 0\n"
        "astraeus_goodput_gpu_hours{scope=\"pool\",name=\"default\",window=\"hour\",category=\"starting\"} 0\n"
        "astraeus_goodput_gpu_hours{scope=\"pool\",name=\"default\",window=\"hour\",category=\"restart\"} 0\n"
        "astraeus_goodput_gpu_hours{scope=\"pool\",name=\"default\",window=\"hour\",category=\"failure\"} 0\n"
        "astraeus_goodput_gpu_hours{scope=\"pool\",name=\"default\",window=\"hour\",category=\"preemption\"} 0.25\n"
        "astraeus_goodput_gpu_hours{scope=\"pool\",name=\"default\",window=\"hour\",category=\"waiting\"} 0.5\n";
    EXPECT_EQ(prometheus_text(s), expected);
}

TEST(PrometheusText, UnmeasuredGaugeOnlyWhenSomeScopeHasUnmeasuredTime) {
    // Pool "a": idle 1 GPU-h of which 0.5 unmeasured (1800 GPU-s); pool "b": none (0 shown, since
    // the family is there). Without any unmeasured time the family is absent (previous test).
    MetricsSnapshot s;
    Counts a = counts({{Category::Idle, true, 3600}});
    a.unmeasured = 1800;
    s.goodput.push_back({MetricScope::Pool, "a", MetricWindow::Day, a});
    s.goodput.push_back({MetricScope::Pool, "b", MetricWindow::Day, counts({{Category::Idle, true, 3600}})});
    const std::string text = prometheus_text(s);
    const std::string family =
        "# HELP astraeus_goodput_unmeasured_gpu_hours Running GPU-hours that no utilization sample "
        "or progress decided (counted idle), in the current UTC hour (window=hour) or the last 24 "
        "hours (window=day).\n"
        "# TYPE astraeus_goodput_unmeasured_gpu_hours gauge\n"
        "astraeus_goodput_unmeasured_gpu_hours{scope=\"pool\",name=\"a\",window=\"day\"} 0.5\n"
        "astraeus_goodput_unmeasured_gpu_hours{scope=\"pool\",name=\"b\",window=\"day\"} 0\n";
    EXPECT_NE(text.find(family), std::string::npos) << text;
    // The category label values stay the eight categories.
    EXPECT_EQ(text.find("category=\"unmeasured\""), std::string::npos);
    s.goodput.pop_back();
    s.goodput.back().counts.unmeasured = 0;
    EXPECT_EQ(prometheus_text(s).find("unmeasured"), std::string::npos);
}

TEST(PrometheusText, RatioAbsentWhenNothingHeldAndOrderIsSorted) {
    MetricsSnapshot s;
    // Given out of order: pool before cluster, day before hour, "b" before "a".
    s.goodput.push_back({MetricScope::Pool, "b", MetricWindow::Day,
                         counts({{Category::Waiting, false, 3600}})});  // nothing held: no ratio
    s.goodput.push_back({MetricScope::Pool, "a", MetricWindow::Day,
                         counts({{Category::Productive, true, 3600},
                                 {Category::Stalled, true, 1200}})});  // 3600/4800 = 0.75
    s.goodput.push_back({MetricScope::Cluster, "c", MetricWindow::Day,
                         counts({{Category::Starting, true, 7200}})});  // 0/7200 = 0
    s.goodput.push_back({MetricScope::Cluster, "c", MetricWindow::Hour,
                         counts({{Category::Productive, true, 1800},
                                 {Category::Restart, true, 3600}})});  // 1800/5400 = 1/3
    const std::string got = prometheus_text(s);
    const std::string ratios =
        std::string(kRatioHead) +
        "astraeus_goodput_ratio{scope=\"cluster\",name=\"c\",window=\"hour\"} 0.3333333333333333\n"
        "astraeus_goodput_ratio{scope=\"cluster\",name=\"c\",window=\"day\"} 0\n"
        "astraeus_goodput_ratio{scope=\"pool\",name=\"a\",window=\"day\"} 0.75\n";
    ASSERT_EQ(got.substr(0, ratios.size()), ratios);
    // GPU-hours: 4 label sets x 8 categories, in the order cluster/c/hour, cluster/c/day,
    // pool/a/day, pool/b/day.
    const std::string hours = got.substr(ratios.size());
    ASSERT_EQ(hours.substr(0, std::string(kHoursHead).size()), kHoursHead);
    std::size_t lines = 0;
    for (char ch : hours) lines += ch == '\n';
    EXPECT_EQ(lines, 2u + 32u);
    const auto pos = [&](const std::string& needle) { return hours.find(needle); };
    EXPECT_LT(pos("name=\"c\",window=\"hour\",category=\"waiting\"} 0\n"),
              pos("name=\"c\",window=\"day\",category=\"productive\"} 0\n"));
    EXPECT_NE(pos("scope=\"cluster\",name=\"c\",window=\"hour\",category=\"productive\"} 0.5\n"),
              std::string::npos);  // 1800 s = 0.5 GPU-h
    EXPECT_NE(pos("scope=\"cluster\",name=\"c\",window=\"hour\",category=\"restart\"} 1\n"),
              std::string::npos);
    EXPECT_LT(pos("scope=\"pool\",name=\"a\""), pos("scope=\"pool\",name=\"b\""));
    EXPECT_NE(pos("scope=\"pool\",name=\"b\",window=\"day\",category=\"waiting\"} 1\n"),
              std::string::npos);
}

TEST(PrometheusText, DuplicatesAreMergedAndRunsAndGauges) {
    MetricsSnapshot s;
    // Run ml/llm given twice: 3600 s productive + 3600 s failure (held) = 2 GPU-h held, 1 used.
    s.runs.push_back({"ml", "llm", counts({{Category::Productive, true, 3600}})});
    s.runs.push_back({"ml", "llm", counts({{Category::Failure, true, 3600}})});
    // A run still waiting: no ratio, all categories 0 but waiting 0.1 (360 s).
    s.runs.push_back({"cv", "sweep-7", counts({{Category::Waiting, false, 360}})});
    s.workers_stalled = {{"ml", 2}, {"cv", 0}, {"ml", 1}};
    s.runs_with_straggler = {{"ml", 1}};
    s.threshold_alerts_firing = {{"astraeus_goodput_ratio", 1}};  // not an operator: hidden
    const std::string expected =
        std::string(kRunHoursHead) +
        "astraeus_run_goodput_gpu_hours{namespace=\"cv\",run=\"sweep-7\",category=\"productive\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"cv\",run=\"sweep-7\",category=\"idle\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"cv\",run=\"sweep-7\",category=\"stalled\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"cv\",run=\"sweep-7\",category=\"starting\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"cv\",run=\"sweep-7\",category=\"restart\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"cv\",run=\"sweep-7\",category=\"failure\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"cv\",run=\"sweep-7\",category=\"preemption\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"cv\",run=\"sweep-7\",category=\"waiting\"} 0.1\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"ml\",run=\"llm\",category=\"productive\"} 1\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"ml\",run=\"llm\",category=\"idle\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"ml\",run=\"llm\",category=\"stalled\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"ml\",run=\"llm\",category=\"starting\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"ml\",run=\"llm\",category=\"restart\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"ml\",run=\"llm\",category=\"failure\"} 1\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"ml\",run=\"llm\",category=\"preemption\"} 0\n"
        "astraeus_run_goodput_gpu_hours{namespace=\"ml\",run=\"llm\",category=\"waiting\"} 0\n" +
        kRunRatioHead +
        "astraeus_run_goodput_ratio{namespace=\"ml\",run=\"llm\"} 0.5\n"
        "# HELP astraeus_workers_stalled Workers stalled now.\n"
        "# TYPE astraeus_workers_stalled gauge\n"
        "astraeus_workers_stalled{namespace=\"cv\"} 0\n"
        "astraeus_workers_stalled{namespace=\"ml\"} 3\n"
        "# HELP astraeus_runs_with_straggler Runs whose gang has a straggler now.\n"
        "# TYPE astraeus_runs_with_straggler gauge\n"
        "astraeus_runs_with_straggler{namespace=\"ml\"} 1\n";
    EXPECT_EQ(prometheus_text(s), expected);

    s.is_operator = true;
    EXPECT_EQ(prometheus_text(s),
              expected +
                  "# HELP astraeus_threshold_alerts_firing Threshold alerts firing, per metric "
                  "(cluster operators only).\n"
                  "# TYPE astraeus_threshold_alerts_firing gauge\n"
                  "astraeus_threshold_alerts_firing{metric=\"astraeus_goodput_ratio\"} 1\n");
}

TEST(PrometheusText, LabelValuesAreEscaped) {
    EXPECT_EQ(astraeus::goodput::escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    MetricsSnapshot s;
    s.workers_stalled = {{"we\"ird\\ns\nx", 4}};
    EXPECT_EQ(prometheus_text(s),
              "# HELP astraeus_workers_stalled Workers stalled now.\n"
              "# TYPE astraeus_workers_stalled gauge\n"
              "astraeus_workers_stalled{namespace=\"we\\\"ird\\\\ns\\nx\"} 4\n");
}

MetricsSnapshot rich_snapshot() {
    MetricsSnapshot s;
    s.is_operator = true;
    const std::array scopes{MetricScope::Cluster, MetricScope::Workspace, MetricScope::Machine,
                            MetricScope::Pool};
    std::int64_t k = 1;
    for (MetricScope sc : scopes) {
        for (const char* name : {"a", "b \"quoted\"", "back\\slash", "multi\nline", "ütf-8"}) {
            for (MetricWindow w : {MetricWindow::Hour, MetricWindow::Day}) {
                Counts c;
                for (Category cat : astraeus::goodput::kAllCategories)
                    c.add(cat, cat != Category::Waiting, k++ * 97);
                c.add(Category::Failure, false, k * 13);
                c.unmeasured = k * 7;  // a part of idle
                if (k % 5 == 0) c = counts({{Category::Waiting, false, 3600}});
                s.goodput.push_back({sc, name, w, c});
            }
        }
    }
    s.runs.push_back({"ml", "llm", counts({{Category::Productive, true, 1080000}})});
    s.runs.push_back({"ml", "sweep-7", counts({{Category::Waiting, false, 64800}})});
    s.runs.push_back({"cv", "x\"y", counts({{Category::Idle, true, 7}})});
    s.workers_stalled = {{"ml", 1}, {"cv", 0}};
    s.runs_with_straggler = {{"ml", 0}, {"cv", 1}};
    s.threshold_alerts_firing = {{"astraeus_goodput_ratio", 2}, {"astraeus_workers_stalled", 0}};
    return s;
}

// `promtool check metrics` (Debian's prometheus package) parses the exposition and lints it.
// Exit 0 = clean, 3 = lint findings only, 1 = parse error. The only finding allowed is the
// base-unit lint on the two `_gpu_hours` names, kept because they are the page's contract.
TEST(PrometheusText, PromtoolAcceptsRichSnapshot) {
    const std::string promtool = ASTRAEUS_PROMTOOL;
    if (promtool.empty() || ::access(promtool.c_str(), X_OK) != 0)
        GTEST_SKIP() << "promtool not installed";
    const std::string text = prometheus_text(rich_snapshot());
    const auto dir = std::filesystem::temp_directory_path();
    const auto in = dir / ("astraeus_prom_" + std::to_string(::getpid()) + ".txt");
    {
        std::ofstream f(in, std::ios::binary);
        f << text;
    }
    const std::string cmd = promtool + " check metrics < " + in.string() + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string output;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), static_cast<int>(buf.size()), p)) output += buf.data();
    const int status = ::pclose(p);
    std::filesystem::remove(in);
    ASSERT_TRUE(WIFEXITED(status)) << output;
    const int rc = WEXITSTATUS(status);
    EXPECT_TRUE(rc == 0 || rc == 3) << "rc=" << rc << "\n" << output;
    std::string rest = output;
    for (const char* allowed :
         {"astraeus_goodput_gpu_hours use base unit \"seconds\" instead of \"hours\"\n",
          "astraeus_run_goodput_gpu_hours use base unit \"seconds\" instead of \"hours\"\n",
          "astraeus_goodput_unmeasured_gpu_hours use base unit \"seconds\" instead of \"hours\"\n"}) {
        const auto at = rest.find(allowed);
        if (at != std::string::npos) rest.erase(at, std::string(allowed).size());
    }
    EXPECT_EQ(rest, "") << "unexpected promtool output:\n" << output;
}

}  // namespace
