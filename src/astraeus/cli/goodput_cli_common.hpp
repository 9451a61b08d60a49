// What `astraeus goodput replay` and `astraeus goodput import-slurm` share: reading --start/--end,
// checking --weeks/--run, naming ledger rows, the per-week heading and period of the table, usage
// errors and writing the output. Each command keeps its own options, input and JSON.
// Thread safety: no shared state (the output functions write to std::cout/std::cerr).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/goodput_io/event_log.hpp"
#include "astraeus/goodput_io/table.hpp"

namespace astraeus::cli {

/// Prints "astraeus goodput COMMAND: MESSAGE" (message made terminal-safe) on stderr; returns 2,
/// the usage/bad-input exit code.
int goodput_usage_error(std::string_view command, const std::string& message);

/// A --start/--end value `s` of option `opt`: RFC 3339 or integer Unix seconds; empty `s` =
/// not given (nullopt). Error: "OPT 'S': expected an RFC 3339 time ... or integer Unix seconds".
Result<std::optional<Seconds>> parse_time_arg(const std::string& opt,
                                                        const std::string& s);

/// Checks --weeks (0..56) and that --weeks and --run are not both given; the usage message, or
/// nullopt when they are fine.
std::optional<std::string> weeks_run_error(const std::optional<int>& weeks, const std::string& run);

/// `s` in ASCII upper case (a table's key header: "workspace" -> "WORKSPACE").
std::string upper(std::string_view s);

/// Ledger rows with the replayer's names for `by` (row.id indexes r.names(by)).
std::vector<goodput::NamedCounts> named(const goodput::Replayer& r, goodput::By by,
                                        const std::vector<goodput::Row>& rows);

/// The heading line of one ISO week's table: "Week 2026-W45 (from 2026-11-02)\n".
std::string week_heading(Seconds week_start_s);

/// The period [from, end_s] of a table; error "period FROM .. END: WHY", with " (give --start)"
/// when --start was not given (`start_given` false); a start after an end that defaulted
/// (`end_default`: what it defaulted to, e.g. "the last event"; empty when --end was given)
/// says so and "give --end".
Result<goodput::Period> table_period(Seconds from, Seconds end_s, bool start_given,
                                     std::string_view end_default = {});

/// Writes `notes` to stderr and `out` to stdout; 0, or 1 (with "astraeus goodput COMMAND:
/// writing the output failed" on stderr) when stdout fails.
int write_goodput_output(std::string_view command, const std::string& notes,
                         const std::string& out);

}  // namespace astraeus::cli
