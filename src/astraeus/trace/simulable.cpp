#include "astraeus/trace/simulable.hpp"

#include <charconv>

#include "astraeus/trace/csv.hpp"
#include "astraeus/trace/read_trace.hpp"

namespace astraeus {

namespace {

/// The 1-based line of job `id` in the native trace at `path` (0 when not found).
std::size_t native_line_of(const std::string& path, std::int64_t id) {
    auto text = read_text_file(path);
    if (!text) return 0;
    const auto lines = split_lines(*text);
    bool header_seen = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string_view l = lines[i];
        if (l.empty() || l.front() == '#') continue;
        if (!header_seen) {  // the column header
            header_seen = true;
            continue;
        }
        const std::string_view first = l.substr(0, l.find(','));
        std::int64_t v = 0;
        const auto r = std::from_chars(first.data(), first.data() + first.size(), v);
        if (r.ec == std::errc() && r.ptr == first.data() + first.size() && v == id) return i + 1;
    }
    return 0;
}

}  // namespace

Result<void> check_simulable(const Workload& w, const std::string& trace_path, const std::string& format) {
    for (const Job& j : w.jobs) {
        if (j.submit_s >= 0 && j.submit_s <= kMaxTraceTime) continue;
        const std::string what = "field 'submit_s': simulate needs 0 <= submit_s <= " +
                                 std::to_string(kMaxTraceTime) +
                                 " s (seconds after the trace's epoch), got " + std::to_string(j.submit_s) +
                                 " (job " + std::to_string(j.id) + ")";
        bool native = format == "native";
        if (format == "auto") {
            auto detected = detect_trace_format(trace_path);
            native = detected && *detected == "native";
        }
        const std::size_t line = native ? native_line_of(trace_path, j.id) : 0;
        if (line > 0) return fail(trace_path + ":" + std::to_string(line) + ": " + what);
        return fail(trace_path + ": " + what);
    }
    return {};
}

}  // namespace astraeus
