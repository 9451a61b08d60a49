#include "astraeus/service/request_parse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>

#include "astraeus/goodput/calendar.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

using nlohmann::json;
namespace gp = goodput;
using namespace detail;

namespace {

// The run's command fields of a submission (command, env, workdir, running_at) into `out`;
// the 400 error otherwise.
std::optional<ApiError> parse_command_fields(const nlohmann::json& b, exec::CommandSpec& out) {
    if (b.contains("command") && !b["command"].is_null()) {
        const auto& c = b["command"];
        if (c.is_string()) {
            const std::string text = c.get<std::string>();
            if (text.size() > 65536) return bad("'command' is too long (65536 bytes at most)");
            if (!text.empty()) out.argv = exec::shell_argv(text);
        } else if (c.is_array()) {
            if (c.empty()) return bad("'command' must not be an empty array");
            if (c.size() > 4096) return bad("'command' has too many arguments (4096 at most)");
            std::size_t total = 0;
            for (const auto& a : c) {
                if (!a.is_string()) return bad("'command' must be an array of strings (argv)");
                out.argv.push_back(a.get<std::string>());
                total += out.argv.back().size();
                if (out.argv.back().find('\0') != std::string::npos) return bad("'command' arguments must not hold NUL");
            }
            if (total > 65536) return bad("'command' is too long (65536 bytes at most)");
            if (out.argv.front().empty()) return bad("'command' must start with a program");
        } else {
            return bad("'command' must be an argv array of strings, or a string (run as /bin/sh -c STRING)");
        }
    }
    if (b.contains("env") && !b["env"].is_null()) {
        const auto& e = b["env"];
        if (!e.is_object()) return bad("'env' must be an object of strings");
        if (e.size() > 1024) return bad("'env' has too many variables (1024 at most)");
        for (auto it = e.begin(); it != e.end(); ++it) {
            const std::string& k = it.key();
            const bool ok_name = !k.empty() && k.size() <= 256 && !(k[0] >= '0' && k[0] <= '9') &&
                                 std::all_of(k.begin(), k.end(), [](char ch) {
                                     return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                                            (ch >= '0' && ch <= '9') || ch == '_';
                                 });
            if (!ok_name) return bad("'env': bad variable name '" + k + "' ([A-Za-z_][A-Za-z0-9_]*)");
            if (!it.value().is_string()) return bad("'env': the value of " + k + " must be a string");
            const std::string v = it.value().get<std::string>();
            if (v.size() > 65536 || v.find('\0') != std::string::npos) return bad("'env': the value of " + k + " is too long or holds NUL");
            out.env[k] = v;
        }
    }
    if (b.contains("workdir") && !b["workdir"].is_null()) {
        if (!b["workdir"].is_string()) return bad("'workdir' must be a string (an absolute path)");
        out.workdir = b["workdir"].get<std::string>();
        if (!out.workdir.empty() && out.workdir.front() != '/') return bad("'workdir' must be an absolute path");
        if (out.workdir.size() > 4096) return bad("'workdir' is too long");
    }
    if (b.contains("running_at") && !b["running_at"].is_null()) {
        const auto& v = b["running_at"];
        if (!v.is_string() || (v.get<std::string>() != "up" && v.get<std::string>() != "progress"))
            return bad("'running_at' must be \"up\" (every worker started) or \"progress\" (the first progress report)");
        out.running_at_progress = v.get<std::string>() == "progress";
    }
    return std::nullopt;
}

}  // namespace

ApiResult<SubmitRequest> parse_submit_body(std::string_view body) {
    json b;
    try {
        b = json::parse(body);
    } catch (const std::exception& e) {
        return std::unexpected(bad(std::string("malformed JSON: ") + e.what()));
    }
    if (!b.is_object()) return std::unexpected(bad("the body must be a JSON object"));
    static const std::set<std::string> kKeys{"name", "pool", "workers", "gpus_per_worker", "time_limit_s",
                                             "command", "image", "workspace", "sim_duration_s",
                                             "env", "workdir", "running_at"};
    for (auto it = b.begin(); it != b.end(); ++it)
        if (!kKeys.contains(it.key())) return std::unexpected(bad("unknown field '" + it.key() + "'"));
    auto get_str = [&](const char* k, std::string& out) -> std::optional<ApiError> {
        if (!b.contains(k) || b[k].is_null()) return std::nullopt;
        if (!b[k].is_string()) return bad(std::string("'") + k + "' must be a string");
        out = b[k].get<std::string>();
        return std::nullopt;
    };
    auto get_int = [&](const char* k, std::int64_t& out, std::int64_t lo, std::int64_t hi) -> std::optional<ApiError> {
        if (!b.contains(k) || b[k].is_null()) return std::nullopt;
        const auto range = [&] { return bad(std::string("'") + k + "' must be in " + str(lo) + ".." + str(hi)); };
        // A whole number too large for 64 bits reaches the parser as a float: out of range, not
        // "not an integer"; an unsigned one above INT64_MAX likewise.
        if (b[k].is_number_float()) {
            const double v = b[k].get<double>();
            if (std::isfinite(v) && std::floor(v) == v && std::abs(v) >= 9.2e18) return range();
        }
        if (b[k].is_number_unsigned() && b[k].get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) return range();
        if (!b[k].is_number_integer()) return bad(std::string("'") + k + "' must be an integer");
        out = b[k].get<std::int64_t>();
        if (out < lo || out > hi) return range();
        return std::nullopt;
    };
    SubmitRequest r;
    if (auto e = parse_command_fields(b, r.command)) return std::unexpected(*e);
    for (auto e : {get_str("name", r.name), get_str("pool", r.pool),
                   get_str("image", r.image), get_str("workspace", r.workspace),
                   get_int("workers", r.workers, 1, kMaxWorkers),
                   get_int("gpus_per_worker", r.gpus_per_worker, 1, kMaxGpusPerWorker),
                   get_int("time_limit_s", r.time_limit_s, 1, kMaxRunSeconds),
                   get_int("sim_duration_s", r.sim_duration_s, 1, kMaxRunSeconds)})
        if (e) return std::unexpected(*e);
    if (r.name.empty()) return std::unexpected(bad("'name' is required"));
    if (!valid_name(r.name))
        return std::unexpected(bad("bad run name '" + r.name + "': 1-63 of A-Z a-z 0-9 . _ -, starting with a letter or digit"));
    if (!r.image.empty())
        return std::unexpected(bad("'image' is not supported: no executor of this service declares a container "
                                   "runtime; give the command to run on the machines as 'command'"));
    return r;
}

ApiResult<json> parse_progress_body(std::string_view body) {
    try {
        return json::parse(body);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e400
        return std::unexpected(bad(std::string("malformed JSON: ") + e.what()));
    }
}

ApiResult<std::vector<std::pair<int, std::int64_t>>> progress_reports(const json& in, int workers) {
    std::vector<std::pair<int, std::int64_t>> reports;
    const auto as_step = [](const json& v) { return v.is_number_integer() && v.get<std::int64_t>() >= 0; };
    if (in.is_object() && in.contains("steps")) {
        const json& steps = in["steps"];
        if (!steps.is_array() || steps.size() != static_cast<std::size_t>(workers))
            return std::unexpected(bad("'steps' must be a list of " + str(workers) +
                                       " step counters (one per worker)"));
        for (std::size_t i = 0; i < steps.size(); ++i) {
            if (!as_step(steps[i]))
                return std::unexpected(bad("'steps' must hold non-negative integers"));
            reports.push_back({static_cast<int>(i), steps[i].get<std::int64_t>()});
        }
    } else if (in.is_object() && in.contains("worker") && in.contains("step")) {
        if (!in["worker"].is_number_integer() || in["worker"].get<std::int64_t>() < 0 ||
            in["worker"].get<std::int64_t>() >= workers)
            return std::unexpected(bad("'worker' must be an index from 0 to " + str(workers - 1)));
        if (!as_step(in["step"])) return std::unexpected(bad("'step' must be a non-negative integer"));
        reports.push_back({in["worker"].get<int>(), in["step"].get<std::int64_t>()});
    } else {
        return std::unexpected(bad("expected {\"worker\": i, \"step\": n} or {\"steps\": [n0, n1, ...]}"));
    }
    return reports;
}

ApiResult<void> check_runs_query(const Params& q) {
    static const std::set<std::string> kStates{"pending", "starting", "running", "stopping",
                                               "succeeded", "failed", "stopped", "cancelled"};
    auto st = q.find("state");
    if (st != q.end() && !kStates.contains(st->second))
        return std::unexpected(bad("bad state '" + st->second + "' (pending, starting, running, stopping, succeeded, failed, stopped, cancelled)"));
    return {};
}

ApiResult<LogsQuery> parse_logs_query(const Params& q, int workers, int attempts) {
    auto num = [&](const char* key, std::int64_t dflt, std::int64_t lo, std::int64_t hi) -> ApiResult<std::int64_t> {
        auto it = q.find(key);
        if (it == q.end()) return dflt;
        if (!is_digits(it->second, 12)) return std::unexpected(bad(std::string("'") + key + "' must be a non-negative integer"));
        const std::int64_t v = std::stoll(it->second);
        if (v < lo || v > hi) return std::unexpected(bad(std::string("'") + key + "' must be in " + str(lo) + ".." + str(hi)));
        return v;
    };
    LogsQuery out;
    auto w = num("worker", 0, 0, workers - 1);
    if (!w) return std::unexpected(w.error());
    auto a = num("attempt", attempts, 1, attempts);
    if (!a) return std::unexpected(a.error());
    auto offset = num("offset", 0, 0, std::int64_t{1} << 40);
    if (!offset) return std::unexpected(offset.error());
    auto limit = num("limit", 1 << 20, 1, 4 << 20);
    if (!limit) return std::unexpected(limit.error());
    out.worker = *w;
    out.attempt = *a;
    out.offset = *offset;
    out.limit = *limit;
    return out;
}

std::string runs_cursor(Seconds submitted_s, std::int64_t id) {
    return std::to_string(submitted_s) + "." + std::to_string(id);
}

ApiResult<RunsQuery> parse_runs_query(const Params& q) {
    RunsQuery out;
    for (const auto& [k, v] : q) {
        if (k == "state") {
            if (auto ok = check_runs_query(q); !ok) return std::unexpected(ok.error());
            out.state = v;
        } else if (k == "workspace") {
            out.workspace = v;
        } else if (k == "pool") {
            out.pool = v;
        } else if (k == "name") {
            if (v.size() > 63) return std::unexpected(bad("'name' is too long (63 bytes at most)"));
            out.name = v;
        } else if (k == "limit") {
            if (!is_digits(v, 4) || std::stoi(v) < 1 || std::stoul(v) > kMaxRunsPage)
                return std::unexpected(bad("bad 'limit' '" + v.substr(0, 32) + "' (1 to " + str(kMaxRunsPage) + ")"));
            out.limit = std::stoul(v);
        } else if (k == "cursor") {
            // "SUBMITTED_S.ID", both decimal (from a previous page's next_cursor).
            const auto dot = v.find('.');
            const std::string a = dot == std::string::npos ? "" : v.substr(0, dot);
            const std::string b = dot == std::string::npos ? "" : v.substr(dot + 1);
            if (!is_digits(a, 18) || !is_digits(b, 18))
                return std::unexpected(bad("bad 'cursor' (give the 'next_cursor' of the previous page as it is)"));
            out.has_cursor = true;
            out.cursor_submitted_s = std::stoll(a);
            out.cursor_id = std::stoll(b);
        } else {
            return std::unexpected(bad("unknown parameter '" + k.substr(0, 64) +
                                       "' (state, workspace, pool, name, limit, cursor)"));
        }
    }
    return out;
}

ApiResult<GoodputWindow> parse_goodput_window(const Params& q, Seconds now_s) {
    for (const auto& [k, v] : q)
        if (k != "by" && k != "start" && k != "end" && k != "days")
            return std::unexpected(bad("unknown parameter '" + k + "' (by, start, end, days, sort, dir, limit; machine with by=run)"));
    GoodputWindow w;
    if (auto it = q.find("by"); it != q.end()) {
        auto by = gp::parse_by(it->second);
        if (!by) return std::unexpected(bad(by.error().message));
        w.by = *by;
    }
    w.end = now_s;
    if (auto it = q.find("end"); it != q.end()) {
        auto t = gp::parse_rfc3339(it->second);
        if (!t) return std::unexpected(bad("bad 'end': " + t.error().message));
        w.end = *t;
    }
    w.start = w.end - 7 * gp::kDay;
    const bool has_start = q.contains("start"), has_days = q.contains("days");
    if (has_start && has_days) return std::unexpected(bad("give 'start' or 'days', not both"));
    if (has_start) {
        auto t = gp::parse_rfc3339(q.at("start"));
        if (!t) return std::unexpected(bad("bad 'start': " + t.error().message));
        w.start = *t;
    }
    if (has_days) {
        const std::string& d = q.at("days");
        if (!is_digits(d, 6)) return std::unexpected(bad("bad 'days': '" + d + "' (a whole number of days)"));
        const Seconds n = std::stoll(d);
        if (n < 1) return std::unexpected(bad("'days' must be at least 1"));
        w.start = w.end - n * gp::kDay;
    }
    auto p = gp::make_period(w.start, w.end);
    if (!p && w.start > w.end)  // name both times, and where the end came from
        return std::unexpected(bad("the period's start " + gp::format_rfc3339(w.start) + " is after its end " +
                                   gp::format_rfc3339(w.end) +
                                   (q.contains("end") ? std::string(" (the given 'end')")
                                                      : std::string(" (now: 'end' defaults to now; give 'end')"))));
    if (!p) return std::unexpected(bad(p.error().message));
    return w;
}

ApiResult<WeeklyQuery> parse_weekly_query(const Params& q) {
    for (const auto& [k, v] : q)
        if (k != "by" && k != "weeks" && k != "limit")
            return std::unexpected(bad("unknown parameter '" + k + "' (by, weeks, limit)"));
    WeeklyQuery out;
    if (auto it = q.find("by"); it != q.end()) {
        auto b = gp::parse_by(it->second);
        if (!b) return std::unexpected(bad(b.error().message));
        out.by = *b;
    }
    if (auto it = q.find("weeks"); it != q.end()) {
        if (!is_digits(it->second, 3) || std::stoi(it->second) > 56)
            return std::unexpected(bad("bad 'weeks': '" + it->second + "' (0..56; 57 weeks fit in 400 days)"));
        out.weeks = std::stoi(it->second);
    }
    if (auto it = q.find("limit"); it != q.end()) {
        if (!is_digits(it->second, 6) || std::stoul(it->second) < 1 || std::stoul(it->second) > 100000)
            return std::unexpected(bad("bad 'limit': '" + it->second.substr(0, 32) + "' (1 to 100000 rows a week)"));
        out.limit = std::stoul(it->second);
    }
    return out;
}

}  // namespace astraeus::service
