#include "astraeus/sim/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "astraeus/sim/report.hpp"
#include "astraeus/trace/civil_time.hpp"

namespace astraeus {

double Axis::to_px(double v) const {
    v = std::clamp(v, lo, hi);
    double t = 0.5;
    if (log) {
        const double a = std::log10(lo), b = std::log10(hi);
        if (b > a) t = (std::log10(v) - a) / (b - a);
    } else if (hi > lo) {
        t = (v - lo) / (hi - lo);
    }
    return px_lo + t * (px_hi - px_lo);
}

std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

std::vector<ChartPoint> cdf_points(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    std::vector<ChartPoint> out;
    const double n = static_cast<double>(values.size());
    for (std::size_t i = 0; i < values.size();) {
        std::size_t k = i;
        while (k < values.size() && values[k] == values[i]) ++k;
        out.push_back({values[i], static_cast<double>(i) / n});
        out.push_back({values[i], static_cast<double>(k) / n});
        i = k;
    }
    return out;
}

std::vector<ChartPoint> downsample(const std::vector<ChartPoint>& points, std::size_t max_points) {
    max_points = std::max<std::size_t>(max_points, 4);
    if (points.size() <= max_points) return points;
    const std::size_t inner = points.size() - 2, buckets = (max_points - 2) / 2;
    std::vector<ChartPoint> out;
    out.reserve(2 + 2 * buckets);
    out.push_back(points.front());
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::size_t from = 1 + b * inner / buckets, to = 1 + (b + 1) * inner / buckets;
        if (from >= to) continue;
        std::size_t lo = from, hi = from;
        for (std::size_t i = from; i < to; ++i) {
            if (points[i].y < points[lo].y) lo = i;
            if (points[i].y >= points[hi].y) hi = i;
        }
        out.push_back(points[std::min(lo, hi)]);
        if (lo != hi) out.push_back(points[std::max(lo, hi)]);
    }
    out.push_back(points.back());
    return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
    if (!(hi > lo) || target < 1) return {lo};
    const double raw = (hi - lo) / target;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double r = raw / mag;
    const double step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
    std::vector<double> out;
    for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1) {
        const double v = k * step;
        out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    }
    return out;
}

std::string svg_path(const std::vector<ChartPoint>& points, const Axis& x, const Axis& y,
                     double min_step_px) {
    std::string out, last;
    double last_x = 0, last_y = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const double px = x.to_px(points[i].x), py = y.to_px(points[i].y);
        if (!out.empty() && i + 1 < points.size() && std::abs(px - last_x) < min_step_px &&
            std::abs(py - last_y) < min_step_px)
            continue;
        std::string xy = fmt::format("{:.1f} {:.1f}", px, py);
        if (xy == last) continue;
        out += out.empty() ? 'M' : 'L';
        out += xy;
        last = std::move(xy);
        last_x = px;
        last_y = py;
    }
    return out;
}

std::vector<double> spread_labels(const std::vector<LabelBox>& wanted) {
    constexpr double kHeight = 12, kStep = 13;
    std::vector<LabelBox> placed;
    std::vector<double> out;
    for (LabelBox b : wanted) {
        const auto meets = [&](const LabelBox& o) {
            return b.x < o.x + o.width && o.x < b.x + b.width && b.y - kHeight < o.y &&
                   o.y - kHeight < b.y;
        };
        while (std::any_of(placed.begin(), placed.end(), meets)) b.y += kStep;
        placed.push_back(b);
        out.push_back(b.y);
    }
    return out;
}

std::string run_label(const ReportRun& r) {
    std::string out = r.policy;
    for (const auto& [key, value] : r.sweep) out += fmt::format(" {}={}", key, value);
    return out;
}

namespace {

// ---- A line chart as SVG ----

struct Tick {
    double value;
    std::string label;
};

struct Line {
    std::string label;   // tooltip and legend text (plain text, escaped on output)
    std::string color;   // empty: a muted background line (CSS class "o")
    std::string dash;    // stroke-dasharray, empty for solid
    double width = 1.6;
    std::vector<ChartPoint> points;
    double min_step_px = 0;  // see svg_path: > 0 for curves that only go up and right (CDFs)
    bool dots = false;       // draw each point as a labelled dot instead of a path (scatter)
};

struct Chart {
    std::string aria;                 // accessible name of the figure
    std::string title, subtitle;      // drawn inside the SVG above the plot (panels)
    std::string subtitle_color;
    double plot_w = 560, plot_h = 270, left = 66;
    Axis x, y;                        // domains; pixels are set by render()
    std::vector<Tick> xticks, yticks;
    std::string xtitle, ytitle;
    std::vector<Line> lines;
    bool legend = true;
    bool band = false;                // a shaded x range with a label
    double band_lo = 0, band_hi = 0;
    std::string band_label;
    bool ref = false;                 // a dashed horizontal reference line at y = ref_y
    double ref_y = 0;
};

std::string num(double v) { return fmt::format("{:.1f}", v); }

std::string render(Chart c) {
    const double legend_row = 17;
    std::size_t longest = 0, entries = 0;
    if (c.legend)
        for (const Line& l : c.lines)
            if (!l.label.empty()) {
                longest = std::max(longest, l.label.size());
                ++entries;
            }
    const double legend_w =
        entries == 0 ? 0 : std::clamp(static_cast<double>(longest) * 6.6 + 40, 110.0, 380.0);
    c.plot_h = std::max(c.plot_h, static_cast<double>(entries) * legend_row + 8);
    const double top = 14 + (c.title.empty() ? 0 : 20) + (c.subtitle.empty() ? 0 : 18);
    const double bottom = 48;
    const double width = c.left + c.plot_w + 18 + (legend_w > 0 ? legend_w : 0);
    const double height = top + c.plot_h + bottom;
    c.x.px_lo = c.left;
    c.x.px_hi = c.left + c.plot_w;
    c.y.px_lo = top + c.plot_h;
    c.y.px_hi = top;
    const double x0 = c.left, x1 = c.left + c.plot_w, y0 = top + c.plot_h, y1 = top;

    std::string out = fmt::format(
        "<svg viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" "
        "aria-label=\"{a}\">\n",
        fmt::arg("w", num(width)), fmt::arg("h", num(height)), fmt::arg("a", html_escape(c.aria)));
    if (!c.title.empty())
        out += fmt::format("<text class=\"pt\" x=\"{}\" y=\"18\">{}</text>\n", num(x0),
                           html_escape(c.title));
    if (!c.subtitle.empty()) {
        // A swatch of the highlighted line, then the text in a readable grey.
        const double sy = c.title.empty() ? 18 : 36;
        double tx = x0;
        if (!c.subtitle_color.empty()) {
            out += fmt::format("<path class=\"s\" stroke=\"{}\" stroke-width=\"2.2\" "
                               "d=\"M{} {}L{} {}\"/>",
                               c.subtitle_color, num(x0), num(sy - 4), num(x0 + 22), num(sy - 4));
            tx = x0 + 28;
        }
        out += fmt::format("<text class=\"ps\" x=\"{}\" y=\"{}\">{}</text>\n", num(tx), num(sy),
                           html_escape(c.subtitle));
    }
    out += fmt::format("<rect class=\"pa\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
                       num(x0), num(y1), num(c.plot_w), num(c.plot_h));
    if (c.band) {
        const double bx0 = c.x.to_px(c.band_lo), bx1 = c.x.to_px(c.band_hi);
        out += fmt::format("<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
                           "<text class=\"bl\" x=\"{}\" y=\"{}\">{}</text>\n",
                           num(bx0), num(y1), num(std::max(bx1 - bx0, 1.0)), num(c.plot_h),
                           num(bx1 + 4), num(y1 + 12), html_escape(c.band_label));
    }
    for (const Tick& t : c.yticks) {
        const double py = c.y.to_px(t.value);
        out += fmt::format("<line class=\"g\" x1=\"{}\" y1=\"{p}\" x2=\"{}\" y2=\"{p}\"/>"
                           "<text class=\"tk\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                           num(x0), num(x1), num(x0 - 6), num(py + 4), html_escape(t.label),
                           fmt::arg("p", num(py)));
    }
    for (const Tick& t : c.xticks) {
        const double px = c.x.to_px(t.value);
        out += fmt::format("<line class=\"g\" x1=\"{p}\" y1=\"{}\" x2=\"{p}\" y2=\"{}\"/>"
                           "<text class=\"tk\" x=\"{p}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                           num(y1), num(y0), num(y0 + 16), html_escape(t.label),
                           fmt::arg("p", num(px)));
    }
    out += fmt::format("<path class=\"ax\" d=\"M{} {}L{} {}L{} {}\"/>\n", num(x0), num(y1),
                       num(x0), num(y0), num(x1), num(y0));
    out += fmt::format("<text class=\"at\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       num((x0 + x1) / 2), num(y0 + 38), html_escape(c.xtitle));
    out += fmt::format("<text class=\"at\" text-anchor=\"middle\" "
                       "transform=\"translate(16 {}) rotate(-90)\">{}</text>\n",
                       num((y0 + y1) / 2), html_escape(c.ytitle));
    if (c.ref) {
        const double py = c.y.to_px(c.ref_y);
        out += fmt::format("<line class=\"ref\" x1=\"{}\" y1=\"{p}\" x2=\"{}\" y2=\"{p}\"/>\n",
                           num(x0), num(x1), fmt::arg("p", num(py)));
    }
    // The scatter's labels, placed so that none covers another (runs on one point).
    std::vector<LabelBox> wanted;
    for (const Line& l : c.lines)
        if (l.dots)
            for (const ChartPoint& p : l.points)
                wanted.push_back({c.x.to_px(p.x) + 7, c.y.to_px(p.y) - 6,
                                  static_cast<double>(l.label.size()) * 6.6});
    const std::vector<double> label_y = spread_labels(wanted);
    std::size_t next_label = 0;
    for (const Line& l : c.lines) {
        if (l.dots) {
            for (const ChartPoint& p : l.points)
                out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\">"
                                   "<title>{}</title></circle><text class=\"lg\" x=\"{}\" "
                                   "y=\"{}\">{}</text>\n",
                                   num(c.x.to_px(p.x)), num(c.y.to_px(p.y)),
                                   l.color.empty() ? "#888" : l.color, html_escape(l.label),
                                   num(c.x.to_px(p.x) + 7), num(label_y[next_label++]),
                                   html_escape(l.label));
            continue;
        }
        const std::string d = svg_path(l.points, c.x, c.y, l.min_step_px);
        if (d.empty()) continue;
        std::string style =
            l.color.empty() ? std::string(" class=\"o\"")
                            : fmt::format(" class=\"s\" stroke=\"{}\" stroke-width=\"{}\"", l.color,
                                          num(l.width));
        if (!l.dash.empty()) style += fmt::format(" stroke-dasharray=\"{}\"", l.dash);
        out += fmt::format("<path{} d=\"{}\"><title>{}</title></path>\n", style, d,
                           html_escape(l.label));
    }
    if (entries > 0) {
        const double lx = x1 + 18;
        double ly = y1 + 8;
        for (const Line& l : c.lines) {
            if (l.label.empty()) continue;
            std::string style = l.color.empty()
                                    ? std::string(" class=\"o\"")
                                    : fmt::format(" class=\"s\" stroke=\"{}\" stroke-width=\"{}\"",
                                                  l.color, num(l.width));
            if (!l.dash.empty()) style += fmt::format(" stroke-dasharray=\"{}\"", l.dash);
            out += fmt::format("<path{} d=\"M{} {}L{} {}\"/><text class=\"lg\" x=\"{}\" y=\"{}\">"
                               "{}</text>\n",
                               style, num(lx), num(ly), num(lx + 26), num(ly), num(lx + 32),
                               num(ly + 4), html_escape(l.label));
            ly += legend_row;
        }
    }
    out += "</svg>\n";
    return out;
}

// ---- Colours, units, shared data ----

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1",
                                    "#76b7b2", "#9c755f", "#d37295", "#b6992d", "#7f7f7f"};
constexpr const char* kDashes[] = {"", "7 4", "2 3", "10 3 2 3", "1 5"};
/// A CDF keeps a vertex only 0.75 px or more from the one before it: at most about
/// (plot width + height) / 0.75 points a curve, whatever the number of jobs, and no visible
/// change (a count-based thinning would cut the steep, tie-rich start of a JCT CDF).
constexpr double kCdfStepPx = 0.75;

std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

/// "0.5" -> "1/2": labels of a log2 axis.
std::string power_of_two_label(int k) {
    if (k >= 0) return fmt::format("{}", 1L << k);
    return fmt::format("1/{}", 1L << -k);
}

/// Log-axis ticks for durations, at round units.
std::vector<Tick> duration_ticks(double lo, double hi) {
    static const std::pair<double, const char*> kUnits[] = {
        {1, "1 s"},         {10, "10 s"},       {60, "1 min"},     {600, "10 min"},
        {3600, "1 h"},      {21600, "6 h"},     {86400, "1 d"},    {604800, "7 d"},
        {2592000, "30 d"},  {8640000, "100 d"}, {31536000, "1 yr"}};
    std::vector<Tick> out;
    for (const auto& [v, label] : kUnits)
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back({v, label});
    return out;
}

std::vector<Tick> linear_ticks(double lo, double hi, int target, const std::string& suffix = "",
                               double scale = 1) {
    const std::vector<double> values = nice_ticks(lo, hi, target);
    const double step = values.size() > 1 ? values[1] - values[0] : 1;
    const int decimals =
        step * scale >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step * scale) - 1e-9));
    std::vector<Tick> out;
    for (double v : values) out.push_back({v, fixed(v * scale, decimals) + suffix});
    return out;
}

struct RunView {
    std::string label, color, dash;
    std::vector<char> has_jobs;  // tenant had admitted jobs in this run
};

/// The closest of 1, 2, 5 x 10^k at or above (`up`) or at or below `v` (> 0).
double round_125(double v, bool up) {
    const double mag = std::pow(10.0, std::floor(std::log10(v) + 1e-9));
    const double steps[] = {1, 2, 5, 10};
    if (up) {
        for (double s : steps)
            if (s * mag >= v * (1 - 1e-9)) return s * mag;
        return 10 * mag;
    }
    double out = mag;
    for (double s : steps)
        if (s * mag <= v * (1 + 1e-9)) out = s * mag;
    return out;
}

// A chart of durations (seconds, drawn from 1 s) on a log x axis over [lo, hi], rounded out to
// 1-2-5 steps and at least one decade wide, with a y axis from 0 to 1.
Chart log_duration_chart(double lo, double hi) {
    lo = round_125(std::max(lo, 1.0), false);
    hi = std::max(round_125(hi, true), lo * 10);
    Chart c;
    c.x = {lo, hi, 0, 1, true};
    c.y = {0, 1, 0, 1, false};
    c.xticks = duration_ticks(lo, hi);
    return c;
}

std::string duration_text(Seconds s) {
    if (s % 86400 == 0 && s >= 86400) return fmt::format("{} d", s / 86400);
    if (s % 3600 == 0 && s >= 3600) return fmt::format("{} h", s / 3600);
    if (s % 60 == 0 && s >= 60) return fmt::format("{} min", s / 60);
    return fmt::format("{} s", s);
}

// ---- Sections ----

/// The first cells of a table row: the policy with its colour, then the swept values.
std::string row_head(const ReportHeader& h, const ReportRun& r, const RunView& v) {
    std::string out = fmt::format("<td class=\"l\"><span class=\"sw\" style=\"border-color:{}\">"
                                  "</span>{}</td>",
                                  v.color, html_escape(r.policy));
    for (const std::string& k : h.sweep_keys) {
        std::string cell = "&ndash;";
        for (const auto& [key, value] : r.sweep)
            if (key == k)
                cell = fmt::format("{}{}", value,
                                   std::find(r.overridden.begin(), r.overridden.end(), k) !=
                                           r.overridden.end()
                                       ? "*"
                                       : "");
        out += fmt::format("<td>{}</td>", cell);
    }
    return out;
}

std::string table_html(const ReportHeader& h, const std::vector<ReportRun>& runs,
                       const std::vector<RunView>& views) {
    std::string head = "<th>policy</th>";
    for (const std::string& k : h.sweep_keys) head += fmt::format("<th>{}</th>", html_escape(k));
    auto row_class = [&](std::size_t i) {
        for (std::size_t k = 0; k < i; ++k)
            if (runs[k].sweep == runs[i].sweep) return std::string();
        return std::string(i > 0 ? " class=\"bs\"" : "");
    };
    auto fixed_h = [](double sec) { return fixed(sec / 3600.0, 2); };

    std::string out = "<h3>Jobs, time and utilization</h3>\n<div class=\"tw\"><table>\n<thead><tr>" +
                      head +
                      "<th>jobs done</th><th>avg JCT (h)</th><th>p50 JCT (h)</th>"
                      "<th>p95 JCT (h)</th><th>p99 JCT (h)</th><th>avg wait (h)</th>"
                      "<th>max wait (h)</th><th>makespan (d)</th><th>GPU utilization</th>"
                      "<th>preemptions</th><th>lease expiries</th></tr></thead>\n<tbody>\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const Summary& s = runs[i].summary;
        out += fmt::format(
            "<tr{}>{}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td>{}</td><td>{}%</td><td>{}</td><td>{}</td></tr>\n",
            row_class(i), row_head(h, runs[i], views[i]), s.jobs_done, fixed_h(s.jct_s.mean),
            fixed_h(s.jct_s.p50), fixed_h(s.jct_s.p95), fixed_h(s.jct_s.p99),
            fixed_h(s.queueing_delay_s.mean), fixed_h(s.longest_wait_s.max),
            fixed(static_cast<double>(s.makespan_s) / 86400.0, 2),
            fixed(100 * s.gpu_utilization, 1), s.preemptions, s.lease_expiries);
    }
    out += "</tbody></table></div>\n";

    out += "<h3>Fairness</h3>\n<div class=\"tw\"><table>\n<thead><tr>" + head +
           "<th>fair</th><th>loss</th><th>benefit</th><th>min F<sub>j</sub></th>"
           "<th>p5 F<sub>j</sub></th><th>Jain (F<sub>j</sub>)</th>"
           "<th class=\"sep\">min F<sub>u</sub></th><th>max / min F<sub>u</sub></th>"
           "<th>Jain (F<sub>u</sub>)</th><th>worst windowed F<sub>u</sub></th>"
           "<th>shortfall</th></tr></thead>\n<tbody>\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const Summary& s = runs[i].summary;
        const std::string ratio = fixed(s.fu_max_shortfall, 4);
        out += fmt::format(
            "<tr{}>{}<td>{}%</td><td>{}%</td><td>{}%</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td class=\"sep\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            row_class(i), row_head(h, runs[i], views[i]), fixed(100 * s.share_fair, 1),
            fixed(100 * s.share_loss, 1), fixed(100 * s.share_benefit, 1), fixed(s.fj_min, 3),
            fixed(s.fj_p5, 3), fixed(s.fj_jain, 3), fixed(s.fu_min, 3),
            fixed(s.fu_max_over_min, 3), fixed(s.fu_jain, 3), fixed(s.fu_worst_over_time, 3),
            ratio);
    }
    out += "</tbody></table></div>\n";
    bool any_overridden = false;
    for (const ReportRun& r : runs) any_overridden = any_overridden || !r.overridden.empty();
    if (any_overridden)
        out += "<p class=\"note\">* The policy sets this option itself (see its manifest in "
               "compare.json): the swept value has no effect on that row.</p>\n";
    return out;
}

}  // namespace

std::string html_report(const Workload& w, int total_gpus, const ReportHeader& header,
                        const std::vector<ReportRun>& runs) {
    // Colours by policy (first appearance), dashes by sweep values (first appearance).
    std::vector<std::string> policies;
    std::vector<std::vector<std::pair<std::string, Seconds>>> sweeps;
    std::vector<RunView> views;
    for (const ReportRun& r : runs) {
        auto p = std::find(policies.begin(), policies.end(), r.policy);
        const std::size_t pi = static_cast<std::size_t>(p - policies.begin());
        if (p == policies.end()) policies.push_back(r.policy);
        auto s = std::find(sweeps.begin(), sweeps.end(), r.sweep);
        const std::size_t si = static_cast<std::size_t>(s - sweeps.begin());
        if (s == sweeps.end()) sweeps.push_back(r.sweep);
        RunView v{run_label(r), kPalette[pi % std::size(kPalette)],
                  kDashes[si % std::size(kDashes)], std::vector<char>(w.tenants.size(), 0)};
        for (std::size_t j = 0; j < w.jobs.size() && j < r.result->runs.size(); ++j)
            if (r.result->runs[j].status != RunStatus::Dropped && w.jobs[j].tenant >= 0)
                v.has_jobs[static_cast<std::size_t>(w.jobs[j].tenant)] = 1;
        views.push_back(std::move(v));
    }

    // Time axis shared by the time-series charts: days since the trace epoch.
    Seconds t_max = 0, interval = 0;
    for (const ReportRun& r : runs) {
        t_max = std::max(t_max, r.result->end_s);
        Seconds prev = -1;
        for (const TenantSample& t : r.result->tenant_series) {
            t_max = std::max(t_max, t.time_s);
            if (prev >= 0 && t.time_s > prev && (interval == 0 || t.time_s - prev < interval))
                interval = t.time_s - prev;
            prev = t.time_s;
        }
    }
    if (interval <= 0) interval = 3600;
    // Hours for runs shorter than two days, days otherwise.
    const double unit_s = t_max < 2 * 86400 ? 3600.0 : 86400.0;
    auto tx = [unit_s](Seconds t) { return static_cast<double>(t) / unit_s; };
    const double t_axis_max = std::max(tx(t_max), 1.0);
    const char* unit_name = unit_s == 3600.0 ? "hours" : "days";
    const std::string time_title =
        w.epoch_unix_s != 0
            ? fmt::format("time ({} since {} UTC)", unit_name, format_utc(w.epoch_unix_s))
            : fmt::format("time ({} since the start of the trace)", unit_name);

    std::string out;
    out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out += fmt::format("<title>Astraeus policy comparison: {}</title>\n", html_escape(header.title));
    out += R"(<style>
body{font-family:"DejaVu Sans",system-ui,sans-serif;color:#222;background:#fff;margin:24px auto;max-width:1180px;padding:0 16px;line-height:1.4}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:13px;margin:8px 0 0}
dl.meta dt{color:#666}dl.meta dd{margin:0;font-family:"DejaVu Sans Mono",monospace;font-size:12px;overflow-wrap:anywhere}
.note{font-size:13px;color:#444;max-width:980px}
.tw{overflow-x:auto}table{border-collapse:collapse;font-size:12.5px;margin:6px 0}
th,td{padding:3px 7px;border-bottom:1px solid #e3e3e3;text-align:right;white-space:nowrap}
th{background:#f4f4f4;font-weight:600;text-align:center}td.l{text-align:left;font-weight:600}
h3{font-size:14px;margin:14px 0 2px;color:#333}.sep{border-left:2px solid #ccc}
tr.bs td{border-top:2px solid #999}
.sw{display:inline-block;width:16px;height:0;border-top:4px solid;margin-right:6px;vertical-align:middle}
.panels{display:flex;flex-wrap:wrap;gap:8px 18px}
svg{max-width:100%;height:auto;display:block}
svg text{font-family:"DejaVu Sans",system-ui,sans-serif}
.pa{fill:#fcfcfc;stroke:none}.g{stroke:#e4e4e4;stroke-width:1}.ax{fill:none;stroke:#555;stroke-width:1}
.tk{font-size:11px;fill:#555}.at{font-size:12px;fill:#333}.lg{font-size:12px;fill:#222}
.pt{font-size:13px;font-weight:600;fill:#222}.ps{font-size:12px;fill:#444}
.band{fill:#e3f1df}.bl{font-size:11px;fill:#4a7a40}
.ref{stroke:#555;stroke-width:1;stroke-dasharray:4 3}
.s{fill:none;stroke-linejoin:round}.o{fill:none;stroke:#c9c9c9;stroke-width:1}
</style>
</head>
<body>
)";
    out += fmt::format("<h1>Policy comparison: {}</h1>\n<dl class=\"meta\">\n",
                       html_escape(header.title));
    for (const auto& [label, text] : header.details)
        out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", html_escape(label), html_escape(text));
    out += "</dl>\n";

    // ---- Table ----
    out += "<h2>Comparison</h2>\n";
    out += table_html(header, runs, views);
    out += fmt::format(
        "<p class=\"note\">Times in hours (h) and days (d); JCT = end &minus; submit over finished "
        "jobs, wait = first start &minus; submit. Job fairness F<sub>j</sub> = g<sub>j</sub> "
        "d<sub>j</sub> / D<sub>j</sub> (GPU-time used over GPU-time deserved): <em>fair</em> = "
        "share of jobs with F<sub>j</sub> in [0.95, 1/0.95], <em>loss</em> below, "
        "<em>benefit</em> above. Tenant fairness F<sub>u</sub> = GPU-time received / deserved "
        "over the whole run, over tenants with jobs; <em>worst windowed</em> = the lowest "
        "windowed F<sub>u</sub> of any tenant at any sample. <em>shortfall</em> = "
        "the worst-served tenant's max(0, 1 &minus; min F<sub>u</sub>) over the whole run "
        "(F<sub>u</sub> &gt; 1 is GPU-time no one else asked for, not harm); <em>max wait</em> = "
        "the longest stretch any job spent pending (before its first start or after a lease end "
        "or preemption).</p>\n");

    // ---- Pareto: avg JCT against the worst tenant's windowed F_u ----
    {
        double lo = 0, hi = 10;
        for (const ReportRun& r : runs) {
            const double v = std::max(1.0, r.summary.jct_s.mean);
            hi = std::max(hi, v);
            lo = lo == 0 ? v : std::min(lo, v);
        }
        Chart c = log_duration_chart(lo, hi);
        c.aria = "Average JCT against the worst tenant's windowed F_u, one point per run";
        c.yticks = linear_ticks(0, 1, 5);
        c.xtitle = "average JCT (log scale): left is better";
        c.ytitle = "worst windowed F_u: up is better";
        c.legend = false;
        // The frontier: runs no other run beats on both (lower JCT and higher F_u).
        std::vector<ChartPoint> all;
        for (const ReportRun& r : runs)
            all.push_back({std::max(1.0, r.summary.jct_s.mean), r.summary.fu_worst_over_time});
        std::vector<ChartPoint> front;
        std::vector<ChartPoint> sorted = all;
        std::sort(sorted.begin(), sorted.end(), [](const ChartPoint& a, const ChartPoint& b) {
            return a.x != b.x ? a.x < b.x : a.y > b.y;
        });
        double best = -1;
        for (const ChartPoint& p : sorted)
            if (p.y > best) {
                if (!front.empty()) front.push_back({p.x, front.back().y});
                front.push_back(p);
                best = p.y;
            }
        c.lines.push_back({"Pareto frontier", "", "4 3", 1.2, std::move(front), 0});
        for (std::size_t i = 0; i < runs.size(); ++i) {
            Line dot{views[i].label, views[i].color, "", 1.8, {all[i]}, 0};
            dot.dots = true;
            c.lines.push_back(std::move(dot));
        }
        out += "<h2>Trade-off: average JCT against tenant fairness</h2>\n" + render(std::move(c));
        out += "<p class=\"note\">One point per run: its average JCT and the lowest windowed "
               "F<sub>u</sub> of any tenant at any hourly sample. The dashed staircase joins the "
               "runs that no other run beats on both.</p>\n";
    }

    // ---- CDF of F_j ----
    {
        const double fj_max = 3;
        Chart c;
        c.aria = "Cumulative distribution of job fairness F_j per policy";
        c.x = {0, fj_max, 0, 1, false};
        c.y = {0, 1, 0, 1, false};
        c.xticks = linear_ticks(0, fj_max, 6);
        c.yticks = linear_ticks(0, 1, 5, "%", 100);
        c.xtitle = "job fairness F_j (finished jobs; values above 3 are off the chart)";
        c.ytitle = "share of jobs with F_j \u2264 x";
        c.band = true;
        c.band_lo = 0.95;
        c.band_hi = 1 / 0.95;
        c.band_label = "sharing-fair";
        for (std::size_t i = 0; i < runs.size(); ++i) {
            std::vector<double> fj;
            const SimResult& r = *runs[i].result;
            for (std::size_t j = 0; j < r.runs.size(); ++j)
                if (r.runs[j].status == RunStatus::Done) fj.push_back(r.runs[j].fairness);
            std::vector<ChartPoint> pts = cdf_points(std::move(fj));
            auto cut = std::find_if(pts.begin(), pts.end(),
                                    [&](const ChartPoint& p) { return p.x > fj_max; });
            if (cut != pts.end()) {
                const double y = cut == pts.begin() ? 0 : std::prev(cut)->y;
                pts.erase(cut, pts.end());
                pts.push_back({fj_max, y});
            }
            c.lines.push_back({views[i].label, views[i].color, views[i].dash, 1.8,
                               std::move(pts), kCdfStepPx});
        }
        out += "<h2>Job fairness: CDF of F<sub>j</sub></h2>\n" + render(std::move(c));
        out += "<p class=\"note\">A curve that rises steeply inside the green band treats jobs "
               "alike; mass on the left are jobs that got less than their fair GPU-time "
               "(loss), on the right jobs that got more (benefit).</p>\n";
    }

    // ---- CDF of JCT ----
    {
        double lo = 0, hi = 10;
        std::vector<std::vector<double>> all(runs.size());
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const SimResult& r = *runs[i].result;
            for (std::size_t j = 0; j < r.runs.size() && j < w.jobs.size(); ++j)
                if (r.runs[j].status == RunStatus::Done) {
                    const double v =
                        std::max(1.0, static_cast<double>(r.runs[j].end_s - w.jobs[j].submit_s));
                    all[i].push_back(v);
                    hi = std::max(hi, v);
                    lo = lo == 0 ? v : std::min(lo, v);
                }
        }
        Chart c = log_duration_chart(lo, hi);
        c.aria = "Cumulative distribution of job completion time per policy";
        c.yticks = linear_ticks(0, 1, 5, "%", 100);
        c.xtitle = "job completion time, end \u2212 submit (log scale; under 1 s drawn at 1 s)";
        c.ytitle = "share of jobs with JCT \u2264 x";
        for (std::size_t i = 0; i < runs.size(); ++i)
            c.lines.push_back({views[i].label, views[i].color, views[i].dash, 1.8,
                               cdf_points(std::move(all[i])), kCdfStepPx});
        out += "<h2>Job completion time: CDF</h2>\n" + render(std::move(c));
        out += "<p class=\"note\">Further left and higher is better: more jobs finish "
               "sooner.</p>\n";
    }

    // ---- Per-tenant F_u over time ----
    {
        std::size_t lines_total = 0;
        for (const RunView& v : views)
            lines_total += static_cast<std::size_t>(std::count(v.has_jobs.begin(), v.has_jobs.end(), 1));
        const std::size_t per_line =
            std::clamp<std::size_t>(lines_total == 0 ? 400 : 160000 / lines_total, 60, 400);
        std::vector<std::vector<std::vector<ChartPoint>>> series(runs.size());
        double vmin = 1, vmax = 1;
        for (std::size_t i = 0; i < runs.size(); ++i) {
            series[i].resize(w.tenants.size());
            for (const TenantSample& t : runs[i].result->tenant_series) {
                const std::size_t u = static_cast<std::size_t>(t.tenant);
                if (u < w.tenants.size() && views[i].has_jobs[u])
                    series[i][u].push_back({tx(t.time_s), t.fairness});
            }
            for (auto& s : series[i]) {
                s = downsample(s, per_line);
                for (const ChartPoint& p : s) {
                    if (p.y > 0) vmin = std::min(vmin, p.y);
                    vmax = std::max(vmax, p.y);
                }
            }
        }
        const int klo = std::clamp(static_cast<int>(std::floor(std::log2(vmin) + 1e-9)), -6, -1);
        const int khi = std::clamp(static_cast<int>(std::ceil(std::log2(vmax) - 1e-9)), 1, 6);
        std::vector<Tick> fu_ticks;
        for (int k = klo; k <= khi; ++k) fu_ticks.push_back({std::ldexp(1.0, k), power_of_two_label(k)});
        out += "<h2>Tenant fairness over time: windowed F<sub>u</sub> per tenant</h2>\n";
        out += fmt::format(
            "<p class=\"note\">One panel per run. Each line is a tenant's F<sub>u</sub> over "
            "the fairness window at each sample (GPU-time received / deserved; 1 = its fair "
            "share, dashed; log scale, values beyond {} .. {} drawn at the edge). The thick "
            "coloured line is the run's <em>worst-served tenant</em>: the lowest F<sub>u</sub> "
            "over the whole run (the one the shortfall in the table measures); grey lines are the "
            "other tenants (hover a line for its name).</p>\n<div class=\"panels\">\n",
            power_of_two_label(klo), power_of_two_label(khi));
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const SimResult& r = *runs[i].result;
            int worst = -1;
            for (std::size_t u = 0; u < w.tenants.size(); ++u) {
                if (!views[i].has_jobs[u] || u >= r.tenant_fairness.size() ||
                    std::isnan(r.tenant_fairness[u]))
                    continue;
                if (worst < 0 || r.tenant_fairness[u] < r.tenant_fairness[static_cast<std::size_t>(worst)])
                    worst = static_cast<int>(u);
            }
            Chart c;
            c.aria = "Windowed tenant fairness over time for " + views[i].label;
            c.title = views[i].label;
            if (worst >= 0)
                c.subtitle = fmt::format("worst-served tenant: {} (F_u over the run {:.3f})",
                                         w.tenants[static_cast<std::size_t>(worst)].name,
                                         r.tenant_fairness[static_cast<std::size_t>(worst)]);
            c.subtitle_color = views[i].color;
            c.plot_w = 440;
            c.plot_h = 190;
            c.left = 56;
            c.legend = false;
            c.x = {0, t_axis_max, 0, 1, false};
            c.y = {std::ldexp(1.0, klo), std::ldexp(1.0, khi), 0, 1, true};
            c.xticks = linear_ticks(0, t_axis_max, 6);
            c.yticks = fu_ticks;
            c.xtitle = time_title;
            c.ytitle = "windowed F_u";
            c.ref = true;
            c.ref_y = 1;
            for (std::size_t u = 0; u < w.tenants.size(); ++u)
                if (static_cast<int>(u) != worst && !series[i][u].empty())
                    c.lines.push_back({w.tenants[u].name, "", "", 1, std::move(series[i][u])});
            if (worst >= 0)
                c.lines.push_back({w.tenants[static_cast<std::size_t>(worst)].name + " (worst)",
                                   views[i].color, "", 2.2,
                                   std::move(series[i][static_cast<std::size_t>(worst)])});
            out += render(std::move(c));
        }
        out += "</div>\n";
    }

    // ---- GPU utilization over time ----
    {
        // Windows of a round number of sample intervals, at most 300 of them.
        const Seconds needed = std::max<Seconds>(1, (t_max + interval * 300 - 1) / (interval * 300));
        Seconds multiple = needed;
        for (Seconds m : {1, 2, 3, 4, 6, 8, 12, 24, 48, 72, 96, 168, 336, 720})
            if (m >= needed) {
                multiple = m;
                break;
            }
        const Seconds window = interval * multiple;
        Chart c;
        c.aria = "Cluster GPU utilization over time per policy";
        c.x = {0, t_axis_max, 0, 1, false};
        c.y = {0, 1, 0, 1, false};
        c.xticks = linear_ticks(0, t_axis_max, 8);
        c.yticks = linear_ticks(0, 1, 5, "%", 100);
        c.xtitle = time_title;
        c.ytitle = fmt::format("GPUs in use (% of {})", total_gpus);
        for (std::size_t i = 0; i < runs.size(); ++i) {
            std::map<Seconds, long> used;  // sample time -> GPUs in use over all tenants
            for (const TenantSample& t : runs[i].result->tenant_series) used[t.time_s] += t.used_gpus;
            std::map<Seconds, std::pair<double, int>> windows;  // window index -> (sum, count)
            for (const auto& [t, g] : used) {
                auto& acc = windows[t / window];
                acc.first += static_cast<double>(g) / std::max(1, total_gpus);
                acc.second += 1;
            }
            std::vector<ChartPoint> pts;
            for (const auto& [k, acc] : windows)
                pts.push_back({tx(k * window) + tx(window) / 2, acc.first / acc.second});
            c.lines.push_back({views[i].label, views[i].color, views[i].dash, 1.6, std::move(pts)});
        }
        out += "<h2>GPU utilization over time</h2>\n" + render(std::move(c));
        out += fmt::format("<p class=\"note\">GPUs held by running jobs (all tenants) / {} "
                           "cluster GPUs, sampled every {} and averaged over {} windows; a line "
                           "ends when its run's last job finishes.</p>\n",
                           total_gpus, duration_text(interval), duration_text(window));
    }

    out += fmt::format("<p class=\"note\">Generated by astraeus {} (<code>astraeus compare</code>). "
                       "Self-contained: no scripts, nothing loaded from the network.</p>\n",
                       html_escape(astraeus_version()));
    out += "</body>\n</html>\n";
    return out;
}

}  // namespace astraeus
