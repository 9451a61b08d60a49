#include "astraeus/goodput_io/event_log.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "astraeus/goodput/calendar.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"

namespace astraeus::goodput {

namespace {
using nlohmann::json;

constexpr std::array<std::string_view, 10> kKinds{"config", "submit", "place",   "start", "stop",
                                                  "fail",   "release", "end", "util",  "progress"};

std::string got(const json& v) {
    // The parser only accepts valid UTF-8, so dump() does not throw; cut at a character
    // boundary so that the message stays valid UTF-8.
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > 60) {
        std::size_t cut = 57;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
        s = s.substr(0, cut) + "...";
    }
    return s;
}

// The bounds of the log's fields (docs/formats/goodput-events.md states them).
constexpr std::int64_t kMaxGpus = std::int64_t{1} << 20;  // per run: workers x gpus
constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr Seconds kMaxTime = 253402300799;  // 9999-12-31T23:59:59Z
// Runs go without a break for at most two retention periods (800 days): the count walks every
// minute and hour boundary while workers are going, so one event decades later (a wrong clock,
// or a hostile log) would spin for minutes on a few lines. Quiet gaps cost nothing and are not
// bounded. Any 400-day period can still be shown (--start).
constexpr Seconds kMaxBusySpan = 2 * kRetention;

std::string span_error(const char* what, Seconds t, Seconds busy_since) {
    return std::string(what) + " " + format_rfc3339(t) + " is more than 800 days after " +
           format_rfc3339(busy_since) +
           ", since when runs have been going without a break (at most 800 days: replay the log in parts)";
}

std::unexpected<Error> bad(std::string_view field, std::string_view expected, const json& v) {
    std::string m = "field '";
    m += field;
    m += "': expected ";
    m += expected;
    m += ", got ";
    m += got(v);
    return fail(std::move(m));
}

// The fields each kind allows (besides "t" and "event").
std::vector<std::string_view> allowed(EventKind k) {
    switch (k) {
        case EventKind::Config:
            return {"stall_timeout_s", "busy_pct",    "sample_period_s", "straggler_window_s", "straggler_ratio",
                    "drop_below_pct",  "drop_points", "drop_min_gpu_hours", "thresholds"};
        case EventKind::Submit: return {"run", "workspace", "pool", "workers", "gpus"};
        case EventKind::Place: return {"run", "worker", "machine", "gpus", "parts"};
        case EventKind::Stop: return {"run", "worker", "reason"};
        case EventKind::Util: return {"run", "worker", "gpus_pct"};
        case EventKind::Progress: return {"run", "worker", "step"};
        default: return {"run", "worker"};
    }
}

Result<std::int64_t> integer(const json& o, std::string_view key, std::int64_t lo,
                             std::int64_t hi, std::string_view expected) {
    const json& v = o.at(std::string(key));
    if (v.is_number_integer()) {
        if (v.is_number_unsigned() && v.get<std::uint64_t>() >
                                          static_cast<std::uint64_t>(
                                              std::numeric_limits<std::int64_t>::max()))
            return bad(key, expected, v);
        const auto x = v.get<std::int64_t>();
        if (x >= lo && x <= hi) return x;
    }
    return bad(key, expected, v);
}

Result<double> number(const json& o, std::string_view key, double lo, double hi,
                      std::string_view expected) {
    const json& v = o.at(std::string(key));
    if (v.is_number()) {
        const auto x = v.get<double>();
        if (std::isfinite(x) && x >= lo && x <= hi) return x;
    }
    return bad(key, expected, v);
}

Result<std::string> name(const json& o, std::string_view key) {
    const json& v = o.at(std::string(key));
    if (v.is_string() && !v.get<std::string>().empty()) return v.get<std::string>();
    return bad(key, "a non-empty string", v);
}

Result<Seconds> time_of(const json& v) {
    const char* what = "an RFC 3339 time (\"2026-11-02T10:00:30Z\") or integer Unix seconds, "
                       "1970-01-01T00:00:00Z..9999-12-31T23:59:59Z (0..253402300799)";
    if (v.is_string()) {
        auto t = parse_rfc3339(v.get<std::string>());
        if (!t) return fail("field 't': " + t.error().message);
        if (*t < 0 || *t > kMaxTime) return bad("t", what, v);
        return *t;
    }
    if (v.is_number_unsigned()) {
        if (v.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMaxTime))
            return static_cast<Seconds>(v.get<std::uint64_t>());
    } else if (v.is_number_integer()) {
        const auto t = v.get<std::int64_t>();
        if (t >= 0 && t <= kMaxTime) return t;
    }
    return bad("t", what, v);
}

Result<NamedThreshold> threshold(const json& v) {
    if (!v.is_object())
        return bad("thresholds", "objects {\"metric\", \"scope\", \"op\", \"value\", \"for_s\"}",
                   v);
    NamedThreshold t;
    for (const auto& [k, x] : v.items()) {
        if (k != "metric" && k != "scope" && k != "op" && k != "value" && k != "for_s")
            return fail("thresholds: field '" + k +
                        "' is not part of a threshold (expected metric, scope, op, value, for_s)");
    }
    for (const char* k : {"metric", "op", "value"})
        if (!v.contains(k)) return fail(std::string("thresholds: field '") + k + "' is missing");
    auto metric = name(v, "metric");
    if (!metric) return std::unexpected(metric.error());
    if (auto m = parse_metric(*metric); !m) return fail("thresholds: " + m.error().message);
    t.metric = *metric;
    if (v.contains("scope")) {
        const json& s = v.at("scope");
        if (!s.is_string()) return bad("scope", "a workspace, pool or machine name", s);
        t.scope = s.get<std::string>();
    }
    const json& op = v.at("op");
    if (!op.is_string()) return bad("op", "\"<\" or \">\"", op);
    auto o = parse_op(op.get<std::string>());
    if (!o) return bad("op", "\"<\" or \">\"", op);
    t.op = *o;
    auto value = number(v, "value", -1e300, 1e300, "a number -1e300..1e300");
    if (!value) return std::unexpected(value.error());
    t.value = *value;
    if (v.contains("for_s")) {
        auto f = integer(v, "for_s", 0, kMaxInt, "an integer number of seconds 0..2147483647");
        if (!f) return std::unexpected(f.error());
        t.for_s = *f;
    }
    return t;
}

Result<void> parse_config(const json& o, LogConfig& c) {
    if (o.contains("stall_timeout_s")) {
        auto v = integer(o, "stall_timeout_s", 1, kMaxInt, "an integer number of seconds 1..2147483647");
        if (!v) return std::unexpected(v.error());
        c.stall_timeout_s = *v;
    }
    if (o.contains("busy_pct")) {
        auto v = number(o, "busy_pct", 0, 100, "a percent 0..100");
        if (!v) return std::unexpected(v.error());
        c.busy_pct = *v;
    }
    if (o.contains("sample_period_s")) {
        auto v = integer(o, "sample_period_s", 1, kMaxInt, "an integer number of seconds 1..2147483647");
        if (!v) return std::unexpected(v.error());
        c.sample_period_s = *v;
    }
    if (o.contains("straggler_window_s")) {
        auto v = integer(o, "straggler_window_s", 1, kMaxInt,
                         "an integer number of seconds 1..2147483647");
        if (!v) return std::unexpected(v.error());
        c.straggler_window_s = *v;
    }
    if (o.contains("straggler_ratio")) {
        auto v = number(o, "straggler_ratio", 0, 1, "a ratio 0..1");
        if (!v) return std::unexpected(v.error());
        c.straggler_ratio = *v;
    }
    if (o.contains("drop_below_pct")) {
        auto v = number(o, "drop_below_pct", 0, 100, "a percent 0..100");
        if (!v) return std::unexpected(v.error());
        c.drop_below_pct = *v;
    }
    if (o.contains("drop_points")) {
        auto v = number(o, "drop_points", 0, 100, "percentage points 0..100");
        if (!v) return std::unexpected(v.error());
        c.drop_points = *v;
    }
    if (o.contains("drop_min_gpu_hours")) {
        auto v = number(o, "drop_min_gpu_hours", 0, 1e12, "GPU-hours 0..1e12");
        if (!v) return std::unexpected(v.error());
        c.drop_min_gpu_hours = *v;
    }
    if (o.contains("thresholds")) {
        const json& a = o.at("thresholds");
        if (!a.is_array()) return bad("thresholds", "an array of threshold objects", a);
        for (const json& x : a) {
            auto t = threshold(x);
            if (!t) return std::unexpected(t.error());
            c.thresholds.push_back(std::move(*t));
        }
    }
    return {};
}
}  // namespace

std::string_view to_string(EventKind k) { return kKinds[static_cast<int>(k)]; }

namespace {

// nlohmann's message without its "[json.exception.KIND.N] " prefix.
std::string what_of(const json::exception& e) {
    std::string m = e.what();
    if (m.starts_with("[json.exception.")) {
        if (const auto at = m.find("] "); at != std::string::npos) m.erase(0, at + 2);
    }
    return m;
}

// Parses one line into `o`, rejecting duplicate keys (nlohmann keeps the last one silently):
// a parser callback keeps the keys of each open object. Every nlohmann exception becomes an
// error: parse errors, and numbers out of a double's range (1e400: out_of_range 406), which
// name the field whose value they are (the last key seen).
Result<void> parse_line(std::string_view line, json& o) {
    std::vector<std::vector<std::string>> keys;  // one list per open object
    std::string duplicate, last_key;
    const json::parser_callback_t cb = [&](int, json::parse_event_t ev, json& parsed) {
        switch (ev) {
            case json::parse_event_t::object_start: keys.emplace_back(); break;
            case json::parse_event_t::object_end:
                if (!keys.empty()) keys.pop_back();
                break;
            case json::parse_event_t::key:
                if (parsed.is_string() && !keys.empty()) {
                    const auto& k = parsed.get_ref<const std::string&>();
                    last_key = k;
                    auto& open = keys.back();
                    if (std::find(open.begin(), open.end(), k) != open.end()) {
                        if (duplicate.empty()) duplicate = k;
                    } else {
                        open.push_back(k);
                    }
                }
                break;
            default: break;
        }
        return true;
    };
    try {
        o = json::parse(line, cb);
    } catch (const json::parse_error& e) {
        return fail("expected one JSON object per line (invalid JSON at byte " +
                    std::to_string(e.byte) + ")");
    } catch (const json::out_of_range& e) {
        std::string m;
        if (!last_key.empty()) m = "field '" + last_key + "': ";
        m += "a number out of range (";
        m += what_of(e);
        m += "; numbers are at most 1.7976931348623157e308)";
        return fail(std::move(m));
    } catch (const json::exception& e) {
        return fail("expected one JSON object per line (" + what_of(e) + ")");
    }
    if (!duplicate.empty()) return fail("duplicate key '" + duplicate + "'");
    return {};
}

Result<Event> parse_object(const json& o);

}  // namespace

Result<Event> parse_event(std::string_view line) {
    json o;
    if (auto p = parse_line(line, o); !p) return std::unexpected(p.error());
    try {
        return parse_object(o);
    } catch (const json::exception& e) {
        // Every access is checked before it is made; this is a safety net, not a path.
        return fail("unexpected JSON value (" + what_of(e) + ")");
    }
}

namespace {

Result<Event> parse_object(const json& o) {
    if (!o.is_object()) return fail("expected a JSON object, got " + got(o));
    if (!o.contains("event"))
        return fail("field 'event' is missing (expected config, submit, place, start, stop, "
                    "fail, release, end, util or progress)");
    const json& ev = o.at("event");
    Event e;
    {
        const auto it = ev.is_string() ? std::find(kKinds.begin(), kKinds.end(),
                                                    ev.get<std::string>())
                                       : kKinds.end();
        if (it == kKinds.end())
            return bad("event",
                       "config, submit, place, start, stop, fail, release, end, util or progress",
                       ev);
        e.kind = static_cast<EventKind>(it - kKinds.begin());
    }
    const auto ok_fields = allowed(e.kind);
    for (const auto& [k, v] : o.items()) {
        if (k == "t" || k == "event") continue;
        if (std::find(ok_fields.begin(), ok_fields.end(), k) == ok_fields.end()) {
            std::string list;
            for (auto f : ok_fields) {
                if (!list.empty()) list += ", ";
                list += f;
            }
            return fail("field '" + k + "' is not part of a '" + std::string(to_string(e.kind)) +
                        "' event (expected t, event, " + list + ")");
        }
    }
    if (o.contains("t")) {
        auto t = time_of(o.at("t"));
        if (!t) return std::unexpected(t.error());
        e.t = *t;
        e.has_t = true;
    } else if (e.kind != EventKind::Config) {
        return fail("field 't' is missing (expected an RFC 3339 time or integer Unix seconds)");
    }
    if (e.kind == EventKind::Config) {
        if (auto c = parse_config(o, e.config); !c) return std::unexpected(c.error());
        return e;
    }

    auto need = [&](std::string_view key) -> Result<void> {
        if (!o.contains(std::string(key)))
            return fail("field '" + std::string(key) + "' is missing (a '" +
                        std::string(to_string(e.kind)) + "' event needs it)");
        return {};
    };
    if (auto n = need("run"); !n) return std::unexpected(n.error());
    auto run = name(o, "run");
    if (!run) return std::unexpected(run.error());
    e.run = std::move(*run);
    if (e.kind == EventKind::Util || e.kind == EventKind::Progress)
        if (auto n = need("worker"); !n) return std::unexpected(n.error());
    if (o.contains("worker")) {
        auto w = integer(o, "worker", 0, kMaxGpus - 1, "a worker index 0..1048575");
        if (!w) return std::unexpected(w.error());
        e.worker = static_cast<int>(*w);
    }

    switch (e.kind) {
        case EventKind::Submit: {
            for (const char* k : {"workspace", "pool", "gpus"})
                if (auto n = need(k); !n) return std::unexpected(n.error());
            auto ws = name(o, "workspace");
            if (!ws) return std::unexpected(ws.error());
            auto pool = name(o, "pool");
            if (!pool) return std::unexpected(pool.error());
            e.workspace = std::move(*ws);
            e.pool = std::move(*pool);
            auto g = integer(o, "gpus", 1, kMaxGpus, "GPUs per worker, an integer 1..1048576");
            if (!g) return std::unexpected(g.error());
            e.gpus = static_cast<int>(*g);
            if (o.contains("workers")) {
                auto w = integer(o, "workers", 1, kMaxGpus, "the gang size, an integer 1..1048576");
                if (!w) return std::unexpected(w.error());
                e.workers = static_cast<int>(*w);
            }
            // A run asks for at most 2^20 GPUs: this bounds the replay's work per event and
            // keeps GPU-seconds far from int64 overflow.
            if (const std::int64_t all = std::int64_t{e.workers} * e.gpus; all > kMaxGpus) {
                std::string m = "a run asks for at most 1048576 GPUs: workers x gpus = ";
                m += std::to_string(e.workers);
                m += " x ";
                m += std::to_string(e.gpus);
                m += " = ";
                m += std::to_string(all);
                m += " is over 1048576";
                return fail(std::move(m));
            }
            break;
        }
        case EventKind::Place: {
            const bool has_machine = o.contains("machine"), has_parts = o.contains("parts");
            if (has_machine == has_parts)
                return fail("a 'place' event needs either 'machine' (with optional 'gpus') or "
                            "'parts', not both and not neither");
            if (has_machine) {
                auto m = name(o, "machine");
                if (!m) return std::unexpected(m.error());
                Event::Part p{std::move(*m), 0};
                if (o.contains("gpus")) {
                    auto g = integer(o, "gpus", 1, kMaxGpus, "GPUs held, an integer 1..1048576");
                    if (!g) return std::unexpected(g.error());
                    p.gpus = static_cast<int>(*g);
                }
                e.parts.push_back(std::move(p));
            } else {
                if (o.contains("gpus"))
                    return fail("field 'gpus' goes inside each of 'parts' when 'parts' is given");
                const json& a = o.at("parts");
                const char* what = "a non-empty array of {\"machine\": name, \"gpus\": 1..1048576}";
                if (!a.is_array() || a.empty()) return bad("parts", what, a);
                std::int64_t held = 0;
                for (const json& x : a) {
                    if (!x.is_object() || x.size() != 2 || !x.contains("machine") ||
                        !x.contains("gpus"))
                        return bad("parts", what, x);
                    auto m = name(x, "machine");
                    if (!m) return std::unexpected(m.error());
                    auto g = integer(x, "gpus", 1, kMaxGpus, "GPUs held, an integer 1..1048576");
                    if (!g) return std::unexpected(g.error());
                    held += *g;
                    if (held > kMaxGpus)
                        return fail("field 'parts': a worker holds at most 1048576 GPUs, the parts "
                                    "hold over that");
                    e.parts.push_back({std::move(*m), static_cast<int>(*g)});
                }
            }
            break;
        }
        case EventKind::Stop: {
            if (auto n = need("reason"); !n) return std::unexpected(n.error());
            const json& r = o.at("reason");
            const std::string s = r.is_string() ? r.get<std::string>() : "";
            if (s == "owner") e.reason = Cause::Owner;
            else if (s == "stall") e.reason = Cause::Stall;
            else if (s == "preemption") e.reason = Cause::Preemption;
            else return bad("reason", "owner, stall or preemption", r);
            break;
        }
        case EventKind::Util: {
            if (auto n = need("gpus_pct"); !n) return std::unexpected(n.error());
            const json& a = o.at("gpus_pct");
            const char* what = "a non-empty array of percents (numbers, or null for no value)";
            if (!a.is_array() || a.empty()) return bad("gpus_pct", what, a);
            for (const json& x : a) {
                if (x.is_null()) e.gpus_pct.push_back(std::numeric_limits<double>::quiet_NaN());
                else if (x.is_number()) e.gpus_pct.push_back(x.get<double>());
                else return bad("gpus_pct", what, x);
            }
            break;
        }
        case EventKind::Progress: {
            if (auto n = need("step"); !n) return std::unexpected(n.error());
            auto s = integer(o, "step", std::numeric_limits<std::int64_t>::min(),
                             std::numeric_limits<std::int64_t>::max(), "an integer step count, -2^63..2^63-1");
            if (!s) return std::unexpected(s.error());
            e.step = *s;
            break;
        }
        default: break;
    }
    return e;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Replayer::Replayer(ReplayOptions options) : opt_(options) {}

int Replayer::intern(std::vector<std::string>& names, const std::string& n) {
    const auto it = std::find(names.begin(), names.end(), n);
    if (it != names.end()) return static_cast<int>(it - names.begin());
    names.push_back(n);
    return static_cast<int>(names.size()) - 1;
}

const std::vector<std::string>& Replayer::names(By by) const {
    switch (by) {
        case By::Workspace: return workspaces_;
        case By::Run: return runs_;
        case By::Machine: return machines_;
        case By::Pool: return pools_;
    }
    return runs_;
}

int Replayer::run_id(std::string_view n) const {
    const auto it = std::find(runs_.begin(), runs_.end(), n);
    return it == runs_.end() ? -1 : static_cast<int>(it - runs_.begin());
}

Result<void> Replayer::setup() {
    configured_ = true;
    const LogConfig& c = log_config_;
    CounterConfig cc;
    if (c.stall_timeout_s) cc.stall_timeout_s = *c.stall_timeout_s;
    if (c.busy_pct) cc.busy_pct = *c.busy_pct;
    cc.sample_period_s = c.sample_period_s.value_or(kMinute);  // the format's one sample a minute
    if (opt_.stall_timeout_s) cc.stall_timeout_s = *opt_.stall_timeout_s;
    if (opt_.busy_pct) cc.busy_pct = *opt_.busy_pct;
    counter_ = std::make_unique<GoodputCounter>(cc, ledger_);
    StragglerConfig sc;
    if (c.straggler_window_s) sc.window_s = *c.straggler_window_s;
    if (c.straggler_ratio) sc.ratio = *c.straggler_ratio;
    stragglers_ = StragglerDetector(sc);
    DropConfig dc;
    if (c.drop_below_pct) dc.below = *c.drop_below_pct / 100.0;
    if (c.drop_points) dc.points = *c.drop_points / 100.0;
    if (c.drop_min_gpu_hours)
        dc.min_held_gpu_s = static_cast<GpuSeconds>(std::llround(*c.drop_min_gpu_hours * 3600.0));
    std::vector<ThresholdRule> rules;
    for (const NamedThreshold& t : c.thresholds) {
        ThresholdRule r;
        r.metric = t.metric;
        r.what = *parse_metric(t.metric);  // checked when the line was parsed
        r.op = t.op;
        r.value = t.value;
        r.for_s = t.for_s;
        // Scope names are interned now so that later runs, pools and machines get the same ids.
        if (!t.scope.empty()) {
            switch (r.what.scope) {
                case ScopeKind::Workspace: r.scope_id = intern(workspaces_, t.scope); break;
                case ScopeKind::Pool: r.scope_id = intern(pools_, t.scope); break;
                case ScopeKind::Machine: r.scope_id = intern(machines_, t.scope); break;
                case ScopeKind::Cluster: break;
            }
        } else if (r.what.scope == ScopeKind::Pool || r.what.scope == ScopeKind::Machine ||
                   (r.what.scope == ScopeKind::Workspace &&
                    (r.what.metric == Metric::GoodputHour ||
                     r.what.metric == Metric::GoodputDay))) {
            return fail("thresholds: metric '" + t.metric + "' needs a 'scope' (a " +
                        std::string(to_string(r.what.scope)) + " name)");
        }
        rules.push_back(std::move(r));
    }
    alerts_ = std::make_unique<AlertEngine>(dc, std::move(rules));
    return {};
}

void Replayer::evaluate(Seconds at) {
    LiveCounts live;
    live.stalled_workers.assign(workspaces_.size(), 0);
    live.runs_with_straggler.assign(workspaces_.size(), 0);
    for (int w = 0; w < counter_->workers(); ++w) {
        const WorkerStatus& s = counter_->status(w);
        if (s.phase == Phase::Running && s.stalled)
            ++live.stalled_workers[info_[counter_->run_of(w)].workspace];
    }
    for (int r : stragglers_.runs_with_straggler(at)) ++live.runs_with_straggler[info_[r].workspace];
    for (const Alert& a : alerts_->evaluate(at, ledger_, live)) {
        AlertRecord rec;
        rec.at_s = at;
        rec.alert = std::string(alerts_->name_of(a));
        rec.scope = std::string(to_string(a.scope));
        switch (a.scope) {
            case ScopeKind::Workspace: rec.name = workspaces_[a.scope_id]; break;
            case ScopeKind::Pool: rec.name = pools_[a.scope_id]; break;
            case ScopeKind::Machine: rec.name = machines_[a.scope_id]; break;
            case ScopeKind::Cluster: break;
        }
        rec.state = std::string(to_string(a.state));
        rec.value = a.value;
        if (a.rule < 0) {
            rec.previous = a.previous;
        } else {
            const ThresholdRule& r = alerts_->rules()[a.rule];
            rec.op = std::string(to_string(r.op));
            rec.threshold = r.value;
        }
        alert_log_.push_back(std::move(rec));
    }
}

Result<void> Replayer::hours_to(Seconds t) {
    for (; next_hour_ <= t; next_hour_ += kHour) {
        // With no worker going for over 26 hours, every window an alert looks at is empty and
        // every evaluation until t gives the same answer: go to the last boundary <= t (a log
        // with a long quiet gap costs no hour-by-hour loop).
        if (going_ == 0 && next_hour_ > quiet_since_ + 26 * kHour)
            next_hour_ = std::max(next_hour_, hour_start(t));
        counter_->advance(next_hour_);
        evaluate(next_hour_);
    }
    return {};
}

Result<void> Replayer::apply(const Event& e) {
    if (done_) return fail("the replay has finished");
    if (e.kind == EventKind::Config) {
        if (first_s_ || configured_)
            return fail("a 'config' line must come first, before every other event, and once");
        log_config_ = e.config;
        configured_ = true;  // set up at the first event
        return {};
    }
    if (!counter_) {
        if (auto s = setup(); !s) return s;
    }
    if (first_s_ && e.t < last_t_)
        return fail("time " + format_rfc3339(e.t) + " is before the previous event's time " +
                    format_rfc3339(last_t_) + " (events must be in time order)");
    if (opt_.end_s && e.t > *opt_.end_s) {
        last_t_ = e.t;
        return {};  // after the end of the accounting: not applied
    }
    if (!first_s_) {
        first_s_ = e.t;
        next_hour_ = hour_start(e.t) + kHour;
    }
    if (going_ > 0 && e.t - busy_since_ > kMaxBusySpan) return fail(span_error("time", e.t, busy_since_));
    last_t_ = e.t;
    if (auto h = hours_to(e.t); !h) return h;
    return apply_to(e);
}

Result<void> Replayer::apply_to(const Event& e) {
    if (e.kind == EventKind::Submit) {
        if (run_id(e.run) >= 0) return fail("run '" + e.run + "' was already submitted");
        const int run = intern(runs_, e.run);
        RunInfo info;
        info.workspace = intern(workspaces_, e.workspace);
        info.pool = intern(pools_, e.pool);
        info.workers = e.workers;
        info.gpus = e.gpus;
        info.first_worker = counter_->workers();
        ledger_.set_run(run, info.workspace, info.pool);
        for (int w = 0; w < e.workers; ++w) counter_->add_worker(e.t, run, e.gpus);
        held_gpus_.resize(static_cast<std::size_t>(counter_->workers()), 0);
        if (going_ == 0) busy_since_ = e.t;
        going_ += e.workers;
        stragglers_.set_gang(run, e.workers);
        info_.push_back(info);
        return {};
    }
    const int run = run_id(e.run);
    if (run < 0) return fail("run '" + e.run + "' has not been submitted");
    const RunInfo& info = info_[run];
    if (e.worker && *e.worker >= info.workers)
        return fail("field 'worker': run '" + e.run + "' has workers 0.." +
                    std::to_string(info.workers - 1) + ", got " + std::to_string(*e.worker));
    const int from = e.worker ? *e.worker : 0;
    const int to = e.worker ? *e.worker + 1 : info.workers;
    std::vector<HeldPart> parts;
    int placed_gpus = 0;  // at most 2^20 (parse_event)
    for (const auto& p : e.parts) {
        parts.push_back({intern(machines_, p.machine), p.gpus > 0 ? p.gpus : info.gpus});
        placed_gpus += parts.back().gpus;
    }
    for (int w = from; w < to && e.kind == EventKind::Util; ++w) {
        // One value per GPU: more values than the worker's GPUs (those it holds once placed,
        // else those its run asks for) is a mistake in the log; fewer is fine.
        const int id = info.first_worker + w;
        const int gpus = held_gpus_[static_cast<std::size_t>(id)] > 0
                             ? held_gpus_[static_cast<std::size_t>(id)]
                             : info.gpus;
        if (e.gpus_pct.size() > static_cast<std::size_t>(gpus)) {
            std::string m = "field 'gpus_pct': ";
            m += std::to_string(e.gpus_pct.size());
            m += " values, but run '";
            m += e.run;
            m += "' worker ";
            m += std::to_string(w);
            m += " has ";
            m += std::to_string(gpus);
            m += gpus == 1 ? " GPU" : " GPUs";
            m += " (at most one value per GPU)";
            return fail(std::move(m));
        }
    }
    for (int w = from; w < to; ++w) {
        const int id = info.first_worker + w;
        Result<void> r;
        switch (e.kind) {
            case EventKind::Place:
                r = counter_->place(e.t, id, parts);
                if (r) held_gpus_[static_cast<std::size_t>(id)] = placed_gpus;
                break;
            case EventKind::Start: r = counter_->start(e.t, id); break;
            case EventKind::Stop: r = counter_->stop(e.t, id, e.reason); break;
            case EventKind::Fail: r = counter_->fail(e.t, id); break;
            case EventKind::Release: r = counter_->release(e.t, id); break;
            case EventKind::End:
                if (!e.worker && counter_->status(id).phase == Phase::Ended) continue;
                r = counter_->end(e.t, id);
                if (r && --going_ == 0) quiet_since_ = e.t;
                break;
            case EventKind::Util: r = counter_->utilization(e.t, id, e.gpus_pct); break;
            case EventKind::Progress:
                r = counter_->progress(e.t, id, e.step);
                if (r && counter_->status(id).phase == Phase::Running)
                    stragglers_.progress(run, w, e.t, e.step);
                break;
            default: break;
        }
        if (!r) {
            // The counter names its own worker id; say which run's worker it is.
            std::string m = r.error().message;
            std::string raw = "worker ";
            raw += std::to_string(id);
            std::string nice = "run '";
            nice += e.run;
            nice += "' worker ";
            nice += std::to_string(w);
            if (const auto at = m.find(raw); at != std::string::npos) m.replace(at, raw.size(), nice);
            std::string msg = "'";
            msg += to_string(e.kind);
            msg += "' event: ";
            msg += m;
            return fail(std::move(msg));
        }
        if (e.kind != EventKind::Util && e.kind != EventKind::Progress)
            stragglers_.reset(run, w);  // a lifecycle move: a new attempt's progress from here
    }
    return {};
}

Result<void> Replayer::finish() {
    if (done_) return fail("the replay has finished");
    done_ = true;
    if (!counter_) {
        if (auto s = setup(); !s) return s;
    }
    if (!first_s_) {
        end_s_ = opt_.end_s.value_or(0);
        return {};
    }
    end_s_ = opt_.end_s.value_or(last_t_);
    if (end_s_ < *first_s_)
        return fail("the end " + format_rfc3339(end_s_) + " is before the first event at " +
                    format_rfc3339(*first_s_));
    if (going_ > 0 && end_s_ - busy_since_ > kMaxBusySpan)
        return fail(span_error("the end", end_s_, busy_since_));
    if (auto h = hours_to(end_s_); !h) return h;
    counter_->advance(end_s_);
    return {};
}

std::vector<int> Replayer::runs_with_straggler() const {
    return stragglers_.runs_with_straggler(end_s_);
}

std::vector<int> Replayer::stragglers_of(int run) const {
    return stragglers_.stragglers(run, end_s_);
}

Result<void> replay_stream(std::istream& in, std::string_view file, Replayer& replayer) {
    std::string line;
    long n = 0;
    long events = 0;          // lines other than config
    Seconds first_t = 0;  // the first event's time
    auto where = [&] {
        std::string w(file);
        w += ':';
        w += std::to_string(n);
        w += ": ";
        return w;
    };
    while (std::getline(in, line)) {
        ++n;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        auto e = parse_event(line);
        if (!e) return fail(where() + e.error().message);
        if (e->kind != EventKind::Config && events++ == 0) first_t = e->t;
        const std::int64_t rejected = replayer.invalid_samples();
        if (auto r = replayer.apply(*e); !r) return fail(where() + r.error().message);
        if (replayer.invalid_samples() > rejected)
            replayer.note_rejected_sample(std::string(file) + ':' + std::to_string(n));
    }
    if (in.bad()) return fail(std::string(file) + ": read error");
    auto whole = [&](std::string_view message) {
        std::string m(file);
        m += ": ";
        m += message;
        return fail(std::move(m));
    };
    if (!events) return whole("no events");
    if (auto r = replayer.finish(); !r) return whole(r.error().message);
    if (replayer.empty())
        return whole("no events at or before the end " + format_rfc3339(replayer.end_s()) +
                     " (the first is at " + format_rfc3339(first_t) + ")");
    return {};
}

}  // namespace astraeus::goodput
