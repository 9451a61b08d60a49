#include "astraeus/client/render.hpp"

#include <cmath>
#include <fmt/format.h>
#include <set>
#include <vector>

#include "astraeus/client/terminal_text.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/goodput_io/table.hpp"

namespace astraeus::client {

namespace {

using nlohmann::json;

Result<const json*> member(const json& j, const char* key, const char* what) {
    if (!j.is_object() || !j.contains(key))
        return fail(fmt::format("the server's answer has no \"{}\" in {}", key, what));
    return &j[key];
}

Result<std::string> string_member(const json& j, const char* key, const char* what) {
    auto m = member(j, key, what);
    if (!m) return std::unexpected(m.error());
    if (!(*m)->is_string())
        return fail(fmt::format("the server's \"{}\" in {} is not a string", key, what));
    return terminal_safe((*m)->get<std::string>());
}

// Optional string field: "" when absent or null. Every string from the server passes through
// these three helpers, escaped for the terminal (client/terminal_text.hpp).
std::string opt_string(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return {};
    return terminal_safe(j[key].get<std::string>());
}

std::string opt_scalar(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) return {};
    if (j[key].is_string()) return terminal_safe(j[key].get<std::string>());
    return terminal_safe(j[key].dump());
}

Result<GpuSeconds> hours_to_gpu_s(const json& v, const char* key) {
    if (!v.is_number())
        return fail(fmt::format("the server's ledger value \"{}\" is not a number", key));
    return static_cast<GpuSeconds>(std::llround(v.get<double>() * 3600.0));
}

std::string key_header(std::string by) {
    for (char& c : by) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return by;
}

Result<std::string> rows_table(const json& doc, const std::string& by) {
    auto rows = member(doc, "rows", "the goodput answer");
    if (!rows) return std::unexpected(rows.error());
    if (!(*rows)->is_array()) return fail("the server's \"rows\" is not a list");
    std::vector<goodput::NamedCounts> named;
    // Run rows of several workspaces (an organisation admin's view) show "workspace/run":
    // run names are unique per workspace only.
    std::set<std::string> workspaces;
    for (const json& row : **rows)
        if (row.is_object() && row.contains("workspace") && row["workspace"].is_string())
            workspaces.insert(row["workspace"].get<std::string>());
    const bool qualify = by == "run" && workspaces.size() > 1;
    for (const json& row : **rows) {
        auto name = member(row, by.c_str(), "a goodput row");
        if (!name) return std::unexpected(name.error());
        auto c = counts_from_ledger(row);
        if (!c) return std::unexpected(c.error());
        std::string shown = (*name)->is_string() ? (*name)->get<std::string>() : (*name)->dump();
        if (qualify && row.contains("workspace") && row["workspace"].is_string())
            shown = row["workspace"].get<std::string>() + "/" + shown;
        named.push_back({terminal_safe(shown), *c});
    }
    return goodput::goodput_table(key_header(by), named);
}

// A table of left-aligned columns, two spaces apart, trailing blanks trimmed.
std::string columns(const std::vector<std::vector<std::string>>& lines) {
    std::vector<std::size_t> width;
    for (const auto& l : lines) {
        if (width.size() < l.size()) width.resize(l.size(), 0);
        for (std::size_t i = 0; i < l.size(); ++i) width[i] = std::max(width[i], l[i].size());
    }
    std::string out;
    for (const auto& l : lines) {
        std::string s;
        for (std::size_t i = 0; i < l.size(); ++i) {
            s += l[i];
            if (i + 1 < l.size()) s.append(width[i] - l[i].size() + 2, ' ');
        }
        while (!s.empty() && s.back() == ' ') s.pop_back();
        out += s;
        out += '\n';
    }
    return out;
}

std::string dash_if_empty(std::string s) { return s.empty() ? "-" : s; }

}  // namespace

Result<goodput::Counts> counts_from_ledger(const json& ledger) {
    auto all = member(ledger, "gpu_hours", "a ledger");
    if (!all) return std::unexpected(all.error());
    auto held = member(ledger, "held_gpu_hours", "a ledger");
    if (!held) return std::unexpected(held.error());
    goodput::Counts c;
    for (goodput::Category k : goodput::kAllCategories) {
        const std::string key(goodput::to_string(k));
        GpuSeconds total = 0, h = 0;
        if ((*all)->contains(key)) {
            auto t = hours_to_gpu_s((**all)[key], key.c_str());
            if (!t) return std::unexpected(t.error());
            total = *t;
        }
        if (k != goodput::Category::Waiting && (*held)->contains(key)) {
            auto v = hours_to_gpu_s((**held)[key], key.c_str());
            if (!v) return std::unexpected(v.error());
            h = *v;
        }
        c.add(k, true, h);
        c.add(k, false, total - h);
    }
    if (ledger.contains("unmeasured_gpu_hours")) {
        auto u = hours_to_gpu_s(ledger["unmeasured_gpu_hours"], "unmeasured_gpu_hours");
        if (!u) return std::unexpected(u.error());
        c.unmeasured = *u;
    }
    return c;
}

Result<std::string> goodput_rows_text(const json& doc) {
    auto by = string_member(doc, "by", "the goodput answer");
    if (!by) return std::unexpected(by.error());
    return rows_table(doc, *by);
}

Result<std::string> goodput_weekly_text(const json& doc) {
    auto by = string_member(doc, "by", "the weekly goodput answer");
    if (!by) return std::unexpected(by.error());
    auto weeks = member(doc, "weeks", "the weekly goodput answer");
    if (!weeks) return std::unexpected(weeks.error());
    if (!(*weeks)->is_array()) return fail("the server's \"weeks\" is not a list");
    std::string out;
    for (const json& w : **weeks) {
        auto label = string_member(w, "week", "a week");
        if (!label) return std::unexpected(label.error());
        auto start = string_member(w, "start", "a week");
        if (!start) return std::unexpected(start.error());
        auto t = goodput::parse_rfc3339(*start);
        if (!t) return fail("the server's week start: " + t.error().message);
        auto table = rows_table(w, *by);
        if (!table) return std::unexpected(table.error());
        if (!out.empty()) out += '\n';
        out += fmt::format("Week {} (from {})\n", *label, goodput::format_rfc3339(*t).substr(0, 10));
        out += *table;
    }
    return out;
}

Result<std::string> run_goodput_text(const json& doc) {
    auto run = string_member(doc, "run", "the run's goodput answer");
    if (!run) return std::unexpected(run.error());
    auto c = counts_from_ledger(doc);
    if (!c) return std::unexpected(c.error());
    return goodput::goodput_table("RUN", {{*run, *c}});
}

Result<std::string> alerts_text(const json& doc) {
    auto alerts = member(doc, "alerts", "the alerts answer");
    if (!alerts) return std::unexpected(alerts.error());
    if (!(*alerts)->is_array()) return fail("the server's \"alerts\" is not a list");
    if ((*alerts)->empty()) return std::string();
    std::vector<std::vector<std::string>> lines{
        {"NAME", "SCOPE", "TARGET", "STATE", "SINCE", "VALUE"}};
    for (const json& a : **alerts) {
        std::string value = "-";
        if (a.contains("value") && a["value"].is_number()) {
            const double v = a["value"].get<double>();
            value = v == std::floor(v) && std::abs(v) < 1e15 ? fmt::format("{}", static_cast<long long>(v))
                                                              : fmt::format("{:.2f}", v);
        }
        lines.push_back({dash_if_empty(opt_string(a, "name")), dash_if_empty(opt_string(a, "scope")),
                         dash_if_empty(opt_string(a, "target")), dash_if_empty(opt_string(a, "state")),
                         dash_if_empty(opt_string(a, "since")), value});
    }
    return "ALERTS\n" + columns(lines) + "\n";
}

Result<std::string> runs_list_text(const json& doc) {
    auto runs = member(doc, "runs", "the runs answer");
    if (!runs) return std::unexpected(runs.error());
    if (!(*runs)->is_array()) return fail("the server's \"runs\" is not a list");
    std::vector<std::vector<std::string>> lines{
        {"NAME", "WORKSPACE", "POOL", "WORKERS", "STATE", "SUBMITTED", "REASON"}};
    for (const json& r : **runs) {
        auto name = string_member(r, "name", "a run");
        if (!name) return std::unexpected(name.error());
        lines.push_back({*name, dash_if_empty(opt_string(r, "workspace")),
                         dash_if_empty(opt_string(r, "pool")),
                         opt_scalar(r, "workers") + " x " + opt_scalar(r, "gpus_per_worker"),
                         dash_if_empty(opt_string(r, "state")),
                         dash_if_empty(opt_string(r, "submitted_at")), opt_string(r, "reason")});
    }
    return columns(lines);
}

Result<std::string> pending_runs_text(const json& doc) {
    auto runs = member(doc, "runs", "the runs answer");
    if (!runs) return std::unexpected(runs.error());
    if (!(*runs)->is_array()) return fail("the server's \"runs\" is not a list");
    std::vector<std::vector<std::string>> lines{
        {"NAME", "WORKSPACE", "POOL", "WORKERS", "POSITION", "ESTIMATED START", "REASON"}};
    for (const json& r : **runs) {
        auto name = string_member(r, "name", "a run");
        if (!name) return std::unexpected(name.error());
        std::string start = opt_string(r, "estimated_start");
        if (start.empty()) start = r.contains("position") ? "unknown" : "-";
        lines.push_back({*name, dash_if_empty(opt_string(r, "workspace")),
                         dash_if_empty(opt_string(r, "pool")),
                         opt_scalar(r, "workers") + " x " + opt_scalar(r, "gpus_per_worker"),
                         dash_if_empty(opt_scalar(r, "position")), start, opt_string(r, "reason")});
    }
    return columns(lines);
}

// A run's command for people: a string as is; an argv array joined by spaces, arguments with
// spaces or quotes in single quotes (as a POSIX shell reads them); escaped for the terminal.
std::string command_text(const json& r) {
    if (!r.contains("command")) return "";
    const json& c = r["command"];
    if (c.is_string()) return terminal_safe(c.get<std::string>());
    if (!c.is_array()) return "";
    std::string out;
    for (const json& a : c) {
        if (!a.is_string()) continue;
        const std::string s = a.get<std::string>();
        if (!out.empty()) out += ' ';
        const bool plain = !s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./=:,+@%") == std::string::npos;
        if (plain) {
            out += s;
            continue;
        }
        out += '\'';
        for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
        out += '\'';
    }
    return terminal_safe(out);
}

// Why a stopping, stopped or failed run came to it, in words: the cause of the last `stopping`
// in its history ("time limit" for a run stopped at its limit); "" when none is recorded.
std::string stop_cause_text(const json& r) {
    const std::string state = opt_string(r, "state");
    if (state != "stopping" && state != "stopped" && state != "failed") return {};
    if (!r.contains("history") || !r["history"].is_array()) return {};
    std::string cause;
    for (const json& h : r["history"])
        if (h.is_object() && h.contains("cause") && h["cause"].is_string())
            cause = h["cause"].get<std::string>();
    if (cause == "owner") return "by its owner";
    if (cause == "limit") return "time limit";
    if (cause == "preemption") return "preempted";
    if (cause == "failure") return "a worker failed";
    return terminal_safe(cause);
}

Result<std::string> run_detail_text(const json& r) {
    auto name = string_member(r, "name", "a run");
    if (!name) return std::unexpected(name.error());
    std::string state = dash_if_empty(opt_string(r, "state"));
    if (const std::string reason = opt_string(r, "reason"); !reason.empty())
        state += " (" + reason + ")";
    else if (const std::string why = stop_cause_text(r); !why.empty())
        state += " (" + why + ")";
    const std::string limit = opt_scalar(r, "time_limit_s");
    std::vector<std::vector<std::string>> fields{
        {"Name:", *name},
        {"Workspace:", dash_if_empty(opt_string(r, "workspace"))},
        {"Pool:", dash_if_empty(opt_string(r, "pool"))},
        // "1 x 1 GPU", "2 x 1 GPU", "2 x 8 GPUs": GPUs per worker decide the word (it said "1 x 1 GPUs").
        {"Workers:", opt_scalar(r, "workers") + " x " + opt_scalar(r, "gpus_per_worker") +
                         (opt_scalar(r, "gpus_per_worker") == "1" ? " GPU" : " GPUs")},
        {"State:", state},
    };
    if (r.contains("position")) {  // a pending run's forecast
        std::string start = opt_string(r, "estimated_start");
        fields.push_back({"Position:", opt_scalar(r, "position") + " in pool " + dash_if_empty(opt_string(r, "pool"))});
        fields.push_back({"Estimated start:", start.empty() ? "unknown" : start});
    }
    for (auto f : std::vector<std::vector<std::string>>{
        {"Submitted:", dash_if_empty(opt_string(r, "submitted_at"))},
        {"Started:", dash_if_empty(opt_string(r, "started_at"))},
        {"Ended:", dash_if_empty(opt_string(r, "ended_at"))},
        {"Time limit:", limit.empty() ? "-" : limit + " s"},
        {"Command:", dash_if_empty(command_text(r))},
        {"Image:", dash_if_empty(opt_string(r, "image"))},
        {"Attempts:", dash_if_empty(opt_scalar(r, "attempts"))},
         })
        fields.push_back(std::move(f));
    std::string out = columns(fields);
    if (r.contains("worker_list") && r["worker_list"].is_array() && !r["worker_list"].empty()) {
        std::vector<std::vector<std::string>> workers{{"WORKER", "STATE", "MACHINE", "ATTEMPT"}};
        for (const json& w : r["worker_list"])
            workers.push_back({dash_if_empty(opt_scalar(w, "index")),
                               dash_if_empty(opt_string(w, "state")),
                               dash_if_empty(opt_string(w, "machine")),
                               dash_if_empty(opt_scalar(w, "attempt"))});
        out += '\n';
        out += columns(workers);
    }
    return out;
}

}  // namespace astraeus::client
