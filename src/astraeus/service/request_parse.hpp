// Parsing of REST request bodies and query parameters into plain values, before any state is
// touched: POST /v1/runs bodies, POST /v1/runs/NAME/progress bodies, GET /v1/runs?state=,
// the goodput window (by, start, end, days) and the weekly parameters (by, weeks). Split out of
// the handlers (service_api.cpp, service_goodput_api.cpp) so that each can be called on its own
// (the fuzz targets in fuzz/ and unit tests). Errors are 400s with the same messages as before.
// Thread safety: pure functions.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "astraeus/base/time.hpp"
#include "astraeus/exec/command_spec.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/service/service.hpp"

namespace astraeus::service {

/// A POST /v1/runs body, checked for its field set, types, ranges and the run name's shape.
/// Absent or null fields keep these defaults.
struct SubmitRequest {
    std::string name, pool, workspace;
    std::string image;             ///< always empty: a non-empty 'image' is refused (no container runtime)
    exec::CommandSpec command;     ///< command (argv array, or a string: /bin/sh -c), env, workdir, running_at
    std::int64_t workers = 1;
    std::int64_t gpus_per_worker = 1;
    std::int64_t time_limit_s = 0;    ///< 0: none
    std::int64_t sim_duration_s = 0;  ///< 0: none
};

/// Parses a POST /v1/runs body (a JSON object; docs/api.md). 400 on malformed JSON, a
/// non-object, an unknown field, a wrong type, a value out of range, a missing or bad name,
/// a bad command (empty array, non-strings, NUL, over 4096 arguments or 64 KiB), a bad env
/// (not an object of strings, bad names, over 1024 variables), a relative or too long workdir,
/// running_at other than "up"/"progress", or any image. A missing command is not an error here
/// (simulated runs have none; Service::submit refuses it where the executor runs commands).
/// Never throws.
ApiResult<SubmitRequest> parse_submit_body(std::string_view body);

/// Parses a progress body as JSON (its shape is checked by progress_reports once the run's
/// gang size is known). 400 on malformed JSON. Never throws.
ApiResult<nlohmann::json> parse_progress_body(std::string_view body);

/// The (worker, step) reports of a progress body {"worker": i, "step": n} or
/// {"steps": [n0, ...]} (one per worker) for a run of `workers` workers; 400 otherwise.
ApiResult<std::vector<std::pair<int, std::int64_t>>> progress_reports(const nlohmann::json& in,
                                                                       int workers);

/// GET /v1/runs: the optional `state` filter is one of the run states; 400 otherwise.
ApiResult<void> check_runs_query(const Params& q);

/// GET /v1/runs (docs/api.md "List runs"): the filters and the page.
struct RunsQuery {
    std::string state;      ///< "" = any; else one of the run states
    std::string workspace;  ///< "" = any visible
    std::string pool;       ///< "" = any
    std::string name;       ///< "" = any; else runs whose name contains it (ASCII case-insensitive)
    std::size_t limit = 100;  ///< runs per page, 1..1000
    /// The page starts after this run in the list's order (newest first: submitted_s
    /// descending, then id descending); from the "next_cursor" of the previous page.
    bool has_cursor = false;
    Seconds cursor_submitted_s = 0;
    std::int64_t cursor_id = 0;
};
/// The largest page of GET /v1/runs and the default one.
inline constexpr std::size_t kMaxRunsPage = 1000;
inline constexpr std::size_t kDefaultRunsPage = 100;
/// Parses GET /v1/runs's parameters: state, workspace, pool, name (at most 63 bytes), limit
/// (1..1000, default 100), cursor (as returned in "next_cursor"). 400 naming the parameter on
/// an unknown parameter or a bad value. Never throws.
ApiResult<RunsQuery> parse_runs_query(const Params& q);
/// The cursor text of a run: "SUBMITTED_S.ID" (opaque to clients).
std::string runs_cursor(Seconds submitted_s, std::int64_t id);

/// GET /v1/runs/{run}/logs: which worker's log, of which attempt, from which byte, how much.
struct LogsQuery {
    std::int64_t worker = 0;
    std::int64_t attempt = 0;
    std::int64_t offset = 0;
    std::int64_t limit = 1 << 20;
};
/// Parses the logs parameters of a run of `workers` workers that has made `attempts` >= 1
/// attempts: worker (0..workers-1, default 0), attempt (1..attempts, default the latest),
/// offset (0..2^40, default 0), limit (1..4 MiB, default 1 MiB): decimal digits only, at most
/// 12. 400 naming the parameter otherwise (others, such as workspace, are the caller's). Never
/// throws.
ApiResult<LogsQuery> parse_logs_query(const Params& q, int workers, int attempts);

/// A goodput period and grouping from by, start, end, days (RFC 3339 times; default: the 7
/// days up to `now_s`). 400 on an unknown grouping, a bad time, start and days together, or a
/// period make_period refuses (start after end, over 400 days).
struct GoodputWindow {
    goodput::By by = goodput::By::Workspace;
    Seconds start = 0, end = 0;
};
ApiResult<GoodputWindow> parse_goodput_window(const Params& q, Seconds now_s);

/// GET /v1/goodput/weekly: by, weeks (0..56, default 8) and limit (1..100000: each week's
/// rows cut to the `limit` most held, ties by workspace then name; absent: every row); 400 on
/// anything else.
struct WeeklyQuery {
    goodput::By by = goodput::By::Workspace;
    int weeks = 8;
    std::size_t limit = 0;  ///< 0: every row
};
ApiResult<WeeklyQuery> parse_weekly_query(const Params& q);

}  // namespace astraeus::service
