// The comparison report of `astraeus compare`: one self-contained HTML file (inline CSS and SVG,
// no JavaScript, nothing fetched from anywhere) with a title naming the input, cluster and
// options, the comparison table, and charts drawn here as SVG: the trade-off of average JCT
// against the worst tenant's windowed F_u (one dot per run, the Pareto staircase), CDF of job
// fairness F_j, CDF of
// JCT (log time axis), per-tenant F_u over time (one panel per run, the worst tenant
// highlighted) and cluster GPU utilization over time. A policy keeps its colour in every chart;
// swept values change the dash pattern. Long series are thinned (CDFs to vertices at least
// 0.75 px apart, time series to a few hundred points a line, keeping each stretch's lowest and
// highest point) so that the file stays small: about 0.5 MB for eight policies on the full
// Philly trace.
//
// Pure and deterministic: the same inputs give the same bytes (no clock, no locale).
// Thread safety: pure functions.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "astraeus/model/workload.hpp"
#include "astraeus/sim/engine.hpp"
#include "astraeus/sim/metrics.hpp"

namespace astraeus {

/// One run of a comparison: a policy, the swept option values it ran with, and its results.
struct ReportRun {
    std::string policy;                                   ///< e.g. "astraea"; sets the colour
    std::vector<std::pair<std::string, Seconds>> sweep;   ///< (option key, value); empty: no sweep
    std::vector<std::string> overridden;  ///< swept keys the policy sets itself (shown with *)
    const SimResult* result = nullptr;                    ///< not owned; must outlive the call
    Summary summary;
};

/// What the report says about the comparison as a whole.
struct ReportHeader {
    std::string title;                                          ///< e.g. "b14.csv on reference-1120"
    std::vector<std::pair<std::string, std::string>> details;   ///< (label, text) under the title
    std::vector<std::string> sweep_keys;  ///< swept options in column order, e.g. {"lease_s"}
};

/// The report as one HTML document. `runs` in table order: runs with the same sweep values form
/// a block. `total_gpus` is the
/// cluster size C (utilization = sum of tenants' used GPUs at a sample time / C).
/// Every text from the inputs (tenant, policy names, paths) is HTML-escaped.
std::string html_report(const Workload& w, int total_gpus, const ReportHeader& header,
                        const std::vector<ReportRun>& runs);

/// "astraea" without a sweep; "astraea lease_s=300" with one.
std::string run_label(const ReportRun& r);

// ---- Building blocks (exposed for tests) ----

/// A point in data units.
struct ChartPoint {
    double x = 0, y = 0;
    friend bool operator==(const ChartPoint&, const ChartPoint&) = default;
};

/// Maps data values in [lo, hi] to pixels in [px_lo, px_hi] (px_hi may be below px_lo, as for a
/// y axis), linearly or by log10 (then lo > 0). Values outside [lo, hi] are clamped to the edge.
struct Axis {
    double lo = 0, hi = 1;
    double px_lo = 0, px_hi = 1;
    bool log = false;
    double to_px(double v) const;
};

/// &, <, >, " and ' as character references.
std::string html_escape(std::string_view s);

/// The vertices of the empirical CDF of `values` as a staircase: for each distinct value x, with
/// c values below it and c' at or below it (n in all), the points (x, c/n) and (x, c'/n), in
/// increasing x. {1, 2, 3} -> (1,0) (1,1/3) (2,1/3) (2,2/3) (3,2/3) (3,1). Empty in, empty out.
std::vector<ChartPoint> cdf_points(std::vector<double> values);

/// At most `max_points` (>= 4) of `points` (ordered by x), keeping the first and the last and,
/// from each of (max_points - 2) / 2 equal runs of the points in between, the one with the
/// smallest y (first such) and the one with the largest y (last such), in their order. Keeps the
/// extremes, so dips and peaks stay visible. Fewer than max_points + 1 points: unchanged.
std::vector<ChartPoint> downsample(const std::vector<ChartPoint>& points, std::size_t max_points);

/// "Nice" tick values (steps of 1, 2 or 5 x 10^k) covering [lo, hi] with about `target` steps:
/// every multiple of the step in [lo, hi]. nice_ticks(0, 1, 5) = {0, 0.2, 0.4, 0.6, 0.8, 1}.
std::vector<double> nice_ticks(double lo, double hi, int target);

/// SVG path data through `points` mapped by `x` and `y`: "M{x0} {y0}L{x1} {y1}...", one decimal
/// per coordinate; a point that maps to the same pixel text as the one before it is left out,
/// and so is a point (but never the last) less than `min_step_px` from the last one kept in
/// both x and y. For a curve that only goes up and right (a CDF) that bounds the points to
/// about (width + height) / min_step_px, so any number of jobs draws in a small path.
std::string svg_path(const std::vector<ChartPoint>& points, const Axis& x, const Axis& y,
                     double min_step_px = 0);

/// A scatter point's label: its text drawn from (x, y) (pixels, y the baseline), `width` px wide
/// and 12 px high above the baseline.
struct LabelBox {
    double x = 0, y = 0, width = 0;
};

/// Baselines for labels that do not overlap: each label, in the order given, keeps its wanted
/// baseline, or moves down 13 px at a time until its box meets no label placed before it. Two
/// runs with the same average JCT and fairness (one point) get their labels one under the other.
/// Returns one baseline per label, in pixels.
std::vector<double> spread_labels(const std::vector<LabelBox>& wanted);

}  // namespace astraeus
