// What `astra` prints from the server's JSON (docs/api.md): the page's goodput table
// (goodput_io/table.hpp) for /goodput, /goodput/weekly and /runs/{run}/goodput, and readable
// tables for runs. Pure: JSON in, text out; an error when the JSON lacks what the contract says.
// Thread safety: pure functions.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/goodput/category.hpp"

namespace astraeus::client {

/// The counts of a REST ledger ({"gpu_hours", "held_gpu_hours", ...}) in whole GPU-seconds
/// (GPU-hours x 3600, rounded to the nearest second: the server's values are exact seconds).
Result<goodput::Counts> counts_from_ledger(const nlohmann::json& ledger);

/// The table of a {"by", "rows": [{<by>: name, ...ledger}]} answer: header RUN, WORKSPACE,
/// MACHINE or POOL, one line per row in the server's order, then TOTAL.
Result<std::string> goodput_rows_text(const nlohmann::json& doc);

/// One block per week of a /goodput/weekly answer, in the server's order, separated by a blank
/// line: "Week 2026-W47 (from 2026-11-16)" then the week's table.
Result<std::string> goodput_weekly_text(const nlohmann::json& doc);

/// The one-row RUN table of a /runs/{run}/goodput answer ({"run", "workspace", ...ledger}).
Result<std::string> run_goodput_text(const nlohmann::json& doc);

/// The alerts of a GET /alerts answer, listed before the goodput views (spec/goodput.md
/// "Alerts"): "" when there are none; otherwise "ALERTS", a table NAME SCOPE TARGET STATE SINCE
/// VALUE (columns as wide as their widest value), and a blank line.
Result<std::string> alerts_text(const nlohmann::json& doc);

/// The runs of a {"runs": [...]} answer: NAME WORKSPACE POOL WORKERS STATE SUBMITTED REASON,
/// columns as wide as their widest value, two spaces apart, no trailing blanks.
Result<std::string> runs_list_text(const nlohmann::json& doc);
/// The pending runs of a GET /v1/runs page with their forecast: NAME, WORKSPACE, POOL, WORKERS,
/// POSITION (in its pool), ESTIMATED START (RFC 3339; "unknown" past the forecast), REASON.
Result<std::string> pending_runs_text(const nlohmann::json& doc);

/// Why a stopping, stopped or failed run came to it ("by its owner", "time limit", "preempted",
/// "a worker failed"): the cause of the last `stopping` in its history; "" when none.
std::string stop_cause_text(const nlohmann::json& run);

/// One run object, field by field, then its workers (WORKER STATE MACHINE ATTEMPT).
Result<std::string> run_detail_text(const nlohmann::json& run);

}  // namespace astraeus::client
