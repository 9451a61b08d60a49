#include "astraeus/cli/goodput_cli_common.hpp"

#include <cctype>
#include <exception>
#include <iostream>

#include "astraeus/base/terminal_text.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"

namespace astraeus::cli {

int goodput_usage_error(std::string_view command, const std::string& message) {
    std::cerr << "astraeus goodput " << command << ": " << terminal_safe(message) << "\n";
    return 2;
}

Result<std::optional<Seconds>> parse_time_arg(const std::string& opt, const std::string& s) {
    if (s.empty()) return std::optional<Seconds>{};
    if (s.find_first_not_of("-0123456789") == std::string::npos) {
        try {
            std::size_t used = 0;
            const long long v = std::stoll(s, &used);
            if (used == s.size()) return std::optional<Seconds>{v};
        } catch (const std::exception&) {
        }
    }
    if (auto t = goodput::parse_rfc3339(s)) return std::optional<Seconds>{*t};
    return fail(opt + " '" + s + "': expected an RFC 3339 time (2026-11-02T10:00:00Z) or "
                "integer Unix seconds");
}

std::optional<std::string> weeks_run_error(const std::optional<int>& weeks,
                                           const std::string& run) {
    if (weeks && (*weeks < 0 || *weeks > 56))
        return "--weeks: expected 0..56 (the last N complete weeks and the current one stay "
               "within 400 days)";
    if (weeks && !run.empty()) return "--weeks and --run do not go together";
    return std::nullopt;
}

std::string upper(std::string_view s) {
    std::string u(s);
    for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
}

std::vector<goodput::NamedCounts> named(const goodput::Replayer& r, goodput::By by,
                                        const std::vector<goodput::Row>& rows) {
    std::vector<goodput::NamedCounts> out;
    const auto& names = r.names(by);
    for (const goodput::Row& row : rows) out.push_back({names[row.id], row.counts});
    return out;
}

std::string week_heading(Seconds week_start_s) {
    return "Week " + goodput::iso_week_label(week_start_s) + " (from " +
           goodput::format_rfc3339(week_start_s).substr(0, 10) + ")\n";
}

Result<goodput::Period> table_period(Seconds from, Seconds end_s, bool start_given,
                                     std::string_view end_default) {
    auto period = goodput::make_period(from, end_s);
    if (period) return *period;
    std::string m = "period " + goodput::format_rfc3339(from) + " .. " +
                    goodput::format_rfc3339(end_s) + ": " + period.error().message;
    if (from > end_s && !end_default.empty())
        m += " (--end was not given: it defaults to " + std::string(end_default) + ", " +
             goodput::format_rfc3339(end_s) + "; give --end)";
    else if (!start_given) m += " (give --start)";
    return fail(m);
}

int write_goodput_output(std::string_view command, const std::string& notes,
                         const std::string& out) {
    std::cerr << notes;
    std::cout << out;
    std::cout.flush();
    if (!std::cout) {
        std::cerr << "astraeus goodput " << command << ": writing the output failed\n";
        return 1;
    }
    return 0;
}

}  // namespace astraeus::cli
