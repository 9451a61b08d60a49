// `astraeus goodput replay EVENTS`: accounts a goodput event log (docs/formats/goodput-events.md)
// and prints the goodput page's table (or its REST JSON). Exit codes: 0 ok, 2 bad input or usage
// (one message on stderr, nothing on stdout), 1 an output failure. Notes (alerts, stragglers,
// invalid utilization samples, minutes without one) go to stderr, and into the JSON with --json.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "astraeus/base/error.hpp"
#include "astraeus/base/terminal_text.hpp"
#include "astraeus/cli/commands.hpp"
#include "astraeus/cli/goodput_cli_common.hpp"
#include "astraeus/cli/input_file.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/goodput_io/event_log.hpp"
#include "astraeus/goodput_io/ledger_json.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/goodput_io/table.hpp"

namespace astraeus::cli {
namespace {
using namespace astraeus::goodput;

struct ReplayArgs {
    std::string events;
    std::string by = "workspace";
    std::optional<int> weeks;
    std::string run;
    std::string start, end;
    bool json = false;
    std::optional<Seconds> stall_timeout_s;
    std::optional<double> busy_pct;
};

std::string pct(double v) { return fmt::format("{:.0f}%", v * 100.0); }

std::string alert_line(const AlertRecord& a) {
    std::string s = format_rfc3339(a.at_s) + " alert " + a.alert;
    if (a.op) s += fmt::format(" {} {}", *a.op, *a.threshold);
    s += " " + a.scope;
    if (!a.name.empty()) s += " '" + terminal_safe(a.name) + "'";
    s += " " + a.state;
    if (a.previous)
        s += " (goodput " + pct(a.value) + " over the last hour, " + pct(*a.previous) +
             " over the 24 hours before)";
    else
        s += fmt::format(" (value {})", a.value);
    return s + "\n";
}

// The keys and meanings of the service's GET /v1/alerts (Service::alerts): name, scope,
// target, state, since (the transition: the hour boundary it happened at), value; then the
// replay's extras. The log names no cluster: a cluster alert's target is "".
nlohmann::json alert_json(const AlertRecord& a) {
    nlohmann::json j;
    j["name"] = a.alert;
    j["scope"] = a.scope;
    j["target"] = a.name;
    j["state"] = a.state;
    j["since"] = format_rfc3339(a.at_s);
    j["value"] = a.value;
    if (a.previous) j["previous_day_goodput"] = *a.previous;
    if (a.op) j["op"] = *a.op;
    if (a.threshold) j["threshold"] = *a.threshold;
    return j;
}

int run_replay(const ReplayArgs& a) {
    auto usage = [](const std::string& m) { return goodput_usage_error("replay", m); };
    const auto by = parse_by(a.by);
    if (!by) return usage("--by: " + by.error().message);
    ReplayOptions opt;
    opt.stall_timeout_s = a.stall_timeout_s;
    opt.busy_pct = a.busy_pct;
    if (opt.stall_timeout_s && *opt.stall_timeout_s < 1)
        return usage("--stall-timeout: expected seconds >= 1");
    if (opt.busy_pct && !(*opt.busy_pct >= 0 && *opt.busy_pct <= 100))
        return usage("--busy-pct: expected a percent 0..100");
    const auto start = parse_time_arg("--start", a.start);
    if (!start) return usage(start.error().message);
    const auto end = parse_time_arg("--end", a.end);
    if (!end) return usage(end.error().message);
    if (*end) opt.end_s = **end;
    if (const auto e = weeks_run_error(a.weeks, a.run)) return usage(*e);

    Replayer replayer(opt);
    {
        Result<void> r;
        if (a.events == "-") {
            r = replay_stream(std::cin, "<stdin>", replayer);
        } else {
            auto in = open_input_file(a.events);  // a directory, a gzip log: said or read
            if (!in) return usage(in.error().message);
            r = replay_stream(**in, a.events, replayer);
        }
        if (!r) return usage(r.error().message);
    }
    const Seconds end_s = replayer.end_s();

    std::string out;
    nlohmann::json j;
    if (!a.run.empty()) {
        const int id = replayer.run_id(a.run);
        if (id < 0) return usage("--run: no run '" + a.run + "' in " + a.events);
        const Counts c = replayer.ledger().run_total(id);
        if (a.json) {
            j["run"] = a.run;
            j.update(ledger_json(c));
        } else {
            out = goodput_table("RUN", {{a.run, c}});
        }
    } else if (a.weeks) {
        auto weeks = replayer.ledger().weekly(*by, end_s, *a.weeks);
        if (!weeks) return usage(weeks.error().message);
        j["by"] = std::string(to_string(*by));
        j["weeks"] = nlohmann::json::array();
        for (const WeekRows& w : *weeks) {
            const auto rows = named(replayer, *by, w.rows);
            if (a.json) {
                nlohmann::json wj = rows_json(to_string(*by), w.week_start_s,
                                              w.week_start_s + kWeek, rows);
                wj.erase("by");
                wj["week"] = iso_week_label(w.week_start_s);
                j["weeks"].push_back(std::move(wj));
            } else {
                if (!out.empty()) out += "\n";
                out += week_heading(w.week_start_s);
                out += goodput_table(upper(to_string(*by)), rows);
            }
        }
    } else {
        const Seconds from = start->value_or(replayer.first_s());
        auto period = table_period(from, end_s, start->has_value(), *end ? "" : "the last event");
        if (!period) return usage(period.error().message);
        const auto rows = named(replayer, *by, replayer.ledger().query(*by, *period));
        if (a.json) j = rows_json(to_string(*by), from, end_s, rows);
        else out = goodput_table(upper(to_string(*by)), rows);
    }

    // Notes: stderr always; in the JSON too.
    std::string notes;
    nlohmann::json alerts = nlohmann::json::array();
    for (const AlertRecord& r : replayer.alert_log()) {
        notes += alert_line(r);
        alerts.push_back(alert_json(r));
    }
    nlohmann::json stragglers = nlohmann::json::array();
    std::string straggler_text;
    for (int run : replayer.runs_with_straggler()) {
        const auto workers = replayer.stragglers_of(run);
        std::string ws;
        for (int w : workers) ws += (ws.empty() ? "" : " ") + std::to_string(w);
        if (!straggler_text.empty()) straggler_text += ", ";
        straggler_text += terminal_safe(replayer.run_names()[run]) + " (workers " + ws + ")";
        stragglers.push_back({{"run", replayer.run_names()[run]}, {"workers", workers}});
    }
    if (!straggler_text.empty())
        notes += "runs with a straggler at " + format_rfc3339(end_s) + ": " + straggler_text + "\n";
    if (replayer.invalid_samples() > 0) {
        // Where they are: the first lines with one (FILE:LINE), "..." when there are more.
        std::string at;
        for (const std::string& w : replayer.rejected_sample_where()) at += (at.empty() ? "" : ", ") + w;
        if (replayer.rejected_sample_where().size() == Replayer::kRejectedWhereMax) at += ", ...";
        notes += fmt::format("invalid utilization samples (rejected): {}{}\n", replayer.invalid_samples(),
                             at.empty() ? "" : ", at " + terminal_safe(at));
    }
    notes += unmeasured_note(replayer.unmeasured_gpu_s());  // as under the table
    if (a.json) {
        j["alerts"] = std::move(alerts);
        j["runs_with_straggler"] = std::move(stragglers);
        j["invalid_utilization_samples"] = replayer.invalid_samples();
        j["unmeasured_gpu_hours"] = gpu_hours(replayer.unmeasured_gpu_s());
        out = j.dump(2) + "\n";
    }
    return write_goodput_output("replay", notes, out);  // names in notes escaped where added
}

}  // namespace

std::function<int()> add_goodput(CLI::App& app) {
    auto* goodput = app.add_subcommand(
        "goodput", "goodput accounting: where the GPU time each run asked for went");
    goodput->require_subcommand(1);
    auto args = std::make_shared<ReplayArgs>();
    auto* replay = goodput->add_subcommand(
        "replay", "account a goodput event log (JSON Lines) and print the goodput table");
    replay->footer(
        "Account a goodput event log (JSON Lines, docs/formats/goodput-events.md) and print the\n"
        "goodput table: GPU-hours HELD, USED (productive), GOODPUT = used / held, IDLE, STALLED,\n"
        "START, RESTART, FAILURE, PREEMPT (held parts) and WAITING (asked for, not held), one row\n"
        "per workspace, run, machine or pool, then TOTAL. Runs still going at the end of the log\n"
        "(or --end) are counted up to then. Alerts fired or resolved at each hour boundary, runs\n"
        "with a straggler at the end, invalid utilization samples and running minutes without one\n"
        "are reported on stderr (and in --json). Bad input: exit 2, FILE:LINE: what was expected.\n"
        "\n"
        "One event per line, in time order, e.g.\n"
        "  {\"t\":\"2026-11-02T10:00:30Z\",\"event\":\"submit\",\"run\":\"llm\",\"workspace\":\"ml\","
        "\"pool\":\"a100\",\"workers\":2,\"gpus\":8}\n"
        "  {\"t\":\"2026-11-02T10:01:00Z\",\"event\":\"place\",\"run\":\"llm\",\"machine\":\"m1\"}\n"
        "  {\"t\":1793613720,\"event\":\"util\",\"run\":\"llm\",\"worker\":0,\"gpus_pct\":[97.5,98]}\n"
        "Events: config, submit, place, start, stop (reason owner|stall|preemption), fail, release,\n"
        "end, util, progress; no \"worker\" = every worker of the run.\n"
        "\n"
        "Examples:\n"
        "  astraeus goodput replay events.jsonl --by run\n"
        "  astraeus goodput replay events.jsonl --weeks 8 --by pool\n"
        "  astraeus goodput replay events.jsonl --run llm --json");
    replay->add_option("EVENTS", args->events, "the event log (JSON Lines), - for stdin")
        ->required();
    replay->add_option("--by", args->by, "rows: workspace (default), run, machine or pool");
    replay->add_option("--weeks", args->weeks,
                       "one block per ISO week: the last N complete weeks before the end and "
                       "the current one (0..56)");
    replay->add_option("--run", args->run, "one run's ledger since it was submitted");
    replay->add_option("--start", args->start,
                       "the period's start, RFC 3339 or Unix seconds (default: the first "
                       "event); at most 400 days before the end");
    replay->add_option("--end", args->end,
                       "account up to this time, RFC 3339 or Unix seconds: later events are "
                       "ignored, runs still going are counted to it (default: the last event)");
    replay->add_flag("--json", args->json,
                     "print the REST ledger JSON ({by, start, end, rows, total}) with alerts, "
                     "stragglers and sample notes");
    replay->add_option("--stall-timeout", args->stall_timeout_s,
                       "seconds without progress before a worker is stalled (default: the "
                       "log's config line, else 600)");
    replay->add_option("--busy-pct", args->busy_pct,
                       "mean utilization of a minute at or above which it is productive "
                       "(default: the log's config line, else 5)");
    auto import_slurm = add_goodput_import_slurm(*goodput);
    return [replay, args, import_slurm] {
        if (const int rc = import_slurm(); rc >= 0) return rc;
        if (!replay->parsed()) return 2;
        return run_replay(*args);
    };
}

}  // namespace astraeus::cli
