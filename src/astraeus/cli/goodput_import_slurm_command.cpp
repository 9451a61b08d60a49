// `astraeus goodput import-slurm SACCT_OUTPUT`: goodput for a Slurm cluster that keeps its own
// scheduler. Reads Slurm accounting (`sacct --json`, or `sacct --parsable2` with the fields of
// docs/slurm.md), turns every job segment into the goodput event log (docs/formats/goodput-events.md)
// and counts it with the same replay as `astraeus goodput replay`; prints the table by run,
// machine, pool (partition) or workspace (account), over a period or by ISO week. Categories that
// Slurm's records cannot give are shown as "-" (slurm_goodput_table.hpp). Exit codes: 0 ok, 2 bad
// input or usage (one message on stderr, nothing on stdout), 1 an output failure.
#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "astraeus/base/terminal_text.hpp"
#include "astraeus/cli/commands.hpp"
#include "astraeus/cli/goodput_cli_common.hpp"
#include "astraeus/cli/input_file.hpp"
#include "astraeus/cli/sacct_timezone.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/goodput_io/event_log.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/slurm_import/sacct_records.hpp"
#include "astraeus/slurm_import/segments_to_events.hpp"
#include "astraeus/slurm_import/slurm_goodput_table.hpp"

namespace astraeus::cli {
namespace {
using namespace astraeus::goodput;

struct ImportArgs {
    std::string input;
    std::string format = "auto";
    std::string events_out;
    std::string by = "workspace";
    std::optional<int> weeks;
    std::string run;
    std::string start, end;
    std::string timezone;
    bool json = false;
};

int run_import(const ImportArgs& a) {
    auto usage = [](const std::string& m) { return goodput_usage_error("import-slurm", m); };
    const auto by = parse_by(a.by);
    if (!by) return usage("--by: " + by.error().message);
    const auto format = slurm::parse_sacct_format(a.format);
    if (!format) return usage("--format: " + format.error().message);
    if (const auto e = weeks_run_error(a.weeks, a.run)) return usage(*e);
    const auto start = parse_time_arg("--start", a.start);
    if (!start) return usage(start.error().message);
    // --end now: the current time (jobs still running are counted up to it).
    const auto end = a.end == "now" ? Result<std::optional<Seconds>>{std::optional<Seconds>{
                                          static_cast<Seconds>(std::time(nullptr))}}
                                    : parse_time_arg("--end", a.end);
    if (!end) return usage(end.error().message);
    auto zone = ZoneScope::make(a.timezone);
    if (!zone) return usage(zone.error().message);
    // --events-out naming the input would replace the sacct output with the events.
    if (auto ok = not_the_input("--events-out", a.events_out, a.input); !ok) return usage(ok.error().message);

    std::string text;
    const std::string name = a.input == "-" ? "<stdin>" : a.input;
    if (a.input == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), {});
    } else {
        auto in = open_input_file(a.input);  // a directory, a gzip file: said or read
        if (!in) return usage(in.error().message);
        text.assign(std::istreambuf_iterator<char>(**in), {});
    }
    auto segments = slurm::parse_sacct(text, name, *format, zone->wall());
    if (!segments) return usage(segments.error().message);
    // Records missing because sacct ran without -D can be detected only from a restart count.
    const std::string no_restarts =
        slurm::restart_count_given(*segments)
            ? ""
            : "no restart count in the input (sacct's Restarts field; restart_cnt in the JSON of "
              "Slurm 23.02+): requeued segments missing from it (sacct without -D) cannot be "
              "detected; add Restarts to --format";
    auto log = slurm::segments_to_events(std::move(*segments));
    if (!log) return usage(log.error().message);
    if (log->jobs == 0)
        return usage(name + ": no job with GPUs (allocated TRES without gres/gpu: is "
                     "AccountingStorageTRES=gres/gpu set in slurm.conf?)");
    if (!a.events_out.empty()) {
        std::ofstream out(a.events_out, std::ios::binary | std::ios::trunc);
        out << log->events;
        out.close();
        if (!out) return usage("--events-out " + a.events_out + ": cannot write");
    }

    ReplayOptions opt;
    opt.end_s = *end ? *end : log->last_s;
    Replayer replayer(opt);
    {
        std::istringstream in(log->events);
        auto r = replay_stream(in, name + " (as goodput events)", replayer);
        if (!r) return usage(r.error().message);
    }
    const Seconds end_s = replayer.end_s();

    std::string out;
    nlohmann::json j;
    if (!a.run.empty()) {
        const int id = replayer.run_id(a.run);
        if (id < 0) return usage("--run: no job '" + a.run + "' with GPUs in " + name);
        const Counts c = replayer.ledger().run_total(id);
        if (a.json) {
            j = slurm::slurm_ledger_json(c);
            j["run"] = a.run;
            j["source"] = "slurm";
            j["slurm_allocated_gpu_seconds"] =
                slurm::slurm_allocated_gpu_seconds(log->held[a.run], end_s);
            j["not_recorded_by_slurm"] = slurm::not_recorded_by_slurm();
        } else {
            out = slurm::slurm_goodput_table("RUN", {{a.run, c}});
        }
    } else if (a.weeks) {
        auto weeks = replayer.ledger().weekly(*by, end_s, *a.weeks);
        if (!weeks) return usage(weeks.error().message);
        j["source"] = "slurm";
        j["by"] = std::string(to_string(*by));
        j["weeks"] = nlohmann::json::array();
        for (const WeekRows& w : *weeks) {
            const auto rows = named(replayer, *by, w.rows);
            if (a.json) {
                nlohmann::json wj = slurm::slurm_rows_json(to_string(*by), w.week_start_s,
                                                           w.week_start_s + kWeek, rows);
                wj.erase("by");
                wj.erase("source");
                wj.erase("not_recorded_by_slurm");
                wj["week"] = iso_week_label(w.week_start_s);
                j["weeks"].push_back(std::move(wj));
            } else {
                if (!out.empty()) out += "\n";
                out += week_heading(w.week_start_s);
                out += slurm::slurm_goodput_table(upper(to_string(*by)), rows);
            }
        }
        j["not_recorded_by_slurm"] = slurm::not_recorded_by_slurm();
    } else {
        const Seconds from = start->value_or(replayer.first_s());
        auto period = table_period(from, end_s, start->has_value(), *end ? "" : "the latest time in the records");
        if (!period) return usage(period.error().message);
        const auto rows = named(replayer, *by, replayer.ledger().query(*by, *period));
        if (a.json) {
            j = slurm::slurm_rows_json(to_string(*by), from, end_s, rows);
            if (*by == By::Run)  // Slurm's own figure beside the minute count
                for (auto& row : j["rows"])
                    row["slurm_allocated_gpu_seconds"] = slurm::slurm_allocated_gpu_seconds(
                        log->held[row["run"].get<std::string>()], end_s);
        } else out = slurm::slurm_goodput_table(upper(to_string(*by)), rows);
    }

    std::string notes = fmt::format("{}: {} jobs with GPUs, {} segments\n", terminal_safe(name), log->jobs,
                                    log->segments);
    if (log->jobs_without_gpus > 0)
        notes += fmt::format("jobs without GPUs (left out): {}\n", log->jobs_without_gpus);
    if (log->jobs_still_going > 0)
        notes += fmt::format("jobs still running or waiting at {} (counted up to it): {}\n",
                             format_rfc3339(end_s), log->jobs_still_going);
    for (const auto& n : log->notes) notes += terminal_safe(n) + "\n";
    if (!no_restarts.empty()) notes += no_restarts + "\n";
    if (a.json) {
        j["jobs"] = log->jobs;
        j["segments"] = log->segments;
        j["jobs_without_gpus"] = log->jobs_without_gpus;
        j["jobs_still_going"] = log->jobs_still_going;
        j["notes"] = log->notes;
        if (!no_restarts.empty()) j["notes"].push_back(no_restarts);
        // sacct text may hold bytes that are not UTF-8: replaced (U+FFFD), never a throw.
        out = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    }
    return write_goodput_output("import-slurm", notes, out);
}

}  // namespace

std::function<int()> add_goodput_import_slurm(CLI::App& goodput) {
    auto args = std::make_shared<ImportArgs>();
    auto* cmd = goodput.add_subcommand(
        "import-slurm",
        "goodput from Slurm accounting (sacct --json or --parsable2): held and waiting GPU-hours");
    cmd->footer(
        "Turn Slurm accounting into the goodput event log and its table: one run per job (every\n"
        "requeued segment), workspace = account, pool = partition, machines = the segment's nodes,\n"
        "GPUs from the allocated TRES (gres/gpu). Slurm records no GPU utilization, progress or\n"
        "start-up phase: those columns are shown as '-' (docs/slurm.md).\n"
        "\n"
        "Input, either (times in UTC):\n"
        "  TZ=UTC sacct --json -a -D -S 2026-11-01 -E now > jobs.json\n"
        "  TZ=UTC sacct -a -X -D -P -S 2026-11-01 -E now \\\n"
        "    --format=JobID,JobName,Account,Partition,State,Submit,Start,End,NodeList,\\\n"
        "             AllocTRES,ReqTRES,Restarts\n"
        "(-D: every requeued segment; with Restarts, a job missing segments is refused)\n"
        "\n"
        "Examples:\n"
        "  astraeus goodput import-slurm jobs.json --by run\n"
        "  astraeus goodput import-slurm jobs.txt --weeks 4 --by pool\n"
        "  astraeus goodput import-slurm jobs.json --events-out events.jsonl");
    cmd->add_option("SACCT_OUTPUT", args->input, "sacct --json or --parsable2 output, - for stdin")
        ->required();
    cmd->add_option("--format", args->format, "auto (default: JSON when it starts with '{'), json "
                    "or parsable2");
    cmd->add_option("--events-out", args->events_out,
                    "also write the goodput event log (JSON Lines) to this file");
    cmd->add_option("--by", args->by, "rows: workspace (account, default), run (job), machine "
                    "(node) or pool (partition)");
    cmd->add_option("--weeks", args->weeks,
                    "one block per ISO week: the last N complete weeks before the end and the "
                    "current one (0..56)");
    cmd->add_option("--run", args->run, "one job's ledger (the job id, e.g. 123 or 123_4)");
    cmd->add_option("--start", args->start,
                    "the period's start, RFC 3339 or Unix seconds (default: the first record)");
    cmd->add_option("--end", args->end,
                    "count up to this time, or now (default: the latest time in the records); "
                    "jobs still running are counted up to it");
    cmd->add_option("--timezone", args->timezone,
                    "the zone of times printed without one (sacct prints local time): UTC, "
                    "+05:00, or a name such as America/New_York (default: refused unless this "
                    "machine's zone is UTC)");
    cmd->add_flag("--json", args->json, "print JSON ({source, by, start, end, rows, total, "
                  "not_recorded_by_slurm, ...})");
    return [cmd, args] {
        if (!cmd->parsed()) return -1;
        return run_import(*args);
    };
}

}  // namespace astraeus::cli
