#include "astraeus/trace/read_trace.hpp"

#include <algorithm>
#include <functional>
#include <utility>

#include "astraeus/trace/csv.hpp"
#include "astraeus/trace/helios_csv.hpp"
#include "astraeus/trace/native_trace.hpp"
#include "astraeus/trace/philly_joblog.hpp"
#include "astraeus/trace/reference_csv.hpp"
#include "astraeus/trace/rfold_csv.hpp"

namespace astraeus {
namespace {

using Reader = std::function<Result<Workload>(const std::string&, SkipCounts*)>;

const std::vector<std::pair<std::string, Reader>>& registry() {
    static const std::vector<std::pair<std::string, Reader>> r{
        {"reference", [](const std::string& p, SkipCounts* s) { return read_reference_jobs(p, s); }},
        {"philly-joblog",
         [](const std::string& p, SkipCounts* s) { return read_philly_joblog(p, s); }},
        {"helios", [](const std::string& p, SkipCounts* s) { return read_helios(p, s); }},
        {"rfold", [](const std::string& p, SkipCounts* s) { return read_rfold(p, s); }},
        {"rfold-philly",
         [](const std::string& p, SkipCounts* s) { return read_rfold_philly(p, s); }},
        {"native", [](const std::string& p, SkipCounts*) { return read_native(p); }},
    };
    return r;
}

/// The formats' names, comma-separated, with "auto" last when `with_auto`.
std::string format_list(bool with_auto) {
    std::string s;
    for (const auto& f : trace_formats()) s += (s.empty() ? "" : ", ") + f;
    return with_auto ? s + ", auto" : s;
}

}  // namespace

const std::vector<std::string>& trace_formats() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const auto& [name, reader] : registry()) n.push_back(name);
        return n;
    }();
    return names;
}

Result<std::string> detect_trace_format(const std::string& path) {
    auto head = read_text_prefix(path, 8192);
    if (!head) return std::unexpected(head.error());
    std::string_view text = *head;
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' ||
                             text.front() == '\r'))
        text.remove_prefix(1);
    const std::string_view first = text.substr(0, text.find_first_of("\r\n"));
    if (first.starts_with("#astraeus-trace")) return std::string("native");
    if (first.starts_with("#job id,arrival time (sec)")) return std::string("rfold");
    if (first.starts_with("[")) return std::string("philly-joblog");
    const auto header = split_csv(first);
    auto has = [&](const char* col) {
        return std::find(header.begin(), header.end(), col) != header.end();
    };
    if (has("vc") && has("gpu_num") && has("submit_time")) return std::string("helios");
    if (has("user") && has("num_gpu") && has("submit_time")) return std::string("reference");
    if (text.empty() && (path.ends_with(".json") || path.ends_with(".json.gz")))
        return std::string("philly-joblog");
    std::string shown(first.substr(0, 80));
    return fail(path + ":1: cannot detect the trace format from the first line '" + shown +
                "'; name it with --format (one of " + format_list(false) + ")");  // (auto just failed)
}

Result<Workload> read_trace(const std::string& path, const std::string& format, SkipCounts* skips) {
    std::string name = format;
    if (name == "auto") {
        auto detected = detect_trace_format(path);
        if (!detected) return std::unexpected(detected.error());
        name = *detected;
    }
    for (const auto& [n, reader] : registry()) {
        if (n != name) continue;
        auto w = reader(path, skips);
        // The readers grow it by doubling or reserve a job a line: give back what is well over
        // (shrinking copies every job, not worth it for the few header lines).
        if (w && w->jobs.capacity() - w->jobs.size() > w->jobs.size() / 16) w->jobs.shrink_to_fit();
        return w;
    }
    return fail("unknown trace format '" + format + "' (valid: " + format_list(true) + ")");
}

}  // namespace astraeus
