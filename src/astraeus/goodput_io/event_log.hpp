// The goodput event log (docs/formats/goodput-events.md): JSON Lines, one event per line, in
// time order, and its replay through the goodput core: GoodputCounter + GoodputLedger, the
// straggler detector and the alerts, evaluated at every UTC hour boundary the log crosses.
// This is how `astraeus goodput replay` accounts a cluster's log and how the count is tested.
// Owns no files: the caller gives the text or a stream and the name used in messages.
// Thread safety: a Replayer is not thread-safe; parse_event is a pure function.
#pragma once
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/goodput/alerts.hpp"
#include "astraeus/goodput/counter.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/goodput/stragglers.hpp"

namespace astraeus::goodput {

enum class EventKind : std::uint8_t {
    Config, Submit, Place, Start, Stop, Fail, Release, End, Util, Progress
};
/// "config", "submit", "place", "start", "stop", "fail", "release", "end", "util", "progress".
std::string_view to_string(EventKind k);

/// A threshold alert as the log names it (scope by name; resolved by the Replayer).
struct NamedThreshold {
    std::string metric;  ///< e.g. "pool_goodput_hour"
    std::string scope;   ///< a workspace/pool/machine name; empty for the cluster
    Op op = Op::Less;
    double value = 0;
    Seconds for_s = 0;
};

/// The settings a "config" line may give (absent = the default, or the command line's).
struct LogConfig {
    std::optional<Seconds> stall_timeout_s;
    std::optional<double> busy_pct;
    std::optional<Seconds> sample_period_s;  ///< a util sample decides at most 2 periods
    std::optional<Seconds> straggler_window_s;
    std::optional<double> straggler_ratio;
    std::optional<double> drop_below_pct;      ///< goodput_drop: the hour under this percent
    std::optional<double> drop_points;         ///< ... at least this many points under the day
    std::optional<double> drop_min_gpu_hours;  ///< ... with at least this much held
    std::vector<NamedThreshold> thresholds;
};

/// One parsed line. Fields not used by `kind` keep their defaults.
struct Event {
    EventKind kind = EventKind::Config;
    Seconds t = 0;                   ///< absent only on a config line (then 0)
    bool has_t = false;
    std::string run;
    std::optional<int> worker;       ///< absent = every worker of the run
    // submit
    std::string workspace, pool;
    int workers = 1;
    int gpus = 0;
    // place: parts by machine name; gpus 0 = the run's per-worker GPUs
    struct Part {
        std::string machine;
        int gpus = 0;
    };
    std::vector<Part> parts;
    // stop
    Cause reason = Cause::Owner;
    // util: NaN for a null sample
    std::vector<double> gpus_pct;
    // progress
    std::int64_t step = 0;
    // config
    LogConfig config;
};

/// One line of the log parsed and checked on its own (valid JSON without duplicate keys, the
/// field set of its kind, types and ranges: a run asks for at most 2^20 GPUs, workers x gpus);
/// errors say which field and what was expected, without file or line. Never throws.
Result<Event> parse_event(std::string_view line);

/// Settings given on the command line: they win over the log's config line.
struct ReplayOptions {
    std::optional<Seconds> stall_timeout_s;
    std::optional<double> busy_pct;
    /// Account up to this time: events after it are not applied, and runs still going are
    /// counted up to it. Default: the last event's time.
    std::optional<Seconds> end_s;
};

/// A transition of an alert during the replay, with names resolved.
struct AlertRecord {
    Seconds at_s;         ///< the evaluation (an hour boundary)
    std::string alert;    ///< "goodput_drop" or the metric name
    std::string scope;    ///< "workspace", "pool", "machine" or "cluster"
    std::string name;     ///< the scope's name ("" for the cluster)
    std::string state;    ///< "pending", "firing" or "resolved"
    double value = 0;     ///< the metric's value (drop: the hour's goodput)
    std::optional<double> previous;   ///< drop: the goodput of the 24 hours before
    std::optional<std::string> op;    ///< threshold: "<" or ">"
    std::optional<double> threshold;  ///< threshold: the rule's value
};

/// Applies events in order. Use: apply() each event, then finish(); then read the ledger and
/// the names. Alerts are evaluated at every UTC hour boundary from the first event to the end
/// while workers are going and for 26 hours after the last one ended (the windows they look at
/// are empty after that: a quiet gap is skipped to its last hour boundary). Cost: O(events +
/// hour boundaries x (workers + ledger rows)).
class Replayer {
public:
    explicit Replayer(ReplayOptions options = {});
    Replayer(const Replayer&) = delete;
    Replayer& operator=(const Replayer&) = delete;

    /// Applies one event; an error (without file or line) when it is out of time order, names
    /// an unknown or already-submitted run, a worker outside the gang, a move the worker's
    /// state does not allow, or a util event with more values than the worker's GPUs (those of
    /// its last placement, else its run's per-worker GPUs). Events after options.end_s are
    /// skipped (Ok).
    Result<void> apply(const Event& e);
    /// Counts everything up to options.end_s or the last event's time, evaluating the alerts at
    /// the hour boundaries up to it. Call once, after the last apply. Ok on an empty log.
    Result<void> finish();

    const GoodputLedger& ledger() const { return ledger_; }
    /// The counter (absent before the first non-config event).
    const GoodputCounter* counter() const { return counter_.get(); }
    const StragglerDetector& stragglers() const { return stragglers_; }

    /// Names by id (ids in order of first appearance in the log).
    const std::vector<std::string>& run_names() const { return runs_; }
    const std::vector<std::string>& workspace_names() const { return workspaces_; }
    const std::vector<std::string>& pool_names() const { return pools_; }
    const std::vector<std::string>& machine_names() const { return machines_; }
    const std::vector<std::string>& names(By by) const;
    /// The run's id, or -1.
    int run_id(std::string_view name) const;

    bool empty() const { return !first_s_.has_value(); }
    Seconds first_s() const { return first_s_.value_or(0); }  ///< the first event's time
    Seconds end_s() const { return end_s_; }                   ///< valid after finish()

    const std::vector<AlertRecord>& alert_log() const { return alert_log_; }
    /// Runs (ids) with a straggler at end_s().
    std::vector<int> runs_with_straggler() const;
    /// Their straggling workers (index in the gang), for runs_with_straggler()'s runs.
    std::vector<int> stragglers_of(int run) const;
    std::int64_t invalid_samples() const { return counter_ ? counter_->invalid_samples() : 0; }
    /// Where the first rejected samples were ("FILE:LINE", at most kRejectedWhereMax, in order),
    /// as noted by replay_stream (empty when the events came another way).
    static constexpr std::size_t kRejectedWhereMax = 5;
    const std::vector<std::string>& rejected_sample_where() const { return rejected_where_; }
    /// Notes that the event at `where` ("FILE:LINE") had a rejected sample (replay_stream).
    void note_rejected_sample(std::string where) {
        if (rejected_where_.size() < kRejectedWhereMax) rejected_where_.push_back(std::move(where));
    }
    /// Running GPU-seconds neither a sample nor progress decided (counted idle).
    GpuSeconds unmeasured_gpu_s() const { return counter_ ? counter_->unmeasured_gpu_s() : 0; }

private:
    struct RunInfo {
        int first_worker;  ///< the counter's id of worker 0
        int workers;
        int gpus;
        int workspace;
        int pool;
    };
    Result<void> setup();
    Result<void> apply_to(const Event& e);
    Result<void> hours_to(Seconds t);
    void evaluate(Seconds at);
    static int intern(std::vector<std::string>& names, const std::string& name);

    ReplayOptions opt_;
    LogConfig log_config_;
    bool configured_ = false;
    GoodputLedger ledger_;
    std::unique_ptr<GoodputCounter> counter_;
    StragglerDetector stragglers_;
    std::unique_ptr<AlertEngine> alerts_;
    std::vector<std::string> runs_, workspaces_, pools_, machines_;
    std::vector<RunInfo> info_;
    std::vector<std::string> rejected_where_;  ///< see rejected_sample_where()
    std::vector<int> held_gpus_;  ///< by counter worker id: GPUs of its last placement (0: none)
    std::optional<Seconds> first_s_;
    Seconds last_t_ = 0;
    Seconds next_hour_ = 0;  ///< the next hour boundary to evaluate
    int going_ = 0;          ///< workers submitted and not ended
    Seconds quiet_since_ = 0;  ///< when going_ last became 0
    Seconds busy_since_ = 0;   ///< when going_ last became > 0 (at most 800 days ago)
    Seconds end_s_ = 0;
    bool done_ = false;
    std::vector<AlertRecord> alert_log_;
};

/// Reads a whole log from `in` (named `file` in messages) into `replayer` and finishes it.
/// Errors are "FILE:LINE: message" ("FILE: message" for the whole log: "no events" when it has
/// no line but a config line, and an error when every event is after options.end_s). Blank
/// lines are skipped. Never throws on bad input (every JSON exception becomes an error).
Result<void> replay_stream(std::istream& in, std::string_view file, Replayer& replayer);

}  // namespace astraeus::goodput
