#include "astraeus/goodput/alerts.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

namespace astraeus::goodput {

namespace {
// Goodputs are ratios of integers; a difference of two of them is compared with this slack so
// that 70 % - 50 % counts as 20 points (in doubles it is 0.19999999999999996).
constexpr double kSlack = 1e-9;

constexpr std::array<std::string_view, 4> kScopeNames{"cluster", "workspace", "pool", "machine"};

std::optional<double> goodput_of(const Counts& c) { return figures(c).goodput; }

const Counts* find_row(const std::vector<Row>& rows, int id) {
    const auto it = std::lower_bound(rows.begin(), rows.end(), id,
                                     [](const Row& r, int v) { return r.id < v; });
    return it != rows.end() && it->id == id ? &it->counts : nullptr;
}

auto order_key(const Alert& a) { return std::tuple(a.rule, a.scope, a.scope_id); }
}  // namespace

std::string_view to_string(ScopeKind k) { return kScopeNames[static_cast<int>(k)]; }

std::string_view to_string(AlertState s) {
    switch (s) {
        case AlertState::Pending: return "pending";
        case AlertState::Firing: return "firing";
        case AlertState::Resolved: return "resolved";
    }
    return "resolved";
}

std::string_view to_string(Op op) { return op == Op::Less ? "<" : ">"; }

Result<Op> parse_op(std::string_view op) {
    if (op == "<") return Op::Less;
    if (op == ">") return Op::Greater;
    return fail("bad operator '" + std::string(op) + "' (expected < or >)");
}

Result<MetricName> parse_metric(std::string_view name) {
    if (name == "workers_stalled") return MetricName{Metric::WorkersStalled, ScopeKind::Workspace};
    if (name == "runs_with_straggler")
        return MetricName{Metric::RunsWithStraggler, ScopeKind::Workspace};
    for (int k = 0; k < 4; ++k) {
        const std::string prefix = std::string(kScopeNames[k]) + "_goodput_";
        if (name.substr(0, prefix.size()) != prefix) continue;
        const std::string_view window = name.substr(prefix.size());
        if (window == "hour") return MetricName{Metric::GoodputHour, static_cast<ScopeKind>(k)};
        if (window == "day") return MetricName{Metric::GoodputDay, static_cast<ScopeKind>(k)};
    }
    return fail("unknown metric '" + std::string(name) +
                "' (expected cluster|workspace|pool|machine_goodput_hour|day, workers_stalled or "
                "runs_with_straggler)");
}

AlertEngine::AlertEngine(DropConfig drop, std::vector<ThresholdRule> rules)
    : drop_(drop), rules_(std::move(rules)) {}

std::string_view AlertEngine::name_of(const Alert& a) const {
    if (a.rule < 0 || a.rule >= static_cast<int>(rules_.size())) return "goodput_drop";
    return rules_[a.rule].metric;
}

std::map<std::string, int> AlertEngine::firing_by_metric() const {
    std::map<std::string, int> out;
    for (const auto& r : rules_) out[r.metric];
    for (const auto& a : active_)
        if (a.rule >= 0 && a.state == AlertState::Firing) ++out[rules_[a.rule].metric];
    return out;
}

std::vector<Alert> AlertEngine::evaluate(Seconds now, const GoodputLedger& ledger,
                                         const LiveCounts& live) {
    // Every alert whose condition holds now, with its value.
    std::vector<Alert> holding;
    // Every value measured now, held or not: a resolved alert shows the value at resolution.
    std::map<decltype(order_key(Alert{})), std::pair<double, double>> measured;

    // goodput_drop: the last complete hour against the 24 hours before it.
    const Seconds hour = hour_start(now) - kHour;
    const Period hour_p{hour, hour + kHour};
    const Period day_p{hour - 24 * kHour, hour};
    for (const By by : {By::Workspace, By::Pool}) {
        const auto in_hour = ledger.query(by, hour_p);
        const auto in_day = ledger.query(by, day_p);
        for (const Row& r : in_hour) {
            const Figures f = figures(r.counts);
            if (!f.goodput || f.allocated < drop_.min_held_gpu_s) continue;
            const Counts* d = find_row(in_day, r.id);
            const auto before = d ? goodput_of(*d) : std::nullopt;
            if (!before) continue;
            {
                Alert m;
                m.scope = by == By::Workspace ? ScopeKind::Workspace : ScopeKind::Pool;
                m.scope_id = r.id;
                measured[order_key(m)] = {*f.goodput, *before};
            }
            if (*f.goodput < drop_.below && *before - *f.goodput >= drop_.points - kSlack) {
                Alert a;
                a.scope = by == By::Workspace ? ScopeKind::Workspace : ScopeKind::Pool;
                a.scope_id = r.id;
                a.value = *f.goodput;
                a.previous = *before;
                holding.push_back(a);
            }
        }
    }

    // Threshold rules. The "hour" window is the UTC hour containing now - 1 s, up to now.
    const Seconds cur = hour_start(now - 1);
    const Period cur_hour{cur, now};
    const Period cur_day{cur - 23 * kHour, now};
    std::map<std::pair<int, bool>, std::vector<Row>> cache;  // (scope kind, day?) -> rows
    auto rows_of = [&](ScopeKind k, bool day) -> const std::vector<Row>& {
        auto [it, fresh] = cache.try_emplace({static_cast<int>(k), day});
        if (fresh) {
            const By by = k == ScopeKind::Workspace ? By::Workspace
                          : k == ScopeKind::Machine ? By::Machine
                                                    : By::Pool;  // cluster = sum over pools
            it->second = ledger.query(by, day ? cur_day : cur_hour);
        }
        return it->second;
    };
    auto live_count = [](const std::vector<int>& v, int id) {
        if (id < 0) {
            int s = 0;
            for (int x : v) s += x;
            return s;
        }
        return id < static_cast<int>(v.size()) ? v[id] : 0;
    };
    for (int i = 0; i < static_cast<int>(rules_.size()); ++i) {
        const ThresholdRule& rule = rules_[i];
        std::optional<double> value;
        ScopeKind scope = rule.what.scope;
        switch (rule.what.metric) {
            case Metric::GoodputHour:
            case Metric::GoodputDay: {
                const auto& rows = rows_of(scope, rule.what.metric == Metric::GoodputDay);
                if (scope == ScopeKind::Cluster) {
                    Counts sum;
                    for (const Row& r : rows) sum += r.counts;
                    value = goodput_of(sum);
                } else if (const Counts* c = find_row(rows, rule.scope_id)) {
                    value = goodput_of(*c);
                }
                break;
            }
            case Metric::WorkersStalled:
                value = live_count(live.stalled_workers, rule.scope_id);
                break;
            case Metric::RunsWithStraggler:
                value = live_count(live.runs_with_straggler, rule.scope_id);
                break;
        }
        if (rule.scope_id < 0 && scope == ScopeKind::Workspace) scope = ScopeKind::Cluster;
        if (!value) continue;
        {
            Alert m;
            m.rule = i;
            m.scope = scope;
            m.scope_id = scope == ScopeKind::Cluster ? -1 : rule.scope_id;
            measured[order_key(m)] = {*value, 0.0};
        }
        const bool holds = rule.op == Op::Less ? *value < rule.value : *value > rule.value;
        if (!holds) continue;
        Alert a;
        a.rule = i;
        a.scope = scope;
        a.scope_id = scope == ScopeKind::Cluster ? -1 : rule.scope_id;
        a.value = *value;
        holding.push_back(a);
    }

    // Transitions.
    std::vector<Alert> changes;
    std::vector<Alert> next;
    for (Alert h : holding) {
        const auto it = std::find_if(active_.begin(), active_.end(), [&](const Alert& a) {
            return order_key(a) == order_key(h);
        });
        const Seconds for_s = h.rule < 0 ? 0 : rules_[h.rule].for_s;
        if (it == active_.end()) {
            h.state = for_s <= 0 ? AlertState::Firing : AlertState::Pending;
            h.since = now;
            changes.push_back(h);
        } else {
            h.state = it->state;
            h.since = it->since;
            if (h.state == AlertState::Pending && now - h.since >= for_s) {
                h.state = AlertState::Firing;
                h.since = now;
                changes.push_back(h);
            }
        }
        next.push_back(h);
    }
    for (const Alert& a : active_) {
        const bool still = std::any_of(next.begin(), next.end(), [&](const Alert& n) {
            return order_key(n) == order_key(a);
        });
        if (still || a.state != AlertState::Firing) continue;
        Alert r = a;
        r.state = AlertState::Resolved;
        r.since = now;
        if (const auto m = measured.find(order_key(a)); m != measured.end()) {
            r.value = m->second.first;
            if (a.rule < 0) r.previous = m->second.second;
        }
        changes.push_back(r);
    }
    auto by_key = [](const Alert& x, const Alert& y) {
        if (order_key(x) != order_key(y)) return order_key(x) < order_key(y);
        return x.state < y.state;
    };
    std::sort(next.begin(), next.end(), by_key);
    std::sort(changes.begin(), changes.end(), by_key);
    active_ = std::move(next);
    return changes;
}

}  // namespace astraeus::goodput
