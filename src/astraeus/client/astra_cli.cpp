#include "astraeus/client/astra_cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <functional>
#include <optional>
#include <string_view>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <thread>

#include "astraeus/api/run_limits.hpp"
#include "astraeus/cli/number_checks.hpp"
#include "astraeus/client/api_client.hpp"
#include "astraeus/client/astra_machines.hpp"
#include "astraeus/client/render.hpp"
#include "astraeus/client/terminal_text.hpp"

#ifndef ASTRAEUS_VERSION
#define ASTRAEUS_VERSION "0.0.0+unknown"
#endif

namespace astraeus::client {

namespace {

using nlohmann::json;

struct GoodputArgs {
    std::string by = "workspace";
    int days = 0;
    std::string start, end;
    int weeks = 0;
    std::string run, workspace;
    bool as_json = false;
};

struct SubmitArgs {
    std::string name, pool, workspace, command, image, workdir, running_at;
    std::vector<std::string> argv, env;
    int workers = 1, gpus_per_worker = 1;
    std::int64_t time_limit_s = 0, sim_duration_s = 0;
    bool as_json = false;
    int retries = 4;  ///< retries of a submission without an answer (same Idempotency-Key)
};

struct LogArgs {
    std::string name, workspace;
    int worker = 0, attempt = 0;
    bool follow = false;
};

struct RunArgs {
    std::string name, workspace, state;
    bool as_json = false;
    bool pending = false;  ///< list --pending: pending runs with their forecast
    int limit = 0;         ///< list: the newest N only (0: all)
    int page_size = 1000;  ///< list: runs per request
};

// GET /runs page after page (following "next_cursor") until `limit` runs (0: all) or the last
// page; one document {"runs": [...]} as the server would give it in one page.
CallResult list_all_runs(const ApiClient& client, std::map<std::string, std::string> q, int limit,
                         int page_size) {
    json all = json::array();
    const auto page = static_cast<std::size_t>(page_size);
    for (;;) {
        const std::size_t want = limit > 0 ? static_cast<std::size_t>(limit) - all.size() : page;
        q["limit"] = std::to_string(std::min(want, page));
        auto res = client.get("/runs", q);
        if (!res) return res;
        json doc = json::parse(*res, nullptr, false);
        if (doc.is_discarded() || !doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array())
            return *res;  // shown (or refused) by the caller's renderer as it is
        for (auto& r : doc["runs"]) all.push_back(std::move(r));
        const bool full = limit > 0 && all.size() >= static_cast<std::size_t>(limit);
        if (full || !doc.contains("next_cursor") || !doc["next_cursor"].is_string()) break;
        q["cursor"] = doc["next_cursor"].get<std::string>();
    }
    return json{{"runs", std::move(all)}}.dump() + "\n";
}

using cli::whole_number;  // named ranges, not CLI11's 300-digit ones (cli/number_checks.hpp)
const CLI::Validator kPositiveInt = whole_number(1, std::numeric_limits<int>::max(), "POSITIVE");
const CLI::Validator kNonNegativeInt =
    whole_number(0, std::numeric_limits<int>::max(), "NONNEGATIVE");

// Prints a 2xx body either as is (--json) or through `render`; maps failures to exit codes.
int answer(const CallResult& res, bool as_json,
           const std::function<Result<std::string>(const json&)>& render, std::ostream& out,
           std::ostream& err) {
    if (!res) {
        err << "astra: " << terminal_safe(res.error().message) << '\n';
        return res.error().exit_code;
    }
    if (as_json) {
        out << *res;
        if (res->empty() || res->back() != '\n') out << '\n';
        return kExitOk;
    }
    const json doc = json::parse(*res, nullptr, false);
    if (doc.is_discarded()) {
        err << "astra: the server's answer is not JSON: " << terminal_safe(res->substr(0, 200)) << '\n';
        return kExitServer;
    }
    auto text = render(doc);
    if (!text) {
        err << "astra: " << text.error().message << '\n';
        return kExitServer;
    }
    out << *text;
    return kExitOk;
}

// The alerts listed before a goodput view: "" when none; a warning on `err` (and "") when the
// server does not give them (the view itself is still printed).
std::string alerts_first(const ApiClient& client, std::ostream& err) {
    const auto res = client.get("/alerts");
    if (!res) {
        err << "astra: alerts not shown: " << terminal_safe(res.error().message) << '\n';
        return {};
    }
    const json doc = json::parse(*res, nullptr, false);
    auto text = doc.is_discarded() ? Result<std::string>(fail("not JSON")) : alerts_text(doc);
    if (!text) {
        err << "astra: alerts not shown: " << text.error().message << '\n';
        return {};
    }
    return *text;
}

// A goodput view: its alerts first (unless --json), then the view.
int goodput_view(const ApiClient& client, const CallResult& res, bool as_json,
                 const std::function<Result<std::string>(const json&)>& render, std::ostream& out,
                 std::ostream& err) {
    if (!res || as_json) return answer(res, as_json, render, out, err);
    std::ostringstream view;
    const int rc = answer(res, false, render, view, err);
    if (rc != kExitOk) return rc;
    out << alerts_first(client, err) << view.str();
    return kExitOk;
}

std::map<std::string, std::string> workspace_query(const std::string& ws) {
    if (ws.empty()) return {};
    return {{"workspace", ws}};
}

// Whether the run exists and has not been placed yet but may be (pending, or starting its first
// attempt): its logs are a 404 until then, and a follower waits for them.
bool not_placed_yet(const ApiClient& client, const LogArgs& a) {
    const auto res = client.get("/runs/" + percent_encode(a.name), workspace_query(a.workspace));
    if (!res) return false;
    const json doc = json::parse(*res, nullptr, false);
    if (!doc.is_object() || !doc.contains("state") || !doc["state"].is_string()) return false;
    const std::string state = doc["state"].get<std::string>();
    const bool none = !doc.contains("attempts") || !doc["attempts"].is_number_integer() ||
                      doc["attempts"].get<std::int64_t>() == 0;
    return none && (state == "pending" || state == "starting");
}

// The run's state and number of attempts (GET /runs/NAME); nullopt when the answer is not one.
struct RunProgress {
    std::string state;
    std::int64_t attempts = 0;
};
std::optional<RunProgress> run_progress(const ApiClient& client, const LogArgs& a) {
    const auto res = client.get("/runs/" + percent_encode(a.name), workspace_query(a.workspace));
    if (!res) return std::nullopt;
    const json doc = json::parse(*res, nullptr, false);
    if (!doc.is_object() || !doc.contains("state") || !doc["state"].is_string()) return std::nullopt;
    RunProgress p;
    p.state = doc["state"].get<std::string>();
    if (doc.contains("attempts") && doc["attempts"].is_number_integer())
        p.attempts = doc["attempts"].get<std::int64_t>();
    return p;
}

bool ended_state(const std::string& state) {
    return state == "succeeded" || state == "failed" || state == "stopped" || state == "cancelled";
}

// `astra runs logs`: the log's text as is. Without --follow: one attempt (--attempt, else the
// latest) as it is now. --follow polls every 0.5 s from the last offset; with --attempt K it
// stops when attempt K is done (exit 0); without --attempt it prints every attempt from the
// first, each in full (its offset starts at 0), a line "--- attempt K ---" before attempt K >= 2,
// until the run has ended, then exits 0 when it succeeded, kExitRunNotSucceeded when it failed
// or was stopped. A run not placed yet: it waits for its first attempt
// (`astra runs submit X -- ...; astra runs logs X --follow` on a busy cluster).
int print_logs(const ApiClient& client, const LogArgs& a, std::ostream& out, std::ostream& err) {
    const bool whole_run = a.follow && a.attempt == 0;
    std::int64_t attempt = whole_run ? 1 : a.attempt;  // 0: the latest
    std::int64_t offset = 0;
    bool line_open = false;  // the last text printed did not end with a newline
    for (;;) {
        std::map<std::string, std::string> q = workspace_query(a.workspace);
        q["worker"] = std::to_string(a.worker);
        if (attempt > 0) q["attempt"] = std::to_string(attempt);
        q["offset"] = std::to_string(offset);
        const auto res = client.get("/runs/" + percent_encode(a.name) + "/logs", q);
        if (!res && a.follow && offset == 0 && (a.attempt == 0 && attempt <= 1) && not_placed_yet(client, a)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            continue;
        }
        if (!res) {
            err << "astra: " << res.error().message << '\n';
            return res.error().exit_code;
        }
        const json doc = json::parse(*res, nullptr, false);
        if (!doc.is_object() || !doc.contains("text") || !doc["text"].is_string() ||
            !doc.contains("next_offset") || !doc["next_offset"].is_number_integer()) {
            err << "astra: the server's answer is not a log: " << res->substr(0, 200) << '\n';
            return kExitServer;
        }
        const std::string text = doc["text"].get<std::string>();
        out << text;
        out.flush();
        if (!text.empty()) line_open = text.back() != '\n';
        const std::int64_t next = doc["next_offset"].get<std::int64_t>();
        const bool done = doc.value("done", true);
        const bool more = doc.value("size", std::int64_t{0}) > next;
        offset = next;
        if (more) continue;
        if (!a.follow) return kExitOk;
        if (done && !whole_run) return kExitOk;
        if (done) {  // this attempt is over: the next one, or the run's end
            const auto run = run_progress(client, a);
            if (run && run->attempts > attempt) {
                ++attempt;
                offset = 0;
                if (line_open) out << '\n';
                out << "--- attempt " << attempt << " ---\n";
                out.flush();
                line_open = false;
                continue;
            }
            if (run && ended_state(run->state)) {
                if (run->state == "succeeded") return kExitOk;
                err << "astra: run '" << terminal_safe(a.name) << "' " << run->state << '\n';
                return kExitRunNotSucceeded;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
}

// The first argument that is not UTF-8, as a usage message naming its flag (or position);
// nullopt when all are. Every argument may end up in a JSON body or a URL, and JSON is UTF-8.
std::optional<std::string> non_utf8_argument(int argc, const char* const* argv) {
    bool after_dashes = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--") after_dashes = true;
        if (utf8_valid(a)) continue;
        std::string what;
        if (after_dashes) {
            what = "the command after -- (argument " + std::to_string(i) + ")";
        } else if (a.starts_with("--") && a.find('=') != std::string_view::npos) {
            what = "the value of " + terminal_safe(a.substr(0, a.find('=')));
        } else if (i > 1 && std::string_view(argv[i - 1]).starts_with("-")) {
            what = "the value of " + terminal_safe(argv[i - 1]);
        } else {
            what = "argument " + std::to_string(i) + " ('" + terminal_safe(a) + "')";
        }
        return what + " is not valid UTF-8 (names, commands and values travel as JSON, which is UTF-8)";
    }
    return std::nullopt;
}

}  // namespace

int run_astra(int argc, const char* const* argv, const char* api_env, const char* token_env,
              std::ostream& out, std::ostream& err) {
    CLI::App app{
        "astra: the Astraeus service's command line (runs and goodput).\n"
        "Configured by ASTRALYX_API (the API's base URL, e.g. http://127.0.0.1:8080/v1) and\n"
        "ASTRALYX_TOKEN (an API token). Exit codes: 0 ok; 2 usage error, missing configuration\n"
        "or a refusal by the server (4xx: its message is printed); 1 cannot connect, or a\n"
        "server error (5xx); 3 the run followed by `astra runs logs --follow` (without\n"
        "--attempt) failed or was stopped. Run `astra COMMAND --help` for each command.",
        "astra"};
    // The same version as `astraeus --version` (a bug report names both); it said "A
    // subcommand is required".
    app.set_version_flag("--version", ASTRAEUS_VERSION);
    app.require_subcommand(1);
    std::string cacert;
    app.add_option("--cacert", cacert,
                   "verify an https server with this CA certificate (PEM) instead of the system's CAs");

    // astra astraeus goodput
    auto* astraeus_cmd = app.add_subcommand("astraeus", "Astraeus views (goodput)");
    astraeus_cmd->require_subcommand(1);
    GoodputArgs g;
    auto* goodput_cmd = astraeus_cmd->add_subcommand(
        "goodput",
        "Where the GPU time went, in GPU-hours: HELD, USED (productive), GOODPUT = used / held,\n"
        "then the held part of each category (IDLE STALLED START RESTART FAILURE PREEMPT) and\n"
        "WAITING (asked for, not held). One row per --by value, then TOTAL.\n"
        "Default period: the last 7 days. --weeks N: the last N complete ISO weeks plus the\n"
        "current one, a block per week. --run NAME: that run since it was submitted.\n"
        "Alerts pending or firing (goodput_drop; threshold alerts for operators) come first.");
    auto* by = goodput_cmd->add_option("--by", g.by,
                                       "rows per run, workspace, machine or pool (default workspace)")
        ->check(CLI::IsMember({"run", "workspace", "machine", "pool"}));
    auto* days = goodput_cmd->add_option("--days", g.days,
                                         "the last N days, or the N days before --end (default 7)")
                     ->check(CLI::Range(1, 400));
    auto* start = goodput_cmd->add_option("--start", g.start,
                                          "period start, RFC 3339 (e.g. 2026-10-01T00:00:00Z)");
    auto* end = goodput_cmd->add_option("--end", g.end, "period end, RFC 3339 (default now)");
    auto* weeks = goodput_cmd->add_option("--weeks", g.weeks,
                                          "N complete ISO weeks (0..56) plus the current one, a "
                                          "block each")
                      ->check(CLI::Range(0, 56));
    auto* run = goodput_cmd->add_option("--run", g.run, "one run's goodput since it was submitted");
    goodput_cmd->add_option("--workspace", g.workspace,
                            "with --run: the run's workspace (org-admin tokens, when ambiguous)");
    goodput_cmd->add_flag("--json", g.as_json, "print the server's JSON as is");
    days->excludes(start)->excludes(weeks)->excludes(run);  // --days N --end T: N days to T
    weeks->excludes(start)->excludes(end)->excludes(run);
    run->excludes(start)->excludes(end)->excludes(by);

    // astra runs ...
    auto* runs_cmd = app.add_subcommand("runs", "submit, list, show and stop runs, and print their logs");
    runs_cmd->require_subcommand(1);
    SubmitArgs s;
    auto* submit = runs_cmd->add_subcommand(
        "submit", "submit a run: a gang of WORKERS workers, each holding GPUS-PER-WORKER GPUs, "
                  "each running COMMAND:\n  astra runs submit NAME [--workers N] [--gpus-per-worker G] "
                  "[--env K=V]... [--time-limit S] -- COMMAND [ARGS...]");
    submit->add_option("name", s.name, "the run's name (unique in its workspace)")->required();
    submit->add_option("argv", s.argv, "after --: the command and its arguments, run as given (no shell)");
    submit->add_option("--workers", s.workers, "number of workers (the gang; default 1)")
        ->check(whole_number(1, api::kMaxWorkers, "WORKERS"));
    submit->add_option("--gpus-per-worker", s.gpus_per_worker, "GPUs each worker holds (default 1)")
        ->check(whole_number(1, api::kMaxGpusPerWorker, "GPUS"));
    submit->add_option("--env", s.env, "K=V: an environment variable of the workers (repeatable)")
        ->allow_extra_args(false);
    submit->add_option("--workdir", s.workdir, "the workers' working directory (an absolute path; "
                                              "default: the run's directory)");
    submit->add_option("--running-at", s.running_at,
                       "up (default: running once every worker has started) or progress (at the "
                       "first progress report)")
        ->check(CLI::IsMember({"up", "progress"}));
    submit->add_option("--pool", s.pool, "the pool to run in (default: the cluster's first pool)");
    submit->add_option("--time-limit", s.time_limit_s, "time limit in seconds (default none)")
        ->check(whole_number(1, api::kMaxRunSeconds, "SECONDS"));
    submit->add_option("--workspace", s.workspace,
                       "the workspace (required with an org-admin token)");
    submit->add_option("--command", s.command, "the command as one string, run as /bin/sh -c STRING "
                                                "(or give it after --)");
    submit->add_option("--image", s.image, "a container image (refused: no executor declares a "
                                            "container runtime yet)");
    submit->add_option("--sim-duration", s.sim_duration_s,
                       "simulated executor only: seconds of work the run needs before it "
                       "succeeds (default: its time limit, or until stopped)")
        ->check(whole_number(1, api::kMaxRunSeconds, "SECONDS"));
    submit->add_flag("--json", s.as_json, "print the server's JSON as is");
    submit->add_option("--retries", s.retries,
                       "retries when no answer came back, or on a 429 or 5xx (default 4; each with "
                       "the same Idempotency-Key, so a run is never submitted twice)")
        ->check(whole_number(0, 10, "N"));

    LogArgs lg;
    auto* logs = runs_cmd->add_subcommand("logs", "print a worker's log (stdout and stderr) of one attempt");
    logs->add_option("name", lg.name, "the run's name")->required();
    logs->add_option("--worker", lg.worker, "the worker's index (default 0)")->check(kNonNegativeInt);
    logs->add_option("--attempt", lg.attempt,
                     "the attempt (default: the latest; with --follow: every attempt)")
        ->check(kPositiveInt);
    logs->add_option("--workspace", lg.workspace, "the run's workspace");
    logs->add_flag("--follow,-f", lg.follow,
                   "keep printing as the log grows. With --attempt K: until attempt K ends. "
                   "Without: every attempt from the first, each in full, a line '--- attempt K "
                   "---' before attempt K >= 2, until the run ends; exit code 0 when it "
                   "succeeded, 3 when it failed or was stopped (a run not placed yet: wait for "
                   "its first attempt)");

    RunArgs l;
    auto* list = runs_cmd->add_subcommand("list", "list the runs you can see, newest first");
    list->add_option("--state", l.state, "only runs in this state")
        ->check(CLI::IsMember({"pending", "starting", "running", "stopping", "succeeded",
                               "failed", "stopped", "cancelled"}));
    list->add_flag("--pending", l.pending,
                   "only pending runs, with their place in their pool's order, the estimated "
                   "start (the scheduler run forward from now; 'unknown' past its horizon) and "
                   "why they wait");
    list->add_option("--workspace", l.workspace, "only runs of this workspace (org-admin tokens)");
    list->add_option("--name", l.name, "only runs whose name contains this text (any case)");
    list->add_option("--limit", l.limit, "only the N newest runs (default: all, read page by page)")
        ->check(kPositiveInt);
    list->add_option("--page-size", l.page_size, "runs read per request (1..1000, default 1000)")
        ->check(whole_number(1, 1000, "N"));
    list->add_flag("--json", l.as_json, "print the server's JSON as is");

    RunArgs sh;
    auto* show = runs_cmd->add_subcommand("show", "show one run: state, reason, workers, attempts");
    show->add_option("name", sh.name, "the run's name")->required();
    show->add_option("--workspace", sh.workspace, "the run's workspace (org-admin tokens)");
    show->add_flag("--json", sh.as_json, "print the server's JSON as is");

    RunArgs st;
    auto* stop = runs_cmd->add_subcommand(
        "stop", "stop a run (it winds down; the time counts as productive)");
    stop->add_option("name", st.name, "the run's name")->required();
    stop->add_option("--workspace", st.workspace, "the run's workspace (org-admin tokens)");
    stop->add_flag("--json", st.as_json, "print the server's JSON as is");

    MachinesCommands machines;  // astra machines ... (astra_machines.hpp)
    add_machines_commands(app, machines);

    if (auto bad = non_utf8_argument(argc, argv)) {
        err << "astra: " << *bad << '\n';
        return kExitUsage;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e, out, err);
        return rc == 0 ? kExitOk : kExitUsage;
    }

    // A usage error before the configuration: it needs no server.
    if (submit->parsed() && !s.command.empty() && !s.argv.empty()) {
        err << "astra runs submit: give the command either with --command STRING or after --, not both\n";
        return kExitUsage;
    }

    auto client = ApiClient::from_env(api_env, token_env);
    if (!client) {
        err << "astra: " << client.error().message << '\n';
        return client.error().exit_code;
    }
    if (!cacert.empty()) {
        if (auto ok = client->set_ca_cert(cacert); !ok) {
            err << "astra: " << ok.error().message << '\n';
            return kExitUsage;
        }
    }

    if (machines.parsed()) return run_machines(machines, *client, out, err);
    if (goodput_cmd->parsed()) {
        if (!g.run.empty())
            return answer(client->get("/runs/" + percent_encode(g.run) + "/goodput",
                                      workspace_query(g.workspace)),
                          g.as_json, run_goodput_text, out, err);
        if (!g.workspace.empty()) {
            err << "astra: --workspace goes with --run\n";
            return kExitUsage;
        }
        if (weeks->count() > 0)
            return goodput_view(*client,
                                client->get("/goodput/weekly",
                                            {{"weeks", std::to_string(g.weeks)}, {"by", g.by}}),
                                g.as_json, goodput_weekly_text, out, err);
        std::map<std::string, std::string> q{{"by", g.by}};
        if (g.days > 0) q["days"] = std::to_string(g.days);
        if (!g.start.empty()) q["start"] = g.start;
        if (!g.end.empty()) q["end"] = g.end;
        return goodput_view(*client, client->get("/goodput", q), g.as_json, goodput_rows_text,
                            out, err);
    }
    if (submit->parsed()) {
        // No "pool" unless given: the API then takes the cluster's first pool (docs/api.md).
        json body{{"name", s.name}, {"workers", s.workers}, {"gpus_per_worker", s.gpus_per_worker}};
        if (!s.pool.empty()) body["pool"] = s.pool;
        if (s.time_limit_s > 0) body["time_limit_s"] = s.time_limit_s;
        if (!s.command.empty()) body["command"] = s.command;
        if (!s.argv.empty()) body["command"] = s.argv;
        if (!s.env.empty()) {
            json env = json::object();
            for (const std::string& kv : s.env) {
                const auto eq = kv.find('=');
                if (eq == std::string::npos || eq == 0) {
                    err << "astra: --env expects K=V, got '" << kv << "'\n";
                    return kExitUsage;
                }
                env[kv.substr(0, eq)] = kv.substr(eq + 1);
            }
            body["env"] = env;
        }
        if (!s.workdir.empty()) body["workdir"] = s.workdir;
        if (!s.running_at.empty()) body["running_at"] = s.running_at;
        if (!s.image.empty()) body["image"] = s.image;
        if (!s.workspace.empty()) body["workspace"] = s.workspace;
        if (s.sim_duration_s > 0) body["sim_duration_s"] = s.sim_duration_s;
        auto res = client->submit_run(body.dump(), s.retries, err);
        // No command: optional where the executor runs none (--executor sim), else the API's 400
        // names its JSON field; say it in astra's terms, with the usage line.
        if (!res && s.command.empty() && s.argv.empty() &&
            res.error().message.find("'command' is required") != std::string::npos) {
            err << "astra runs submit: no command given; usage: astra runs submit NAME [options] -- COMMAND "
                   "[ARGS...] (or --command STRING)\n";
            return kExitUsage;
        }
        return answer(res, s.as_json, run_detail_text, out, err);
    }
    if (logs->parsed()) return print_logs(*client, lg, out, err);
    if (list->parsed()) {
        std::map<std::string, std::string> q;
        if (l.pending && !l.state.empty() && l.state != "pending") {
            err << "astra: --pending lists pending runs: it cannot go with --state " << l.state << '\n';
            return kExitUsage;
        }
        if (l.pending) l.state = "pending";
        if (!l.state.empty()) q["state"] = l.state;
        if (!l.workspace.empty()) q["workspace"] = l.workspace;
        if (!l.name.empty()) q["name"] = l.name;
        return answer(list_all_runs(*client, q, l.limit, l.page_size), l.as_json,
                      l.pending ? pending_runs_text : runs_list_text, out, err);
    }
    if (show->parsed())
        return answer(client->get("/runs/" + percent_encode(sh.name), workspace_query(sh.workspace)),
                      sh.as_json, run_detail_text, out, err);
    if (stop->parsed()) {
        // A run that already ended: say so (the server's answer would be the run as it was,
        // which read as if the stop had done something). Exit 0: it is not running, as asked.
        if (!st.as_json)
            if (const auto was = client->get("/runs/" + percent_encode(st.name), workspace_query(st.workspace))) {
                const json doc = json::parse(*was, nullptr, false);
                if (doc.is_object() && doc.contains("state") && doc["state"].is_string() &&
                    ended_state(doc["state"].get<std::string>())) {
                    const std::string why = stop_cause_text(doc);
                    out << "run '" << terminal_safe(st.name) << "' already ended ("
                        << terminal_safe(doc["state"].get<std::string>()) << (why.empty() ? "" : ", " + why)
                        << "): nothing to stop\n";
                    return kExitOk;
                }
            }
        return answer(client->post("/runs/" + percent_encode(st.name) + "/stop", "{}",
                                   workspace_query(st.workspace)),
                      st.as_json, run_detail_text, out, err);
    }
    err << "astra: no command given (see astra --help)\n";
    return kExitUsage;
}

}  // namespace astraeus::client
