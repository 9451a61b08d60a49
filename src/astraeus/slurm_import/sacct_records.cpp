#include "astraeus/slurm_import/sacct_records.hpp"

#include <array>
#include <charconv>
#include <map>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/slurm_import/hostlist.hpp"

namespace astraeus::slurm {
namespace {

/// What one import may expand to (issue 18): job array records become one segment per element
/// and each segment holds its node names, so a short line can stand for millions of strings
/// ("68_[0-999999]" with a NodeList). Past either bound the import is refused, at once.
constexpr std::size_t kMaxSegments = 1'000'000;
constexpr std::size_t kMaxNodeNames = 5'000'000;
struct ExpansionBudget {
    std::size_t segments = 0, names = 0;
    /// Takes `n` segments of `nodes` node names each; an error past the bounds.
    Result<void> take(std::size_t n, std::size_t nodes) {
        segments += n;
        names += n * nodes;  // n <= 1,000,000 (array_elements), nodes <= 65,536 (expand_hostlist)
        if (segments > kMaxSegments)
            return fail("the input expands to more than " + std::to_string(kMaxSegments) +
                        " job segments (job arrays); split it (sacct -S/-E)");
        if (names > kMaxNodeNames)
            return fail("the input expands to more than " + std::to_string(kMaxNodeNames) +
                        " node names in all; split it (sacct -S/-E)");
        return {};
    }
};

using nlohmann::json;

constexpr std::int64_t kNoVal32 = 0xfffffffeLL;  // Slurm's NO_VAL (and INFINITE above it)

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

std::optional<std::int64_t> integer(std::string_view s) {
    std::int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

// "CANCELLED by 0" -> "CANCELLED"
std::string base_state(std::string_view s) {
    s = trim(s);
    return std::string(s.substr(0, s.find(' ')));
}

// ---- JSON ------------------------------------------------------------------------------------

// A number, or Slurm's {"set": bool, "number": n} (later openapi versions); nullopt if absent.
Result<std::optional<std::int64_t>> json_int(const json& obj, const char* key, const std::string& path) {
    if (!obj.is_object() || !obj.contains(key) || obj.at(key).is_null()) return std::optional<std::int64_t>{};
    const json& v = obj.at(key);
    if (v.is_number_integer()) return std::optional<std::int64_t>{v.get<std::int64_t>()};
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(INT64_MAX)) return fail(path + "." + key + ": integer out of range");
        return std::optional<std::int64_t>{static_cast<std::int64_t>(u)};
    }
    if (v.is_object() && v.contains("number")) {
        if (v.contains("set") && v.at("set").is_boolean() && !v.at("set").get<bool>())
            return std::optional<std::int64_t>{};
        return json_int(v, "number", path + "." + key);
    }
    return fail(path + "." + key + ": expected an integer, got " + v.dump());
}

Result<std::string> json_string(const json& obj, const char* key, const std::string& path,
                                bool required) {
    if (!obj.contains(key) || obj.at(key).is_null()) {
        if (required) return fail(path + ": missing field '" + key + "'");
        return std::string();
    }
    const json& v = obj.at(key);
    if (!v.is_string()) return fail(path + "." + key + ": expected a string, got " + v.dump());
    return v.get<std::string>();
}

// GPUs in tres.allocated or tres.requested: [{type: "gres", name: "gpu" | "gpu:TYPE", count}]:
// the untyped count, else the sum of typed ones; 0 when absent.
Result<std::int64_t> json_tres_gpus(const json& tres, const char* key, const std::string& path) {
    if (!tres.contains(key) || tres.at(key).is_null()) return 0;
    const json& list = tres.at(key);
    if (!list.is_array()) return fail(path + "." + key + ": expected an array");
    std::int64_t untyped = -1, typed = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string p = path + "." + key + "[" + std::to_string(i) + "]";
        auto type = json_string(list[i], "type", p, false);
        if (!type) return std::unexpected(type.error());
        auto tname = json_string(list[i], "name", p, false);
        if (!tname) return std::unexpected(tname.error());
        if (*type != "gres" || tname->rfind("gpu", 0) != 0) continue;
        if (*tname != "gpu" && (*tname)[3] != ':') continue;
        auto count = json_int(list[i], "count", p);
        if (!count) return std::unexpected(count.error());
        if (!*count || **count < 0) return fail(p + ".count: expected a GPU count >= 0");
        if (*tname == "gpu") untyped = **count;
        else typed += **count;
    }
    return untyped >= 0 ? untyped : typed;
}

Result<Segment> json_segment(const json& j, const std::string& path) {
    if (!j.is_object()) return fail(path + ": expected an object");
    Segment s;
    auto id = json_int(j, "job_id", path);
    if (!id) return std::unexpected(id.error());
    if (!*id) return fail(path + ": missing field 'job_id'");
    s.job = std::to_string(**id);
    if (j.contains("array") && j.at("array").is_object()) {
        auto aj = json_int(j.at("array"), "job_id", path + ".array");
        if (!aj) return std::unexpected(aj.error());
        auto at = json_int(j.at("array"), "task_id", path + ".array");
        if (!at) return std::unexpected(at.error());
        if (*aj && **aj != 0 && *at && **at >= 0 && **at < kNoVal32) {
            s.job = std::to_string(**aj) + "_" + std::to_string(**at);
        } else if (*aj && **aj != 0 && j.at("array").contains("task") &&
                   j.at("array").at("task").is_string()) {  // pending elements: "0-5", "[0-5]"
            std::string task = j.at("array").at("task").get<std::string>();
            if (!task.empty() && task.front() == '[') task = task.substr(1, task.size() - 1);
            if (!task.empty() && task.back() == ']') task.pop_back();
            s.job = std::to_string(**aj) + "_[" + task + "]";
        }
    }
    if (j.contains("het") && j.at("het").is_object()) {
        auto hj = json_int(j.at("het"), "job_id", path + ".het");
        if (!hj) return std::unexpected(hj.error());
        auto ho = json_int(j.at("het"), "job_offset", path + ".het");
        if (!ho) return std::unexpected(ho.error());
        if (*hj && **hj != 0 && *ho && **ho >= 0 && **ho < kNoVal32)
            s.job = std::to_string(**hj) + "+" + std::to_string(**ho);
    }
    auto name = json_string(j, "name", path, false);
    if (!name) return std::unexpected(name.error());
    s.name = *name;
    auto account = json_string(j, "account", path, true);
    if (!account) return std::unexpected(account.error());
    s.account = *account;
    auto partition = json_string(j, "partition", path, true);
    if (!partition) return std::unexpected(partition.error());
    s.partition = *partition;

    if (!j.contains("state")) return fail(path + ": missing field 'state'");
    const json& st = j.at("state");
    const json* cur = st.is_object() && st.contains("current") ? &st.at("current") : nullptr;
    if (cur && cur->is_array() && !cur->empty()) cur = &cur->front();
    if (!cur || !cur->is_string())
        return fail(path + ".state.current: expected a state name, e.g. \"COMPLETED\"");
    s.state = base_state(cur->get<std::string>());

    if (!j.contains("time") || !j.at("time").is_object()) return fail(path + ": missing field 'time'");
    const json& t = j.at("time");
    auto submit = json_int(t, "submission", path + ".time");
    if (!submit) return std::unexpected(submit.error());
    if (!*submit || **submit <= 0) return fail(path + ".time.submission: expected Unix seconds > 0");
    s.submit_s = **submit;
    auto start = json_int(t, "start", path + ".time");
    if (!start) return std::unexpected(start.error());
    if (*start && **start > 0) s.start_s = **start;
    auto end = json_int(t, "end", path + ".time");
    if (!end) return std::unexpected(end.error());
    if (*end && **end > 0) s.end_s = **end;

    auto nodes = json_string(j, "nodes", path, false);
    if (!nodes) return std::unexpected(nodes.error());
    auto names = expand_hostlist(*nodes);
    if (!names) return fail(path + ".nodes: " + names.error().message);
    s.nodes = std::move(*names);

    if (j.contains("tres") && j.at("tres").is_object()) {
        auto alloc = json_tres_gpus(j.at("tres"), "allocated", path + ".tres");
        if (!alloc) return std::unexpected(alloc.error());
        s.gpus = *alloc;
        auto req = json_tres_gpus(j.at("tres"), "requested", path + ".tres");
        if (!req) return std::unexpected(req.error());
        s.requested_gpus = *req;
    }
    if (j.contains("restart_cnt")) {  // Slurm 23.02 and later
        auto r = json_int(j, "restart_cnt", path);
        if (!r) return std::unexpected(r.error());
        if (!*r || **r < 0) return fail(path + ".restart_cnt: expected a count >= 0");
        s.restarts = **r;
    }
    return s;
}

// A job requeued N times has N + 1 records with -D; fewer: sacct ran without -D (each Segment
// of the job carries the count; the first record with the largest is named).
Result<void> check_duplicates(const std::vector<Segment>& segments, const char* field) {
    std::map<std::string, std::pair<std::int64_t, const Segment*>> most;
    std::map<std::string, std::int64_t> records;
    for (const Segment& s : segments) {
        if (s.restarts < 0) continue;
        auto& m = most[s.job];
        if (m.second == nullptr || s.restarts > m.first) m = {s.restarts, &s};
        ++records[s.job];
    }
    for (const auto& [job, m] : most)
        if (records[job] < m.first + 1)
            return fail(m.second->where + ": job " + job + " was requeued " + std::to_string(m.first) +
                        " times (" + field + ") but has " + std::to_string(records[job]) +
                        " record(s): run sacct with -D (--duplicates), which prints every segment");
    return {};
}

// ---- parsable2 -------------------------------------------------------------------------------

std::vector<std::string_view> split_bar(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t from = 0;
    for (;;) {
        const std::size_t bar = line.find('|', from);
        if (bar == std::string_view::npos) {
            out.push_back(line.substr(from));
            return out;
        }
        out.push_back(line.substr(from, bar - from));
        from = bar + 1;
    }
}

// A sacct time: "Unknown"/"None"/"" -> none; Unix seconds; or "YYYY-MM-DDTHH:MM:SS" (the wall
// clock of `wall`'s zone; UTC without one).
Result<std::optional<Seconds>> sacct_time(std::string_view v, const WallClock& wall) {
    v = trim(v);
    if (v.empty() || v == "Unknown" || v == "None") return std::optional<Seconds>{};
    if (auto n = integer(v)) return std::optional<Seconds>{*n};
    std::string s(v);
    if (s.size() == 19 && s[10] == 'T') s += 'Z';
    if (auto t = goodput::parse_rfc3339(s)) {
        if (!wall || s.back() != 'Z' || s.size() != 20) return std::optional<Seconds>{*t};
        auto u = wall(*t);
        if (!u) return std::unexpected(u.error());
        return std::optional<Seconds>{*u};
    }
    return fail("expected a time YYYY-MM-DDTHH:MM:SS (UTC), Unix seconds, or Unknown; got '" +
                std::string(v) + "'");
}

}  // namespace

Result<SacctFormat> parse_sacct_format(std::string_view name) {
    if (name == "auto") return SacctFormat::Auto;
    if (name == "json") return SacctFormat::Json;
    if (name == "parsable2") return SacctFormat::Parsable2;
    return fail("expected auto, json or parsable2, got '" + std::string(name) + "'");
}

Result<std::int64_t> gpus_in_tres(std::string_view tres) {
    std::int64_t untyped = -1, typed = 0;
    tres = trim(tres);
    std::size_t from = 0;
    while (from < tres.size()) {
        std::size_t comma = tres.find(',', from);
        if (comma == std::string_view::npos) comma = tres.size();
        const std::string_view item = tres.substr(from, comma - from);
        from = comma + 1;
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos) continue;
        const std::string_view key = item.substr(0, eq), val = item.substr(eq + 1);
        const bool plain = key == "gres/gpu";
        if (!plain && key.rfind("gres/gpu:", 0) != 0) continue;
        const auto n = integer(val);
        if (!n || *n < 0)
            return fail(fmt::format("'{}': expected a GPU count (gres/gpu=N)", item));
        if (plain) untyped = *n;
        else typed += *n;
    }
    return untyped >= 0 ? untyped : typed;
}

Result<std::vector<Segment>> parse_sacct_json(std::string_view text, std::string_view file) {
    const std::string f(file);
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        return fail(f + ": not valid JSON (" + e.what() + "); expected `sacct --json` output");
    }
    if (!doc.is_object() || !doc.contains("jobs") || !doc.at("jobs").is_array())
        return fail(f + ": expected `sacct --json` output: an object with a \"jobs\" array");
    std::vector<Segment> out;
    ExpansionBudget budget;
    const json& jobs = doc.at("jobs");
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const std::string path = "jobs[" + std::to_string(i) + "]";
        try {
            auto s = json_segment(jobs[i], path);
            if (!s) return fail(f + ": " + s.error().message);
            s->where = f + ": " + path;
            auto ids = array_elements(s->job);
            if (!ids) return fail(s->where + ": " + ids.error().message);
            if (auto ok = budget.take(ids->size(), s->nodes.size()); !ok)
                return fail(s->where + ": " + ok.error().message);
            for (std::string& id : *ids) {
                out.push_back(*s);
                out.back().job = std::move(id);
            }
        } catch (const json::exception& e) {
            return fail(f + ": " + path + ": " + e.what());
        }
    }
    if (auto ok = check_duplicates(out, "restart_cnt"); !ok) return std::unexpected(ok.error());
    return out;
}

Result<std::vector<std::string>> array_elements(std::string_view job) {
    const std::size_t open = job.find("_[");
    if (open == std::string_view::npos || job.back() != ']') return std::vector<std::string>{std::string(job)};
    const std::string base(job.substr(0, open));
    std::string_view list = job.substr(open + 2, job.size() - open - 3);
    list = list.substr(0, list.find('%'));  // "%N": at most N at once
    std::vector<std::string> out;
    const std::string bad = "job array '" + std::string(job) + "': expected elements like 68_[0-5] or 68_[1,3-5]";
    std::size_t from = 0;
    while (from <= list.size()) {
        std::size_t comma = list.find(',', from);
        if (comma == std::string_view::npos) comma = list.size();
        const std::string_view item = list.substr(from, comma - from);
        from = comma + 1;
        const std::size_t dash = item.find('-');
        const auto lo = integer(item.substr(0, dash));
        const auto hi = dash == std::string_view::npos ? lo : integer(item.substr(dash + 1));
        if (!lo || !hi || *lo < 0 || *hi < *lo) return fail(bad);
        if (*hi - *lo + static_cast<std::int64_t>(out.size()) >= 1000000) return fail(bad + " (at most 1,000,000)");
        for (std::int64_t k = *lo; k <= *hi; ++k) out.push_back(base + "_" + std::to_string(k));
    }
    return out;
}

Result<std::vector<Segment>> parse_sacct_parsable(std::string_view text, std::string_view file,
                                                  const WallClock& wall) {
    const std::string f(file);
    static constexpr std::array<std::string_view, 9> kRequired{
        "JobID", "State", "Submit", "Start", "End", "NodeList", "AllocTRES", "Account", "Partition"};
    std::vector<Segment> out;
    ExpansionBudget budget;
    std::vector<std::string> header;
    std::array<std::size_t, 9> col{};
    std::size_t name_col = std::string_view::npos, req_col = std::string_view::npos;
    std::size_t restarts_col = std::string_view::npos;
    std::map<std::string, std::pair<std::int64_t, std::string>> restarts;  // job -> (most, where)
    std::map<std::string, std::int64_t> records;
    std::size_t line_no = 0, from = 0;
    while (from < text.size()) {
        std::size_t nl = text.find('\n', from);
        if (nl == std::string_view::npos) nl = text.size();
        std::string_view line = text.substr(from, nl - from);
        from = nl + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trim(line).empty()) continue;
        const std::string where = f + ":" + std::to_string(line_no);
        if (nl == text.size())
            return fail(where + ": the last line has no line end: the output looks cut short "
                        "(run sacct again, or end the file with a newline if it is whole)");
        const auto cells = split_bar(line);
        if (header.empty()) {
            for (auto c : cells) header.emplace_back(trim(c));
            for (std::size_t k = 0; k < kRequired.size(); ++k) {
                std::size_t at = header.size();
                for (std::size_t h = 0; h < header.size(); ++h)
                    if (header[h] == kRequired[k]) at = h;
                if (at == header.size()) {
                    std::string need;
                    for (auto r : kRequired) {
                        if (!need.empty()) need += ',';
                        need += r;
                    }
                    return fail(where + ": header: no field '" + std::string(kRequired[k]) +
                                "' (expected `sacct --parsable2` with a header naming at least " +
                                need + ")");
                }
                col[k] = at;
            }
            for (std::size_t h = 0; h < header.size(); ++h) {
                if (header[h] == "JobName") name_col = h;
                if (header[h] == "ReqTRES") req_col = h;
                if (header[h] == "Restarts") restarts_col = h;
            }
            continue;
        }
        if (cells.size() != header.size())
            return fail(where + ": " + std::to_string(cells.size()) + " fields, the header has " +
                        std::to_string(header.size()) + " (fields are separated by '|')");
        const std::string_view job = trim(cells[col[0]]);
        if (job.empty()) return fail(where + ": field 'JobID': empty");
        if (job.find('.') != std::string_view::npos) continue;  // a step ("12.batch", "12.0")
        Segment s;
        s.job = std::string(job);
        s.where = where;
        if (name_col != std::string_view::npos) s.name = std::string(trim(cells[name_col]));
        s.state = base_state(cells[col[1]]);
        if (s.state.empty()) return fail(where + ": field 'State': empty");
        auto submit = sacct_time(cells[col[2]], wall);
        if (!submit) return fail(where + ": field 'Submit': " + submit.error().message);
        if (!*submit) return fail(where + ": field 'Submit': expected a time, got '" +
                                  std::string(cells[col[2]]) + "'");
        s.submit_s = **submit;
        auto start = sacct_time(cells[col[3]], wall);
        if (!start) return fail(where + ": field 'Start': " + start.error().message);
        s.start_s = *start;
        auto end = sacct_time(cells[col[4]], wall);
        if (!end) return fail(where + ": field 'End': " + end.error().message);
        s.end_s = *end;
        auto nodes = expand_hostlist(trim(cells[col[5]]));
        if (!nodes) return fail(where + ": field 'NodeList': " + nodes.error().message);
        s.nodes = std::move(*nodes);
        auto gpus = gpus_in_tres(cells[col[6]]);
        if (!gpus) return fail(where + ": field 'AllocTRES': " + gpus.error().message);
        s.gpus = *gpus;
        if (req_col != std::string_view::npos) {
            auto req = gpus_in_tres(cells[req_col]);
            if (!req) return fail(where + ": field 'ReqTRES': " + req.error().message);
            s.requested_gpus = *req;
        }
        s.account = std::string(trim(cells[col[7]]));
        s.partition = std::string(trim(cells[col[8]]));
        if (restarts_col != std::string_view::npos) {
            const auto n = integer(trim(cells[restarts_col]));
            if (!n || *n < 0) return fail(where + ": field 'Restarts': expected a count >= 0");
            auto& r = restarts[s.job];
            if (*n >= r.first) r = {*n, where};
            ++records[s.job];
            s.restarts = *n;
        }
        auto ids = array_elements(s.job);
        if (!ids) return fail(where + ": field 'JobID': " + ids.error().message);
        if (auto ok = budget.take(ids->size(), s.nodes.size()); !ok) return fail(where + ": " + ok.error().message);
        for (std::string& id : *ids) {
            out.push_back(s);
            out.back().job = std::move(id);
        }
    }
    if (header.empty()) return fail(f + ": empty; expected `sacct --parsable2` output with a header line");
    for (const auto& [job, r] : restarts)
        if (records[job] < r.first + 1)
            return fail(r.second + ": job " + job + " was requeued " + std::to_string(r.first) +
                        " times (Restarts) but has " + std::to_string(records[job]) +
                        " record(s): run sacct with -D (--duplicates), which prints every segment");
    return out;
}

Result<std::vector<Segment>> parse_sacct(std::string_view text, std::string_view file,
                                         SacctFormat format, const WallClock& wall) {
    if (format == SacctFormat::Auto) {
        const std::size_t first = text.find_first_not_of(" \t\r\n");
        format = first != std::string_view::npos && text[first] == '{' ? SacctFormat::Json
                                                                      : SacctFormat::Parsable2;
    }
    return format == SacctFormat::Json ? parse_sacct_json(text, file)
                                       : parse_sacct_parsable(text, file, wall);
}

bool restart_count_given(const std::vector<Segment>& segments) {
    for (const Segment& s : segments)
        if (s.restarts >= 0) return true;
    return false;
}

}  // namespace astraeus::slurm
