// The comparison report's building blocks, with values worked by hand, and the report itself on
// a two-tenant, two-run comparison built here (no simulation).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "astraeus/sim/html_report.hpp"

namespace astraeus {
namespace {

std::size_t count(const std::string& haystack, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = haystack.find(needle); at != std::string::npos;
         at = haystack.find(needle, at + needle.size()))
        ++n;
    return n;
}

TEST(HtmlReport, EscapesMarkup) {
    EXPECT_EQ(html_escape("<b>&\"x\"'"), "&lt;b&gt;&amp;&quot;x&quot;&#39;");
    EXPECT_EQ(html_escape("plain 1.5 GPUs"), "plain 1.5 GPUs");
}

TEST(HtmlReport, CdfOfThreeValuesIsAStaircase) {
    // Sorted 1, 2, 3: each value lifts the CDF by 1/3.
    const std::vector<ChartPoint> expected = {{1, 0},       {1, 1.0 / 3}, {2, 1.0 / 3},
                                              {2, 2.0 / 3}, {3, 2.0 / 3}, {3, 1}};
    EXPECT_EQ(cdf_points({3, 1, 2}), expected);
    // Ties make one step: 1, 1, 2 -> up to 2/3 at 1, to 1 at 2.
    const std::vector<ChartPoint> ties = {{1, 0}, {1, 2.0 / 3}, {2, 2.0 / 3}, {2, 1}};
    EXPECT_EQ(cdf_points({1, 2, 1}), ties);
    EXPECT_TRUE(cdf_points({}).empty());
}

TEST(HtmlReport, SvgPathOfAThreePointCdf) {
    // x: 0..4 over pixels 0..400 (100 px per unit); y: 0..1 over pixels 300..0 (up is up).
    const Axis x{0, 4, 0, 400, false}, y{0, 1, 300, 0, false};
    // (1,0) (1,1/3) (2,1/3) (2,2/3) (3,2/3) (3,1) -> y pixels 300, 200, 200, 100, 100, 0.
    EXPECT_EQ(svg_path(cdf_points({1, 2, 3}), x, y),
              "M100.0 300.0L100.0 200.0L200.0 200.0L200.0 100.0L300.0 100.0L300.0 0.0");
}

TEST(HtmlReport, SvgPathDropsRepeatedPixelsAndClampsToTheAxes) {
    const Axis x{0, 4, 0, 400, false}, y{0, 1, 300, 0, false};
    // (0.0001, 0) maps to x = 0.01 px: "0.0 300.0" again, left out; (10, 2) is clamped to the
    // top-right corner (400, 0).
    EXPECT_EQ(svg_path({{0, 0}, {0.0001, 0}, {10, 2}}, x, y), "M0.0 300.0L400.0 0.0");
    EXPECT_EQ(svg_path({}, x, y), "");
}

TEST(HtmlReport, SvgPathOfALargeCdfIsBoundedByThePlotSize) {
    // 100,000 distinct values: 200,000 staircase vertices. Kept only when 0.75 px or more from
    // the last kept one, a curve that only goes up and right on a 400 x 300 plot needs at most
    // (400 + 300) / 0.75 + 1 points, and still starts at (0, 300) and ends at (400, 0).
    std::vector<double> values;
    for (int i = 0; i < 100000; ++i) {
        const double v = i;
        values.push_back(v * v / 1e5);  // dense at the start
    }
    const std::vector<ChartPoint> cdf = cdf_points(values);
    const Axis x{0, cdf.back().x, 0, 400, false}, y{0, 1, 300, 0, false};
    const std::string d = svg_path(cdf, x, y, 0.75);
    const auto points = static_cast<std::size_t>(std::count(d.begin(), d.end(), 'L')) + 1;
    EXPECT_LE(points, 935u);
    EXPECT_GE(points, 400u);  // still a curve, not a few segments
    EXPECT_EQ(d.rfind("M0.0 300.0L", 0), 0u);
    EXPECT_EQ(d.substr(d.size() - 10), "L400.0 0.0");
    // The steep start keeps its shape: values 0 .. 1,000 (the first 10 %, 30 px up) lie within
    // the first 1 % of the x range (4 px), and still get one point at least every 0.75 px up.
    std::size_t steep = 0;
    for (std::size_t at = d.find('L'); at != std::string::npos; at = d.find('L', at + 1))
        if (std::stod(d.substr(at + 1)) <= 4.0) ++steep;
    EXPECT_GE(steep, 30u / 0.75 - 1);
}

TEST(HtmlReport, ScatterLabelsOnOnePointAreStackedNotDrawnOverEachOther) {
    // Three runs on one point (x 100..140, baseline 50): 50, then 13 px lower each time.
    EXPECT_EQ(spread_labels({{100, 50, 40}, {100, 50, 40}, {100, 50, 40}}),
              (std::vector<double>{50, 63, 76}));
    // Boxes that only touch do not move: x 100..140 then 140..180; baselines 50 then 62 (its
    // box 50..62 starts where the first one's ends).
    EXPECT_EQ(spread_labels({{100, 50, 40}, {140, 50, 40}}), (std::vector<double>{50, 50}));
    EXPECT_EQ(spread_labels({{100, 50, 40}, {120, 62, 40}}), (std::vector<double>{50, 62}));
    // 5 px apart overlaps: moved to 55 + 13 = 68, clear of 38..50.
    EXPECT_EQ(spread_labels({{100, 50, 40}, {120, 55, 40}}), (std::vector<double>{50, 68}));
    // A label moved down must also clear the ones below: 50 and 63 are taken, the third wanted
    // 50 -> 63 (meets the second) -> 76.
    EXPECT_EQ(spread_labels({{100, 50, 40}, {100, 63, 40}, {100, 50, 40}}),
              (std::vector<double>{50, 63, 76}));
    EXPECT_TRUE(spread_labels({}).empty());
}

TEST(HtmlReport, LogAxisMapsDecadesEvenly) {
    const Axis x{1, 1000, 0, 300, true};
    EXPECT_DOUBLE_EQ(x.to_px(1), 0);
    EXPECT_NEAR(x.to_px(10), 100, 1e-9);
    EXPECT_NEAR(x.to_px(100), 200, 1e-9);
    EXPECT_DOUBLE_EQ(x.to_px(1000), 300);
    EXPECT_DOUBLE_EQ(x.to_px(0), 0);  // below the axis: clamped to 1, not log(0)
    const Axis flipped{0, 1, 300, 0, false};
    EXPECT_DOUBLE_EQ(flipped.to_px(0.25), 225);
}

TEST(HtmlReport, DownsampleKeepsEndsAndExtremesOfEachRun) {
    // 10 points, at most 6: first and last, and (6 - 2) / 2 = 2 runs over the 8 in between:
    // indexes 1..4 (y 1 7 3 9) keep 1 (min) and 4 (max); 5..8 (y 2 8 4 6) keep 5 and 6.
    const std::vector<double> ys = {5, 1, 7, 3, 9, 2, 8, 4, 6, 0};
    std::vector<ChartPoint> pts;
    for (std::size_t i = 0; i < ys.size(); ++i) pts.push_back({static_cast<double>(i), ys[i]});
    const std::vector<ChartPoint> expected = {{0, 5}, {1, 1}, {4, 9}, {5, 2}, {6, 8}, {9, 0}};
    EXPECT_EQ(downsample(pts, 6), expected);
    EXPECT_EQ(downsample(pts, 7), expected);   // (7 - 2) / 2 = 2 runs as well
    EXPECT_EQ(downsample(pts, 10), pts);       // short enough: unchanged
    EXPECT_EQ(downsample(pts, 100), pts);
}

TEST(HtmlReport, DownsampleOfALongSeriesKeepsItsFirstLastMinAndMax) {
    std::vector<ChartPoint> pts;
    for (int i = 0; i < 100000; ++i) {
        const double x = i;
        pts.push_back({x, std::sin(x / 1000.0) + (i == 31337 ? -5.0 : 0.0)});  // one deep dip
    }
    const std::vector<ChartPoint> out = downsample(pts, 500);
    EXPECT_LE(out.size(), 500u);
    EXPECT_GE(out.size(), 400u);
    EXPECT_EQ(out.front(), pts.front());
    EXPECT_EQ(out.back(), pts.back());
    EXPECT_NE(std::find(out.begin(), out.end(), pts[31337]), out.end());
    EXPECT_TRUE(std::is_sorted(out.begin(), out.end(),
                               [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; }));
}

TEST(HtmlReport, NiceTicks) {
    const auto unit = nice_ticks(0, 1, 5);  // 1 / 5 = 0.2 -> 0, 0.2, ..., 1
    ASSERT_EQ(unit.size(), 6u);
    for (std::size_t k = 0; k < unit.size(); ++k) EXPECT_NEAR(unit[k], 0.2 * static_cast<double>(k), 1e-12);
    // 509.3 / 8 = 63.7 -> a step of 50 -> 0, 50, ..., 500.
    const auto days = nice_ticks(0, 509.3, 8);
    ASSERT_EQ(days.size(), 11u);
    EXPECT_EQ(days.front(), 0);
    EXPECT_EQ(days.back(), 500);
    // 2.75 / 6 = 0.458 -> step 0.5 from the first multiple at or above 0.25.
    EXPECT_EQ(nice_ticks(0.25, 3, 6), (std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3}));
}

Job job(std::int64_t id, int tenant, int gpus, Seconds submit_s, Seconds duration_s) {
    Job j;
    j.id = id;
    j.tenant = tenant;
    j.gpus = gpus;
    j.submit_s = submit_s;
    j.duration_s = duration_s;
    return j;
}

// Two tenants, three jobs; two runs of made-up results.
struct Fixture {
    Workload w;
    SimResult fair, unfair;

    Fixture() {
        w.tenants = {{"<script>alert(1)</script>", 1}, {"plain & simple", 1}};
        w.share_order = {0, 1};
        w.jobs = {job(1, 0, 2, 0, 100), job(2, 1, 2, 0, 100), job(3, 1, 4, 50, 200)};
        for (SimResult* r : {&fair, &unfair}) {
            r->runs.resize(3);
            for (RunState& s : r->runs) s.status = RunStatus::Done;
            r->quotas = {4, 4};
        }
        const double fj_fair[] = {1.0, 1.0, 0.9}, fj_unfair[] = {0.2, 1.5, 2.0};
        const Seconds end_fair[] = {100, 100, 300}, end_unfair[] = {400, 100, 250};
        for (std::size_t j = 0; j < 3; ++j) {
            fair.runs[j].fairness = fj_fair[j];
            fair.runs[j].end_s = end_fair[j];
            unfair.runs[j].fairness = fj_unfair[j];
            unfair.runs[j].end_s = end_unfair[j];
        }
        fair.tenant_fairness = {0.9, 1.05};    // worst-served: tenant 0 (0.9)
        unfair.tenant_fairness = {1.5, 0.7};   // worst-served: tenant 1 (0.7), not the 1.5
        fair.end_s = 300;
        unfair.end_s = 400;
        for (Seconds t : {100, 200, 300})
            for (int u = 0; u < 2; ++u) {
                fair.tenant_series.push_back({t, u, 1.0, 0.5, 4, 0});
                unfair.tenant_series.push_back({t, u, u == 0 ? 0.5 : 1.5, 0.5, 2 + 2 * u, 0});
            }
    }
};

TEST(HtmlReport, ReportIsSelfContainedEscapedAndComplete) {
    Fixture f;
    Summary fair_summary, unfair_summary;
    fair_summary.fu_max_shortfall = 0.25;
    unfair_summary.fu_max_shortfall = 0.5;
    ReportHeader h;
    h.title = "tiny <trace> on 2x4";
    h.details = {{"trace", "/tmp/a&b.csv"}};
    const std::vector<ReportRun> runs = {{"astraea", {}, {}, &f.fair, fair_summary},
                                         {"fifo", {}, {}, &f.unfair, unfair_summary}};
    const std::string html = html_report(f.w, 8, h, runs);

    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("</html>\n"), std::string::npos);
    // Every name is escaped; nothing is fetched and nothing runs.
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
    EXPECT_NE(html.find("plain &amp; simple"), std::string::npos);
    EXPECT_NE(html.find("tiny &lt;trace&gt; on 2x4"), std::string::npos);
    EXPECT_NE(html.find("/tmp/a&amp;b.csv"), std::string::npos);
    EXPECT_EQ(html.find("http:"), std::string::npos);
    EXPECT_EQ(html.find("https:"), std::string::npos);
    EXPECT_EQ(html.find("url("), std::string::npos);
    // Charts: the JCT / F_u trade-off, CDF of F_j, CDF of JCT, one tenant panel per run,
    // utilization.
    EXPECT_EQ(count(html, "<svg "), 6u);
    EXPECT_EQ(count(html, "</svg>"), 6u);
    // The trade-off chart: one dot per run, in its policy's colour.
    EXPECT_EQ(count(html, "<circle "), 2u);
    EXPECT_EQ(count(html, "r=\"5\" fill=\"#4e79a7\""), 1u);
    EXPECT_EQ(count(html, "r=\"5\" fill=\"#f28e2b\""), 1u);
    // The worst-served tenant (lowest F_u over the run) of each run is named in its panel.
    EXPECT_EQ(count(html, "worst-served tenant: &lt;script&gt;alert(1)&lt;/script&gt; (F_u over "
                          "the run 0.900)"),
              1u);
    EXPECT_EQ(count(html, "worst-served tenant: plain &amp; simple (F_u over the run 0.700)"), 1u);
    // Policy colours: astraea is the first colour, fifo the second, in every chart's lines.
    EXPECT_GE(count(html, "stroke=\"#4e79a7\""), 4u);
    EXPECT_GE(count(html, "stroke=\"#f28e2b\""), 4u);
    // Shortfalls in absolute figures (no ratio to a reference row).
    EXPECT_NE(html.find("<td>0.5000</td></tr>"), std::string::npos);
    EXPECT_NE(html.find("<td>0.2500</td></tr>"), std::string::npos);
    EXPECT_EQ(html.find("spread &times;"), std::string::npos);
    // No NaN or infinity leaks into the drawing: path data is only M, L, digits, '.', ' ', '-'.
    std::size_t paths = 0;
    for (std::size_t at = html.find(" d=\""); at != std::string::npos; at = html.find(" d=\"", at + 1)) {
        const std::size_t from = at + 4, to = html.find('"', from);
        EXPECT_EQ(html.find_first_not_of("ML0123456789. -", from), to) << html.substr(from, to - from);
        ++paths;
    }
    EXPECT_GT(paths, 10u);
    // Pure: the same input gives the same bytes.
    EXPECT_EQ(html_report(f.w, 8, h, runs), html);
}

TEST(HtmlReport, UtilizationIsTheSumOverTenantsOverTheCluster) {
    // The unfair run holds 2 + 4 = 6 of 8 GPUs at every sample: 75 %; the y axis spans 0..100 %
    // over the plot height, so its line is flat at 3/4 of the way up.
    Fixture f;
    const std::vector<ReportRun> runs = {{"fifo", {}, {}, &f.unfair, {}}};
    const std::string html = html_report(f.w, 8, {}, runs);
    const std::size_t chart = html.find("GPU utilization over time</h2>");
    ASSERT_NE(chart, std::string::npos);
    const std::size_t path = html.find("<path class=\"s\" stroke=\"#4e79a7\"", chart);
    ASSERT_NE(path, std::string::npos);
    const std::size_t d = html.find(" d=\"M", path) + 5;
    const std::string data = html.substr(d, html.find('"', d) - d);
    // All points share one y pixel: a flat line.
    std::vector<std::string> ys;
    for (std::size_t at = 0; at < data.size();) {
        const std::size_t space = data.find(' ', at), next = data.find('L', space);
        ys.push_back(data.substr(space + 1, (next == std::string::npos ? data.size() : next) - space - 1));
        at = next == std::string::npos ? data.size() : next + 1;
    }
    ASSERT_FALSE(ys.empty());
    for (const std::string& y : ys) EXPECT_EQ(y, ys.front());
    // Plot: top 14 px, height 270 px (the legend needs less) -> 75 % at 14 + 270 / 4 = 81.5.
    EXPECT_EQ(ys.front(), "81.5");
}

TEST(HtmlReport, SweptRowsShowTheirValuesAndMarkOverrides) {
    Fixture f;
    ReportHeader h;
    h.sweep_keys = {"lease_s"};
    const std::vector<ReportRun> runs = {
        {"astraea", {{"lease_s", 300}}, {}, &f.fair, {}},
        {"yarn", {{"lease_s", 300}}, {"lease_s"}, &f.unfair, {}},
        {"astraea", {{"lease_s", 900}}, {}, &f.fair, {}},
    };
    const std::string html = html_report(f.w, 8, h, runs);
    EXPECT_NE(html.find("<th>lease_s</th>"), std::string::npos);
    EXPECT_NE(html.find("<td>300*</td>"), std::string::npos);
    EXPECT_NE(html.find("the swept value has no effect"), std::string::npos);
    EXPECT_EQ(run_label(runs[2]), "astraea lease_s=900");
    // astraea keeps its colour in both sweep blocks; the second block is dashed.
    EXPECT_NE(html.find("stroke=\"#4e79a7\" stroke-width=\"1.8\" stroke-dasharray=\"7 4\""),
              std::string::npos);
}

}  // namespace
}  // namespace astraeus
