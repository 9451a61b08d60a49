#include "astraeus/goodput_io/table.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "astraeus/base/terminal_text.hpp"

namespace astraeus::goodput {

namespace {
constexpr GpuSeconds kTenth = 360;  // GPU-seconds in 0.1 GPU-hour

std::int64_t round_tenths(GpuSeconds s) {  // half away from zero
    return s >= 0 ? (s + kTenth / 2) / kTenth : -((-s + kTenth / 2) / kTenth);
}

TableCells cells(const Counts& counts) {
    const DisplayRow d = display_row(counts);
    TableCells c;
    c[0] = format_tenths(d.held);
    c[1] = format_tenths(d.held_columns[0]);
    c[2] = d.goodput_pct < 0 ? std::string("-") : fmt::format("{}%", d.goodput_pct);
    for (std::size_t i = 1; i < d.held_columns.size(); ++i)
        c[i + 2] = format_tenths(d.held_columns[i]);
    c[9] = format_tenths(d.waiting);
    return c;
}

std::string line(std::string_view name, std::size_t name_width, const TableCells& c,
                 const std::array<std::size_t, 10>& widths) {
    std::string out(name);
    out.resize(std::max(out.size(), name_width), ' ');
    out += ' ';
    for (std::size_t i = 0; i < c.size(); ++i) out += fmt::format("{:>{}}", c[i], widths[i]);
    out += '\n';
    return out;
}
}  // namespace

std::string format_tenths(std::int64_t v) {
    const std::int64_t a = v < 0 ? -v : v;
    return fmt::format("{}{}.{}", v < 0 ? "-" : "", a / 10, a % 10);
}

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

std::string goodput_table_lines(std::string_view key_header, const std::vector<NamedCounts>& rows,
                                TableCells (*cells_of)(const Counts&)) {
    // The page's widths; a column widens (for every row) when a value needs more room.
    std::array<std::size_t, 10> widths{8, 9, 8, 8, 8, 8, 8, 8, 8, 8};
    std::size_t name_width = 28;
    std::vector<TableCells> body;
    body.reserve(rows.size() + 1);
    Counts total;
    for (const auto& r : rows) {
        body.push_back(cells_of(r.counts));
        total += r.counts;
        name_width = std::max(name_width, terminal_safe(r.name).size());
    }
    body.push_back(cells_of(total));
    for (const TableCells& c : body)
        for (std::size_t i = 0; i < c.size(); ++i) widths[i] = std::max(widths[i], c[i].size() + 1);
    std::string out = "GPU-hours\n";
    out += line(key_header, name_width,
                {"HELD", "USED", "GOODPUT", "IDLE", "STALLED", "START", "RESTART", "FAILURE",
                 "PREEMPT", "WAITING"},
                widths);
    for (std::size_t i = 0; i < rows.size(); ++i) out += line(terminal_safe(rows[i].name), name_width, body[i], widths);
    out += line("TOTAL", name_width, body.back(), widths);
    return out;
}

std::string unmeasured_note(const std::vector<NamedCounts>& rows) {
    GpuSeconds u = 0;
    for (const auto& r : rows) u += r.counts.unmeasured;
    return unmeasured_note(u);
}

std::string unmeasured_note(GpuSeconds u) {
    // Omitted under 0.05 GPU-h: "0.0 GPU-h" read as "nothing", and the table's cells are tenths too.
    const GpuSeconds tenths = (u * 10 + 1800) / 3600;
    if (tenths <= 0) return "";
    return "utilization not measured for " + format_tenths(tenths) +
           " GPU-h (counted idle)\n";
}

std::string goodput_table(std::string_view key_header, const std::vector<NamedCounts>& rows) {
    std::string out = goodput_table_lines(key_header, rows, cells);
    out += "\nUSED = productive (running, GPUs busy); GOODPUT = used / held; WAITING = asked for, "
           "not yet held\n";
    out += unmeasured_note(rows);
    return out;
}

}  // namespace astraeus::goodput
