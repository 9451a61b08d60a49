// Goodput alerts (spec/goodput.md, "Alerts"; the page's "Alerts on goodput"):
//  - goodput_drop, for each workspace and each pool: fires when its goodput over the last
//    complete UTC hour is under `below` (50 %), at least `points` (20 points) under its goodput
//    over the 24 hours before that hour, with at least `min_held_gpu_s` (one GPU-hour) held in
//    that hour. No goodput the day before (nothing held) = no drop. It fires at once (no
//    pending state) and resolves at the first evaluation where the rule no longer holds.
//  - threshold alerts set by cluster operators: a metric of one scope (below), an operator
//    < or >, a value and an optional `for` duration: pending while the condition holds for less
//    than `for`, firing once it has held that long, resolved when it stops holding after firing
//    (a pending alert whose condition clears is dropped without a transition).
//
// Threshold metrics (the names of the Prometheus gauges of the spec, in short):
//   <scope>_goodput_hour  productive / held over the UTC hour that contains now - 1 s, up to now
//                         (at an hour boundary: the hour just completed; the gauge's "current
//                         hour" otherwise), scope = cluster | workspace | pool | machine
//   <scope>_goodput_day   the same over the 24 hours ending with that hour
//   workers_stalled       workers stalled now, of a workspace (or the cluster: no scope name)
//   runs_with_straggler   runs with a straggler now, of a workspace (or the cluster)
// A goodput is absent when nothing was held: its condition is then false.
//
// Use: build an AlertEngine with the cluster's config, then call evaluate(now, ledger, live)
// each minute (the service) or at each hour boundary (replay, the simulator), with times never
// going back. It returns the transitions of that evaluation; alerts() lists the pending and
// firing ones (the goodput views list them first), firing_by_metric() feeds
// astraeus_threshold_alerts_firing{metric}. Scopes are the ledger's ids (workspace, pool and
// machine ids; names belong to the shell). Cost of evaluate(): a few GoodputLedger::query
// calls (4 for goodput_drop, at most 8 for the rules), each O(the ledger's rows); goodput_drop's
// answer only changes at hour boundaries, so evaluating each minute just repeats it. Pure and
// deterministic. Thread safety: not thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/goodput/ledger.hpp"

namespace astraeus::goodput {

/// The goodput_drop thresholds (cluster config).
struct DropConfig {
    double below = 0.50;                ///< the hour's goodput is under this
    double points = 0.20;               ///< ... and at least this much under the day before's
    GpuSeconds min_held_gpu_s = 3600;   ///< ... with at least this much held in the hour
};

enum class ScopeKind : std::uint8_t { Cluster, Workspace, Pool, Machine };
std::string_view to_string(ScopeKind k);  ///< "cluster", "workspace", "pool", "machine"

enum class Metric : std::uint8_t { GoodputHour, GoodputDay, WorkersStalled, RunsWithStraggler };

/// A metric name as operators write it, split: "pool_goodput_hour" -> (GoodputHour, Pool);
/// "workers_stalled" -> (WorkersStalled, Workspace). An error listing the valid names otherwise.
struct MetricName {
    Metric metric;
    ScopeKind scope;
};
Result<MetricName> parse_metric(std::string_view name);

enum class Op : std::uint8_t { Less, Greater };
/// "<" or ">"; an error otherwise.
Result<Op> parse_op(std::string_view op);
std::string_view to_string(Op op);

/// An operator's threshold alert. `metric` is the name as written ("pool_goodput_hour");
/// `scope_id` the workspace/pool/machine id, or -1 for the cluster (workers_stalled and
/// runs_with_straggler: -1 = the whole cluster, else a workspace id).
struct ThresholdRule {
    std::string metric;
    MetricName what;
    int scope_id = -1;
    Op op = Op::Less;
    double value = 0;
    Seconds for_s = 0;
};

/// What the caller knows now besides the ledger: counts per workspace id (missing = 0).
struct LiveCounts {
    std::vector<int> stalled_workers;       ///< [workspace] workers stalled now
    std::vector<int> runs_with_straggler;   ///< [workspace] runs with a straggler now
};

enum class AlertState : std::uint8_t { Pending, Firing, Resolved };
std::string_view to_string(AlertState s);  ///< "pending", "firing", "resolved"

struct Alert {
    /// -1: goodput_drop; else the index of its rule in the engine's rules.
    int rule = -1;
    ScopeKind scope = ScopeKind::Cluster;
    int scope_id = -1;
    AlertState state = AlertState::Pending;
    Seconds since = 0;   ///< when it entered `state`
    /// The metric's value at the last evaluation (drop: the hour's goodput); for a resolved
    /// alert the value at resolution (the last firing value only when the metric has no value
    /// then, e.g. a workspace with no GPU time in the window).
    double value = 0;
    /// goodput_drop only: the goodput of the 24 hours before the hour.
    double previous = 0;
};

class AlertEngine {
public:
    AlertEngine(DropConfig drop, std::vector<ThresholdRule> rules);

    /// Evaluates every alert at `now` (not before the last evaluation) and returns the
    /// transitions: alerts that became pending, firing or resolved, in that state.
    std::vector<Alert> evaluate(Seconds now, const GoodputLedger& ledger, const LiveCounts& live);

    /// Pending and firing alerts: goodput_drop first (workspaces, then pools, by id), then
    /// threshold alerts in rule order.
    const std::vector<Alert>& alerts() const { return active_; }
    /// Firing threshold alerts per metric name (every rule's metric present, 0 when none).
    std::map<std::string, int> firing_by_metric() const;
    const std::vector<ThresholdRule>& rules() const { return rules_; }
    const DropConfig& drop_config() const { return drop_; }
    /// "goodput_drop" or the rule's metric name.
    std::string_view name_of(const Alert& a) const;

private:
    DropConfig drop_;
    std::vector<ThresholdRule> rules_;
    std::vector<Alert> active_;
};

}  // namespace astraeus::goodput
