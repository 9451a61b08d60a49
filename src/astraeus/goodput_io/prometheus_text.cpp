#include "astraeus/goodput_io/prometheus_text.hpp"

#include <fmt/format.h>
#include <map>
#include <tuple>

namespace astraeus::goodput {

namespace {

using goodput::Category;
using goodput::Counts;

void family_head(std::string& out, std::string_view name, std::string_view help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += " gauge\n";
}

// One label pair: name="escaped value". `first` says whether it opens the braces.
void label(std::string& out, bool first, std::string_view name, std::string_view value) {
    out += first ? '{' : ',';
    out += name;
    out += "=\"";
    out += escape_label_value(value);
    out += '"';
}

void value_line(std::string& out, double v) {
    out += "} ";
    out += fmt::format("{}", v);
    out += '\n';
}

void value_line(std::string& out, std::int64_t v) {
    out += "} ";
    out += fmt::format("{}", v);
    out += '\n';
}

void namespace_family(std::string& out, std::string_view name, std::string_view help,
                      const std::vector<NamespaceValue>& values) {
    std::map<std::string, std::int64_t> by_ns;
    for (const auto& v : values) by_ns[v.ns] += v.value;
    if (by_ns.empty()) return;
    family_head(out, name, help);
    for (const auto& [ns, v] : by_ns) {
        out += name;
        label(out, true, "namespace", ns);
        value_line(out, v);
    }
}

}  // namespace

std::string_view to_string(MetricScope s) {
    switch (s) {
        case MetricScope::Cluster: return "cluster";
        case MetricScope::Workspace: return "workspace";
        case MetricScope::Machine: return "machine";
        case MetricScope::Pool: return "pool";
    }
    return "cluster";
}

std::string_view to_string(MetricWindow w) {
    return w == MetricWindow::Hour ? "hour" : "day";
}

std::string escape_label_value(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string prometheus_text(const MetricsSnapshot& snapshot) {
    std::string out;

    // Goodput by scope: merged by (scope, name, window); map order = scope, name, window.
    std::map<std::tuple<MetricScope, std::string, MetricWindow>, Counts> scoped;
    for (const auto& s : snapshot.goodput) scoped[{s.scope, s.name, s.window}] += s.counts;

    bool any_ratio = false;
    for (const auto& [key, c] : scoped) any_ratio = any_ratio || goodput::figures(c).goodput;
    if (any_ratio) {
        family_head(out, "astraeus_goodput_ratio",
                    "Productive over held GPU time, in the current UTC hour (window=hour) or the "
                    "last 24 hours (window=day).");
        for (const auto& [key, c] : scoped) {
            const auto g = goodput::figures(c).goodput;
            if (!g) continue;
            out += "astraeus_goodput_ratio";
            label(out, true, "scope", to_string(std::get<0>(key)));
            label(out, false, "name", std::get<1>(key));
            label(out, false, "window", to_string(std::get<2>(key)));
            value_line(out, *g);
        }
    }
    if (!scoped.empty()) {
        family_head(out, "astraeus_goodput_gpu_hours",
                    "GPU-hours by category (held and waiting parts together), in the current UTC "
                    "hour (window=hour) or the last 24 hours (window=day).");
        for (const auto& [key, c] : scoped) {
            for (Category k : goodput::kAllCategories) {
                out += "astraeus_goodput_gpu_hours";
                label(out, true, "scope", to_string(std::get<0>(key)));
                label(out, false, "name", std::get<1>(key));
                label(out, false, "window", to_string(std::get<2>(key)));
                label(out, false, "category", goodput::to_string(k));
                value_line(out, goodput::gpu_hours(c.total_of(k)));
            }
        }
    }

    bool any_unmeasured = false;
    for (const auto& [key, c] : scoped) any_unmeasured = any_unmeasured || c.unmeasured != 0;
    if (any_unmeasured) {
        family_head(out, "astraeus_goodput_unmeasured_gpu_hours",
                    "Running GPU-hours that no utilization sample or progress decided (counted "
                    "idle), in the current UTC hour (window=hour) or the last 24 hours (window=day).");
        for (const auto& [key, c] : scoped) {
            out += "astraeus_goodput_unmeasured_gpu_hours";
            label(out, true, "scope", to_string(std::get<0>(key)));
            label(out, false, "name", std::get<1>(key));
            label(out, false, "window", to_string(std::get<2>(key)));
            value_line(out, goodput::gpu_hours(c.unmeasured));
        }
    }

    // Runs still going: merged by (namespace, run).
    std::map<std::pair<std::string, std::string>, Counts> runs;
    for (const auto& r : snapshot.runs) runs[{r.ns, r.run}] += r.counts;
    if (!runs.empty()) {
        family_head(out, "astraeus_run_goodput_gpu_hours",
                    "A running run's GPU-hours by category since it was submitted (held and "
                    "waiting parts together).");
        for (const auto& [key, c] : runs) {
            for (Category k : goodput::kAllCategories) {
                out += "astraeus_run_goodput_gpu_hours";
                label(out, true, "namespace", key.first);
                label(out, false, "run", key.second);
                label(out, false, "category", goodput::to_string(k));
                value_line(out, goodput::gpu_hours(c.total_of(k)));
            }
        }
    }
    bool any_run_ratio = false;
    for (const auto& [key, c] : runs) any_run_ratio = any_run_ratio || goodput::figures(c).goodput;
    if (any_run_ratio) {
        family_head(out, "astraeus_run_goodput_ratio",
                    "A running run's goodput since it was submitted: productive over held.");
        for (const auto& [key, c] : runs) {
            const auto g = goodput::figures(c).goodput;
            if (!g) continue;
            out += "astraeus_run_goodput_ratio";
            label(out, true, "namespace", key.first);
            label(out, false, "run", key.second);
            value_line(out, *g);
        }
    }

    namespace_family(out, "astraeus_workers_stalled", "Workers stalled now.",
                     snapshot.workers_stalled);
    namespace_family(out, "astraeus_runs_with_straggler",
                     "Runs whose gang has a straggler now.", snapshot.runs_with_straggler);

    if (snapshot.is_operator) {
        std::map<std::string, std::int64_t> alerts;
        for (const auto& a : snapshot.threshold_alerts_firing) alerts[a.metric] += a.value;
        if (!alerts.empty()) {
            family_head(out, "astraeus_threshold_alerts_firing",
                        "Threshold alerts firing, per metric (cluster operators only).");
            for (const auto& [metric, v] : alerts) {
                out += "astraeus_threshold_alerts_firing";
                label(out, true, "metric", metric);
                value_line(out, v);
            }
        }
    }
    return out;
}

}  // namespace astraeus::goodput
