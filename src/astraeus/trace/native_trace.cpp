#include "astraeus/trace/native_trace.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "astraeus/base/huge_pages.hpp"
#include "astraeus/trace/civil_time.hpp"
#include "astraeus/trace/csv.hpp"
#include "astraeus/trace/tenants.hpp"

namespace astraeus {
namespace {

const std::vector<std::string> kColumns{"job_id",   "tenant",     "gpus",
                                        "submit_s", "duration_s", "weight"};

// One CSV field, quoted when it holds a comma, a quote, or leading/trailing blanks.
std::string csv_field(const std::string& s) {
    const bool quote = s.find_first_of(",\"") != std::string::npos ||
                       (!s.empty() && (s.front() == ' ' || s.back() == ' '));
    if (!quote) return s;
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

}  // namespace

std::string write_native(const Workload& w) {
    bool names = false;
    for (const Job& j : w.jobs) names = names || !j.name.empty();
    std::string out = fmt::format("{},{}\n", kNativeMagic, kNativeVersion);
    out += fmt::format("#epoch_unix_s,{}\n#epoch_utc,{}\n", w.epoch_unix_s,
                       format_utc(w.epoch_unix_s));
    for (const Tenant& t : w.tenants)
        out += fmt::format("#tenant,{},{}\n", csv_field(t.name), t.weight);
    out += "#share_order";
    for (const int u : w.share_order) out += fmt::format(",{}", u);
    out += "\n";
    for (const auto& c : kColumns) {
        if (&c != &kColumns.front()) out += ',';
        out += c;
    }
    out += names ? ",name\n" : "\n";
    for (const Job& j : w.jobs) {
        const std::string tenant = j.tenant >= 0 && j.tenant < static_cast<int>(w.tenants.size())
                                       ? w.tenants[j.tenant].name
                                       : "";
        out += fmt::format("{},{},{},{},{},{}", j.id, csv_field(tenant), j.gpus, j.submit_s,
                           j.duration_s, j.weight);
        if (names) {
            out += ',';
            out += csv_field(j.name.str());
        }
        out += '\n';
    }
    return out;
}

Result<Workload> parse_native(std::string_view text, const std::string& source) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    const auto lines = split_lines(text);
    auto at = [&](std::size_t i) { return source + ":" + std::to_string(i + 1); };
    const std::string magic = fmt::format("{},{}", kNativeMagic, kNativeVersion);
    if (lines.empty() || !lines[0].starts_with(kNativeMagic))
        return fail(source + ":1: not an Astraeus native trace (the first line must be '" + magic +
                    "')");
    if (lines[0] != magic)
        return fail(source + ":1: unsupported native trace version '" + std::string(lines[0]) +
                    "' (this build reads '" + magic + "')");

    Workload w;
    reserve_huge(w.jobs, lines.size());  // at most one job a line: no copies while reading
    std::optional<std::vector<int>> share_order;
    std::optional<std::int64_t> epoch_utc;
    std::size_t epoch_utc_line = 0;
    std::size_t share_order_line = 0;
    std::map<std::string, int> tenant_index;
    std::size_t i = 1;
    for (; i < lines.size() && (lines[i].empty() || lines[i].front() == '#'); ++i) {
        const std::string_view line = lines[i];
        if (line.empty() || line.starts_with("# ") || line == "#") continue;
        const auto f = split_csv(line.substr(1));
        const std::string& key = f[0];
        if (key == "epoch_unix_s") {
            const auto v = f.size() == 2 ? parse_int(f[1]) : std::nullopt;
            if (!v) return fail(at(i) + ": field 'epoch_unix_s': expected one integer");
            w.epoch_unix_s = *v;
        } else if (key == "epoch_utc") {
            epoch_utc = f.size() == 2 ? parse_civil(f[1]) : std::nullopt;
            if (!epoch_utc)
                return fail(at(i) +
                            ": field 'epoch_utc': expected a time like 2017-08-07 08:00:00");
            epoch_utc_line = i;
        } else if (key == "tenant") {
            const auto weight = f.size() == 3 ? parse_double(f[2]) : std::nullopt;
            if (f.size() != 3 || f[1].empty())
                return fail(at(i) + ": field 'tenant': expected #tenant,NAME,WEIGHT");
            // 0 is legal, as in a tenants file (docs/tenants.md): the tenant only borrows idle
            // GPUs (a workspace of weight 0 exported by `astraeus trace export`).
            if (!weight || !(*weight >= 0 && *weight <= kMaxWeight))
                return fail(at(i) + ": field 'tenant': expected a weight from 0 to 1e15, got '" +
                            f[2] + "'");
            if (!tenant_index.emplace(f[1], static_cast<int>(w.tenants.size())).second)
                return fail(at(i) + ": field 'tenant': tenant '" + f[1] + "' declared twice");
            w.tenants.push_back({f[1], *weight});
        } else if (key == "share_order") {
            share_order.emplace();
            share_order_line = i;
            for (std::size_t k = 1; k < f.size(); ++k) {
                const auto v = parse_int(f[k]);
                if (!v || *v < 0 || *v > 1'000'000)
                    return fail(at(i) + ": field 'share_order': expected tenant indexes, got '" +
                                f[k] + "'");
                share_order->push_back(static_cast<int>(*v));
            }
        } else {
            return fail(at(i) + ": unknown header field '" + key +
                        "' (expected epoch_unix_s, epoch_utc, tenant or share_order; a comment "
                        "is '# text')");
        }
    }
    if (epoch_utc && *epoch_utc != w.epoch_unix_s)
        return fail(at(epoch_utc_line) + ": field 'epoch_utc': " + format_utc(*epoch_utc) +
                    " disagrees with epoch_unix_s " + std::to_string(w.epoch_unix_s) + " (" +
                    format_utc(w.epoch_unix_s) + ")");
    const int declared = static_cast<int>(w.tenants.size());
    if (share_order) {
        std::set<int> seen(share_order->begin(), share_order->end());
        if (static_cast<int>(share_order->size()) != declared ||
            seen.size() != share_order->size() || (!seen.empty() && *seen.rbegin() >= declared))
            return fail(at(share_order_line) + ": field 'share_order': expected each of the " +
                        std::to_string(declared) + " tenant indexes 0.." +
                        std::to_string(declared - 1) + " once");
        w.share_order = *share_order;
    } else {
        for (int u = 0; u < declared; ++u) w.share_order.push_back(u);
    }

    if (i == lines.size()) return fail(source + ": no column header line after the # lines");
    const auto header = split_csv(lines[i]);
    const bool names = header.size() == kColumns.size() + 1 && header.back() == "name";
    if (!(header.size() == kColumns.size() || names) ||
        !std::equal(kColumns.begin(), kColumns.end(), header.begin()))
        return fail(at(i) +
                    ": expected the column header 'job_id,tenant,gpus,submit_s,duration_s,"
                    "weight' (optionally ',name'), got '" +
                    std::string(lines[i]) + "'");
    // Duplicate ids: while ids increase (the usual case) each is checked against the last one;
    // from the first that does not, every id goes into a set.
    std::vector<std::int64_t> increasing;
    std::set<std::int64_t> ids;
    bool in_order = true;
    for (++i; i < lines.size(); ++i) {
        if (lines[i].empty()) continue;
        const auto f = split_csv(lines[i]);
        if (f.size() != header.size())
            return fail(at(i) + ": expected " + std::to_string(header.size()) + " fields, found " +
                        std::to_string(f.size()));
        // The upper bounds are the simulator's (model/workload.hpp): a value past them is named
        // here with its line, not later by `simulate` with a job id only. A submit before the
        // epoch (negative) is a valid workload (the round trip keeps it).
        auto integer = [&](std::size_t c, std::int64_t min,
                           std::int64_t max) -> Result<std::int64_t> {
            const auto v = parse_int(f[c]);
            if (!v || *v < min || *v > max) {
                std::string range;
                if (min != INT64_MIN)
                    range = " from " + std::to_string(min) + " to " + std::to_string(max);
                else if (max != INT64_MAX)
                    range = " up to " + std::to_string(max);
                return fail(at(i) + ": field '" + header[c] + "': expected an integer" + range +
                            ", got '" + f[c] + "'");
            }
            return *v;
        };
        Job j;
        auto id = integer(0, INT64_MIN, INT64_MAX);
        auto gpus = integer(2, 1, kMaxGang);
        auto submit = integer(3, INT64_MIN, kMaxTraceTime);
        auto duration = integer(4, 0, kMaxTraceTime);
        for (auto* v : {&id, &gpus, &submit, &duration})
            if (!*v) return std::unexpected(v->error());
        const auto weight = parse_double(f[5]);
        if (!weight || *weight <= 0)
            return fail(at(i) + ": field 'weight': expected a number > 0, got '" + f[5] + "'");
        if (in_order && (increasing.empty() || *id > increasing.back())) {
            increasing.push_back(*id);
        } else {
            if (in_order) {
                ids.insert(increasing.begin(), increasing.end());
                increasing = {};
                in_order = false;
            }
            if (!ids.insert(*id).second)
                return fail(at(i) + ": field 'job_id': duplicate job id " + f[0]);
        }
        j.id = *id;
        j.gpus = static_cast<int>(*gpus);
        j.submit_s = *submit;
        j.duration_s = *duration;
        j.weight = *weight;
        if (!f[1].empty()) {
            auto it = tenant_index.find(f[1]);
            if (it == tenant_index.end())
                it = tenant_index.emplace(f[1], intern_tenant(w, f[1])).first;
            j.tenant = it->second;
        }
        if (names) j.name = f[6];
        w.jobs.push_back(std::move(j));
    }
    sort_by_submit(w);
    return w;
}

Result<Workload> read_native(const std::string& path) {
    auto text = read_text_file(path);
    if (!text) return std::unexpected(text.error());
    return parse_native(*text, path);
}

}  // namespace astraeus
