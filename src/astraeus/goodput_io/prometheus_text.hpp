// The Prometheus text exposition (format 0.0.4) of GET /v1/goodput/metrics (spec/goodput.md
// "Prometheus"; the page seeds/goodput-page.txt, "Prometheus and OpenTelemetry"). The server
// fills a plain MetricsSnapshot from its ledgers and live state; prometheus_text turns it into
// text. The metric names and labels are the product's contract:
//   astraeus_goodput_ratio{scope,name,window}            productive / held (absent when none held)
//   astraeus_goodput_gpu_hours{scope,name,window,category} GPU-hours by category (held + waiting)
//   astraeus_run_goodput_gpu_hours{namespace,run,category} a running run's, since submission
//   astraeus_run_goodput_ratio{namespace,run}              its goodput (absent when none held)
//   astraeus_workers_stalled{namespace}                    workers stalled now
//   astraeus_runs_with_straggler{namespace}                runs with a straggler now
//   astraeus_threshold_alerts_firing{metric}               firing threshold alerts (operators only)
// All are gauges. `promtool check metrics` lints the two `_gpu_hours` names ("use base unit
// seconds instead of hours"); the names are kept on purpose (the page's contract).
// Thread safety: plain values and a pure function.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/goodput/category.hpp"

namespace astraeus::goodput {

/// What a goodput ratio/GPU-hours series is about (the `scope` label), in exposition order.
enum class MetricScope : std::uint8_t { Cluster, Workspace, Machine, Pool };
/// The `window` label: the current UTC hour, or the last 24 hours.
enum class MetricWindow : std::uint8_t { Hour, Day };

/// "cluster", "workspace", "machine", "pool".
std::string_view to_string(MetricScope s);
/// "hour", "day".
std::string_view to_string(MetricWindow w);

/// Goodput counts of one (scope, name) over one window.
struct ScopeCounts {
    MetricScope scope = MetricScope::Cluster;
    std::string name;
    MetricWindow window = MetricWindow::Hour;
    goodput::Counts counts;
};

/// A run still going: its counts since it was submitted. `ns` is its workspace's name.
struct RunCounts {
    std::string ns;
    std::string run;
    goodput::Counts counts;
};

/// A per-namespace gauge value (workers stalled, runs with a straggler).
struct NamespaceValue {
    std::string ns;
    std::int64_t value = 0;
};

/// Threshold alerts firing on one metric (the `metric` label, e.g. "astraeus_goodput_ratio").
struct MetricValue {
    std::string metric;
    std::int64_t value = 0;
};

/// Everything one scrape shows, already filtered to what the caller may see. Entries repeated
/// with the same labels are summed; order does not matter (the output is sorted).
struct MetricsSnapshot {
    std::vector<ScopeCounts> goodput;
    std::vector<RunCounts> runs;
    std::vector<NamespaceValue> workers_stalled;
    std::vector<NamespaceValue> runs_with_straggler;
    /// Shown only when `is_operator` (a cluster-operator token); ignored otherwise.
    std::vector<MetricValue> threshold_alerts_firing;
    bool is_operator = false;
};

/// The exposition: for each family in the order of the table above, "# HELP", "# TYPE ... gauge",
/// then its samples sorted by label values (scope and window in enum order, categories in the
/// page's column order, names bytewise); a family with no sample is left out entirely. Ratios
/// are absent for a label set that held nothing; GPU-hours series show all eight categories.
/// Label values are escaped (\\, \", \n). Deterministic: the same snapshot gives the same bytes.
std::string prometheus_text(const MetricsSnapshot& snapshot);

/// The Content-Type of the exposition.
inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

/// A label value escaped for the text format: backslash, double quote and newline.
std::string escape_label_value(std::string_view v);

}  // namespace astraeus::goodput
