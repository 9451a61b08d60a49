#include "astraeus/trace/philly_joblog.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "astraeus/trace/civil_time.hpp"
#include "astraeus/trace/csv.hpp"
#include "astraeus/trace/tenants.hpp"

namespace astraeus {
namespace {

using nlohmann::json;

// A JSON value for an error message, cut to 80 characters.
std::string short_dump(const json& v) {
    std::string s = v.dump();
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}

// 1-based line of the first character of each top-level element of a JSON array text.
std::vector<std::size_t> element_lines(std::string_view text) {
    std::vector<std::size_t> lines;
    std::size_t line = 1;
    int depth = 0;
    bool in_string = false, escape = false, in_element = false;
    for (const char c : text) {
        if (c == '\n') ++line;
        if (in_string) {
            if (escape)
                escape = false;
            else if (c == '\\')
                escape = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
        if (depth == 1 && !in_element && !space && c != ',' && c != ']') {
            lines.push_back(line);
            in_element = true;
        }
        if (c == '"')
            in_string = true;
        else if (c == '[' || c == '{')
            ++depth;
        else if (c == ']' || c == '}')
            --depth;
        else if (c == ',' && depth == 1)
            in_element = false;
    }
    return lines;
}

std::size_t line_of_offset(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    return 1 + static_cast<std::size_t>(std::count(
                   text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// A timestamp field: nullopt when absent, null, "None" or empty; an error when malformed.
Result<std::optional<std::int64_t>> read_time(const json& obj, const char* key,
                                              const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::optional<std::int64_t>{};
    if (!it->is_string())
        return fail(where + ": field '" + key + "': expected a time string or null, got " +
                    short_dump(*it));
    const auto& s = it->get_ref<const std::string&>();
    if (s.empty() || s == "None") return std::optional<std::int64_t>{};
    const auto local = parse_civil(s);
    if (!local)
        return fail(where + ": field '" + key +
                    "': expected a time like 2017-10-03 14:24:30, got '" + s + "'");
    return std::optional<std::int64_t>{local_to_utc(*local, TimeZone::UsPacific)};
}

// Number of GPUs in an attempt's detail list.
Result<std::int64_t> count_gpus(const json& attempt, const std::string& where) {
    const auto it = attempt.find("detail");
    if (it == attempt.end() || it->is_null()) return 0;
    if (!it->is_array())
        return fail(where + ": field 'detail': expected a list, got " + short_dump(*it));
    std::int64_t n = 0;
    for (const auto& machine : *it) {
        if (!machine.is_object())
            return fail(where + ": field 'detail': expected objects {ip, gpus}, got " +
                        short_dump(machine));
        const auto g = machine.find("gpus");
        if (g == machine.end() || g->is_null()) continue;
        if (!g->is_array())
            return fail(where + ": field 'detail.gpus': expected a list, got " + short_dump(*g));
        n += static_cast<std::int64_t>(g->size());
    }
    return n;
}

struct Attempt {
    std::optional<std::int64_t> start, end;
};

}  // namespace

std::int64_t philly_job_id(std::string_view jobid) {
    constexpr std::string_view kPrefix = "application_";
    constexpr std::int64_t kSeqLimit = 1'000'000;
    constexpr std::int64_t kHashBase = std::int64_t{1} << 62;
    if (jobid.starts_with(kPrefix)) {
        const std::string_view rest = jobid.substr(kPrefix.size());
        const auto us = rest.find('_');
        if (us != std::string_view::npos) {
            const std::string_view t = rest.substr(0, us), n = rest.substr(us + 1);
            const bool plain =
                !t.empty() && !n.empty() && t.size() <= 13 && n.size() <= 6 &&
                std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                (n.size() == 1 || n.front() != '0');
            if (plain) {
                const std::int64_t tv = *parse_int(t), nv = *parse_int(n);
                if (tv < kHashBase / kSeqLimit) return tv * kSeqLimit + nv;
            }
        }
    }
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
    for (const char c : jobid) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return kHashBase + static_cast<std::int64_t>(h & (std::uint64_t(kHashBase) - 1));
}

namespace {

Result<Workload> read_joblog_unchecked(const std::string& path, SkipCounts* skips) {
    auto text = read_text_file(path);
    if (!text) return std::unexpected(text.error());
    json doc;
    try {
        doc = json::parse(*text);
    } catch (const json::parse_error& e) {
        return fail(path + ":" +
                    std::to_string(line_of_offset(*text, e.byte == 0 ? 0 : e.byte - 1)) +
                    ": invalid JSON: " + e.what());
    } catch (const json::exception& e) {  // out_of_range: a number too large for a double (4e510)
        return fail(path + ": invalid JSON: " + e.what());
    }
    if (!doc.is_array())
        return fail(path + ":1: expected a JSON list of jobs (Philly cluster_job_log), got a " +
                    std::string(doc.type_name()));
    const auto lines = element_lines(*text);

    std::vector<DatedJob> rows;
    std::set<std::string> seen;
    std::map<std::int64_t, std::string> id_owner;
    SkipCounts local_skips;
    SkipCounts& skip = skips ? *skips : local_skips;

    for (std::size_t i = 0; i < doc.size(); ++i) {
        const json& j = doc[i];
        std::string where =
            path + ":" +
            (i < lines.size() ? std::to_string(lines[i]) : "job #" + std::to_string(i + 1));
        if (!j.is_object()) return fail(where + ": expected a job object, got " + short_dump(j));
        const auto jid = j.find("jobid");
        if (jid == j.end() || !jid->is_string() || jid->get_ref<const std::string&>().empty())
            return fail(where + ": field 'jobid': expected a non-empty string, got " +
                        (jid == j.end() ? std::string("nothing") : short_dump(*jid)));
        const std::string jobid = jid->get<std::string>();
        where += ": job " + jobid;
        const auto vc = j.find("vc");
        if (vc == j.end() || !vc->is_string() || vc->get_ref<const std::string&>().empty())
            return fail(where + ": field 'vc': expected a non-empty string, got " +
                        (vc == j.end() ? std::string("nothing") : short_dump(*vc)));
        auto submitted = read_time(j, "submitted_time", where);
        if (!submitted) return std::unexpected(submitted.error());

        // The attempts: the "attempts" list, or the job itself in the flattened DRE variant.
        std::vector<const json*> attempt_objs;
        const auto at = j.find("attempts");
        if (at != j.end() && !at->is_null()) {
            if (!at->is_array())
                return fail(where + ": field 'attempts': expected a list, got " + short_dump(*at));
            for (const auto& a : *at) {
                if (!a.is_object())
                    return fail(where + ": field 'attempts': expected objects, got " +
                                short_dump(a));
                attempt_objs.push_back(&a);
            }
        } else if (at == j.end() &&
                   (j.contains("start_time") || j.contains("end_time") || j.contains("detail"))) {
            attempt_objs.push_back(&j);
        }
        std::vector<Attempt> attempts;
        for (const json* a : attempt_objs) {
            auto s = read_time(*a, "start_time", where);
            if (!s) return std::unexpected(s.error());
            auto e = read_time(*a, "end_time", where);
            if (!e) return std::unexpected(e.error());
            attempts.push_back({*s, *e});
        }
        std::int64_t gpus = 0;
        if (!attempt_objs.empty()) {
            auto g = count_gpus(*attempt_objs.front(), where);
            if (!g) return std::unexpected(g.error());
            gpus = *g;
        }

        if (!seen.insert(jobid).second) {
            skip.add("repeated jobid");
            continue;
        }
        if (!submitted->has_value()) {
            skip.add("no submitted_time");
            continue;
        }
        if (attempts.empty()) {
            skip.add("no attempts");
            continue;
        }
        const bool missing = std::any_of(attempts.begin(), attempts.end(),
                                         [](const Attempt& a) { return !a.start || !a.end; });
        if (missing) {
            skip.add("attempt without start or end time");
            continue;
        }
        const bool backwards = std::any_of(attempts.begin(), attempts.end(),
                                           [](const Attempt& a) { return *a.end < *a.start; });
        if (backwards) {
            skip.add("attempt ends before it starts");
            continue;
        }
        if (gpus <= 0) {
            skip.add("no GPUs in the first attempt");
            continue;
        }
        DatedJob row;
        row.job.id = philly_job_id(jobid);
        auto [owner, fresh] = id_owner.emplace(row.job.id, jobid);
        if (!fresh)
            return fail(where + ": job id '" + jobid + "' maps to the same integer id " +
                        std::to_string(row.job.id) + " as '" + owner->second + "'");
        row.job.name = jobid;
        row.job.gpus = static_cast<int>(gpus);
        for (const Attempt& a : attempts) row.job.duration_s += *a.end - *a.start;
        row.submit_unix = **submitted;
        row.vc = vc->get<std::string>();
        rows.push_back(std::move(row));
    }

    return workload_from_dated(std::move(rows));
}

}  // namespace

Result<Workload> read_philly_joblog(const std::string& path, SkipCounts* skips) {
    try {  // nlohmann reports type misuse by exceptions; none may leave the module
        return read_joblog_unchecked(path, skips);
    } catch (const nlohmann::json::exception& e) {
        return fail(path + ": cannot read the job log: " + e.what());
    }
}

}  // namespace astraeus
