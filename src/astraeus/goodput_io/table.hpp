// The goodput table of the product page (seeds/goodput-page.txt; spec/goodput.md "CLI"), shared
// by `astraeus simulate --goodput`, `astraeus goodput replay` and `astra astraeus goodput`.
// Thread safety: pure functions.
#pragma once
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/goodput/category.hpp"

namespace astraeus::goodput {

struct NamedCounts {
    std::string name;
    Counts counts;
};

/// One row as shown, in tenths of a GPU-hour: held, then the seven held columns (USED IDLE
/// STALLED START RESTART FAILURE PREEMPT), then WAITING (every not-held part). The held columns
/// are rounded by largest remainder so that they add up to HELD exactly; goodput_pct is
/// round(100 x productive / held), -1 when nothing was held.
struct DisplayRow {
    std::int64_t held = 0;
    std::array<std::int64_t, 7> held_columns{};
    std::int64_t waiting = 0;
    int goodput_pct = -1;
};
DisplayRow display_row(const Counts& c);

/// One table line's ten cells as shown: HELD USED GOODPUT IDLE STALLED START RESTART FAILURE
/// PREEMPT WAITING.
using TableCells = std::array<std::string, 10>;

/// `tenths` of a GPU-hour as shown: one decimal, e.g. 123 -> "12.3", -4 -> "-0.4".
std::string format_tenths(std::int64_t tenths);

/// The table without its footer: "GPU-hours", the header (`key_header` as below), one line per
/// row in the given order with `cells_of(row.counts)`, then TOTAL with `cells_of` of the exact
/// sum; widths as goodput_table's. For tables that show other cells (e.g. Slurm's "-" columns).
std::string goodput_table_lines(std::string_view key_header, const std::vector<NamedCounts>& rows,
                                TableCells (*cells_of)(const Counts&));

/// The table: "GPU-hours", the header (`key_header` is RUN, WORKSPACE, MACHINE or POOL), one
/// line per row in the given order, TOTAL (the exact sum, rounded), a blank line and the
/// footer. Columns as on the page: name 29 wide, then 8 9 8 8 8 8 8 8 8 8; a column (the name
/// column included) widens for every row when a value needs more room, so that at least one
/// space always separates values (e.g. 1,000,000 GPU-hours and more).
std::string goodput_table(std::string_view key_header, const std::vector<NamedCounts>& rows);
/// "utilization not measured for N GPU-h (counted idle)\n" for `unmeasured_gpu_s` GPU-seconds,
/// in the table's tenths; empty when it rounds to 0.0 (under 0.05 GPU-h, 180 GPU-s).
std::string unmeasured_note(GpuSeconds unmeasured_gpu_s);
/// The same over the rows' unmeasured time.
std::string unmeasured_note(const std::vector<NamedCounts>& rows);

}  // namespace astraeus::goodput
