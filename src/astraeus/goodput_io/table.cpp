#include "astraeus/goodput_io/table.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace astraeus::goodput {

namespace {
constexpr GpuSeconds kTenth = 360;  // GPU-seconds in 0.1 GPU-hour

std::int64_t round_tenths(GpuSeconds s) {  // half away from zero
    return s >= 0 ? (s + kTenth / 2) / kTenth : -((-s + kTenth / 2) / kTenth);
}

std::string tenths(std::int64_t v) {
    const std::int64_t a = v < 0 ? -v : v;
    return fmt::format("{}{}.{}", v < 0 ? "-" : "", a / 10, a % 10);
}

std::string line(std::string_view name, const DisplayRow& d) {
    std::string name_col(name);
    if (name_col.size() < 28) name_col.resize(28, ' ');
    std::string out = name_col + " ";
    out += fmt::format("{:>8}{:>9}", tenths(d.held), tenths(d.held_columns[0]));
    out += fmt::format("{:>8}", d.goodput_pct < 0 ? std::string("-")
                                                  : fmt::format("{}%", d.goodput_pct));
    for (std::size_t i = 1; i < d.held_columns.size(); ++i)
        out += fmt::format("{:>8}", tenths(d.held_columns[i]));
    out += fmt::format("{:>8}\n", tenths(d.waiting));
    return out;
}
}  // namespace

DisplayRow display_row(const Counts& c) {
    DisplayRow d;
    const Figures f = figures(c);
    d.held = round_tenths(f.allocated);
    d.waiting = round_tenths(f.waiting);
    // Largest remainder: floors, then the units left to the largest remainders (ties: column
    // order), so that the seven columns add up to HELD.
    std::array<GpuSeconds, 7> rem{};
    std::int64_t sum = 0;
    for (int i = 0; i < 7; ++i) {
        const GpuSeconds v = std::max<GpuSeconds>(c.held[i], 0);
        d.held_columns[i] = v / kTenth;
        rem[i] = v % kTenth;
        sum += d.held_columns[i];
    }
    for (std::int64_t left = d.held - sum; left > 0; --left) {
        const auto it = std::max_element(rem.begin(), rem.end());
        if (*it < 0) break;
        ++d.held_columns[it - rem.begin()];
        *it = -1;
    }
    if (f.goodput)
        d.goodput_pct = static_cast<int>(*f.goodput * 100.0 + 0.5);
    return d;
}

std::string goodput_table(std::string_view key_header, const std::vector<NamedCounts>& rows) {
    std::string out = "GPU-hours\n";
    std::string head(key_header);
    if (head.size() < 28) head.resize(28, ' ');
    out += head + " ";
    out += fmt::format("{:>8}{:>9}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}\n", "HELD", "USED",
                       "GOODPUT", "IDLE", "STALLED", "START", "RESTART", "FAILURE", "PREEMPT",
                       "WAITING");
    Counts total;
    for (const auto& r : rows) {
        out += line(r.name, display_row(r.counts));
        total += r.counts;
    }
    out += line("TOTAL", display_row(total));
    out += "\nUSED = productive (running, GPUs busy); GOODPUT = used / held; WAITING = asked for, "
           "not yet held\n";
    return out;
}

}  // namespace astraeus::goodput
