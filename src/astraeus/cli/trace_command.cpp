// `astraeus trace`: inspect and prepare traces (stats, slice, assign-tenants, convert). Every
// subcommand reads one trace (--trace PATH, --format NAME|auto) and writes the native format
// (docs/formats/native-trace.md) through a temporary file renamed into place, so a failed run
// leaves no partial output. Exit codes: 0 ok, 2 bad input or usage (one line on stderr), 1 an
// output write failure.
#include <fmt/format.h>

#include <algorithm>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "astraeus/base/count_text.hpp"
#include "astraeus/cli/commands.hpp"
#include "astraeus/cli/input_file.hpp"
#include "astraeus/cli/number_checks.hpp"
#include "astraeus/trace/civil_time.hpp"
#include "astraeus/trace/csv.hpp"
#include "astraeus/trace/native_trace.hpp"
#include "astraeus/trace/read_trace.hpp"
#include "astraeus/trace/slice.hpp"
#include "astraeus/trace/stats.hpp"
#include "astraeus/trace/tenant_assign.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/trace_export/run_history_export.hpp"

namespace astraeus::cli {
namespace {

struct TraceArgs {
    std::string trace, format = "auto", out;
    // stats
    bool json = false;
    // slice
    std::string from, to;
    int busiest_days = 0;
    Seconds max_duration_s = -1;
    // assign-tenants
    std::string mix_from, mix_format = "auto";
    std::uint64_t seed = 1;
    // export
    std::string data_dir, since, until;
};

struct Failure {
    int code;
    std::string message;
};

// Writes `content` to `path` via a temporary file in the same directory and a rename.
Result<void> write_atomically(const std::string& path, const std::string& content) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return fail(path + ": the directory " + dir.string() + " does not exist");
    const fs::path tmp = dir / fmt::format(".{}.tmp{}", target.filename().string(), ::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << content;
        if (!out.flush()) {
            out.close();
            fs::remove(tmp, ec);
            return fail(tmp.string() + ": write failed");
        }
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        return fail(path + ": cannot rename into place: " + ec.message());
    }
    return {};
}

// A --from/--to value: "YYYY-MM-DD[ HH:MM:SS]" or "YYYY-MM-DDTHH:MM:SS[Z]" in UTC, or an integer
// number of seconds since the trace epoch. Returns seconds since the trace epoch.
Result<Seconds> parse_time_arg(const std::string& opt, const std::string& s, const Workload& w) {
    if (const auto v = parse_int(s)) return *v;
    if (const auto t = parse_civil(s)) {
        // Epoch 0 is a trace without calendar dates: a date would be read as days after
        // 1970-01-01 and select nothing ("no job is submitted in the window").
        if (w.epoch_unix_s == 0)
            return fail(opt + " '" + s +
                        "': the trace has no calendar dates (its epoch is 0); give seconds since "
                        "its start");
        return *t - w.epoch_unix_s;
    }
    return fail(opt + " '" + s +
                "': expected a UTC date YYYY-MM-DD[THH:MM:SS] or seconds since "
                "the trace epoch");
}

Result<Workload> load(const TraceArgs& a, SkipCounts* skips) {
    SkipCounts local;
    auto w = read_trace(a.trace, a.format, skips ? skips : &local);
    if (w && (skips ? skips : &local)->total() > 0)
        std::cerr << "astraeus trace: note: " << a.trace << ": skipped "
                  << (skips ? skips : &local)->summary() << "\n";
    return w;
}

int finish(const std::string& sub, const TraceArgs& a, const Result<Workload>& w) {
    if (!w) {
        std::cerr << "astraeus trace " << sub << ": error: " << w.error().message << "\n";
        return 2;
    }
    // --out naming an input would replace it: `convert --trace x.csv --out x.csv` lost the
    // original file (read-only files too, as root).
    for (const std::string* in : {&a.trace, &a.mix_from})
        if (auto ok = not_the_input("--out", a.out, *in); !ok) {
            std::cerr << "astraeus trace " << sub << ": error: " << ok.error().message << "\n";
            return 2;
        }
    auto written = write_atomically(a.out, write_native(*w));
    if (!written) {
        std::cerr << "astraeus trace " << sub << ": error: " << written.error().message << "\n";
        return 1;
    }
    const TraceStats s = compute_stats(*w);
    std::cerr << fmt::format(
        "astraeus trace {}: wrote {} ({}, {:.1f} GPU-hours, {})\n", sub, a.out, count_text(s.jobs, "job"),
        s.gpu_hours(), count_text(std::ssize(w->tenants), "tenant"));
    return 0;
}

int error2(const std::string& sub, const std::string& message) {
    std::cerr << "astraeus trace " << sub << ": error: " << message << "\n";
    return 2;
}

int run_stats(const TraceArgs& a) {
    SkipCounts skips;
    auto w = read_trace(a.trace, a.format, &skips);
    if (!w) return error2("stats", w.error().message);
    TraceStats s = compute_stats(*w);
    s.skipped = skips;
    if (a.json)
        std::cout << stats_json(s).dump(2) << "\n";
    else
        std::cout << a.trace << ":\n" << stats_text(s);
    return 0;
}

int run_slice(const TraceArgs& a) {
    const bool window = !a.from.empty() || !a.to.empty();
    if (window == (a.busiest_days > 0))
        return error2("slice", "give either --from and --to, or --busiest-days N");
    if (window && (a.from.empty() || a.to.empty()))
        return error2("slice", "--from and --to go together");
    if (a.max_duration_s == 0 || a.max_duration_s < -1)
        return error2("slice", "--max-duration must be > 0 seconds");
    auto w = load(a, nullptr);
    if (!w) return error2("slice", w.error().message);
    if (a.max_duration_s > 0)
        *w = cap_duration(std::move(*w), a.max_duration_s);  // before choosing days
    Seconds from = 0, to = 0;
    if (window) {
        auto f = parse_time_arg("--from", a.from, *w);
        if (!f) return error2("slice", f.error().message);
        auto t = parse_time_arg("--to", a.to, *w);
        if (!t) return error2("slice", t.error().message);
        if (*f >= *t) return error2("slice", "--from must be before --to");
        from = *f;
        to = *t;
    } else {
        auto best = busiest_days(*w, a.busiest_days);
        if (!best) return error2("slice", best.error().message);
        from = best->from_s;
        to = best->to_s;
        const double gpu_hours = static_cast<double>(best->demand_gpu_seconds) / 3600.0;
        if (w->epoch_unix_s == 0)  // no calendar dates: days count from the trace epoch
            std::cerr << fmt::format(
                "astraeus trace slice: busiest {} days: days {} .. {} after the trace epoch "
                "({:.1f} GPU-hours submitted; the trace has no calendar dates)\n",
                a.busiest_days, best->from_s / kDay, best->from_s / kDay + a.busiest_days - 1,
                gpu_hours);
        else
            std::cerr << fmt::format(
                "astraeus trace slice: busiest {} days: {} .. {} UTC "
                "({:.1f} GPU-hours submitted)\n",
                a.busiest_days, format_utc_date(best->first_day_unix_s),
                format_utc_date(best->first_day_unix_s + (a.busiest_days - 1) * kDay), gpu_hours);
        // More days than the submissions span: the window is the whole trace; say so.
        const auto [first, last] = std::minmax_element(
            w->jobs.begin(), w->jobs.end(), [](const Job& x, const Job& y) { return x.submit_s < y.submit_s; });
        const Seconds span_days = first == w->jobs.end() ? 0 : (last->submit_s - first->submit_s) / kDay + 1;
        if (a.busiest_days > span_days)
            std::cerr << fmt::format(
                "astraeus trace slice: note: the trace's submissions span only {} day{}, so the "
                "busiest {} days are all of it\n",
                span_days, span_days == 1 ? "" : "s", a.busiest_days);
    }
    Workload sliced = slice_window(*w, from, to);
    if (sliced.jobs.empty()) return error2("slice", "no job is submitted in the window");
    return finish("slice", a, sliced);
}

int run_assign(const TraceArgs& a) {
    SkipCounts mix_skips;
    auto source = read_trace(a.mix_from, a.mix_format, &mix_skips);
    if (!source) return error2("assign-tenants", source.error().message);
    const TenantMix mix = mix_from_workload(*source);
    auto w = load(a, nullptr);
    if (!w) return error2("assign-tenants", w.error().message);
    std::cerr << fmt::format(
        "astraeus trace assign-tenants: mix of {} jobs in {} tenants from {}\n", mix.total(),
        mix.tenants.size(), a.mix_from);
    return finish("assign-tenants", a, assign_tenants(std::move(*w), mix, a.seed));
}

int run_convert(const TraceArgs& a) {
    return finish("convert", a, load(a, nullptr));
}

// `trace export`: the service's run history -> OUT, OUT-tenants.json, OUT-machines.csv.
int run_export(const TraceArgs& a) {
    std::optional<Seconds> since, until;
    if (!a.since.empty()) {
        auto t = goodput::parse_rfc3339(a.since);
        if (!t) return error2("export", "--since: " + t.error().message);
        since = *t;
    }
    if (!a.until.empty()) {
        auto t = goodput::parse_rfc3339(a.until);
        if (!t) return error2("export", "--until: " + t.error().message);
        until = *t;
    }
    if (since && until && *since >= *until) return error2("export", "--since must be before --until");
    // An --out onto the store itself would replace the service's database.
    {
        std::string stem = a.out;
        if (stem.size() > 4 && stem.ends_with(".csv")) stem.resize(stem.size() - 4);
        for (const std::string& out : {a.out, stem + "-tenants.json", stem + "-machines.csv"})
            for (const char* db : {"astraeus.db", "astraeus.db-wal", "astraeus.db-shm"}) {
                std::error_code ec;
                if (std::filesystem::equivalent(std::filesystem::path(a.data_dir) / db, out, ec))
                    return error2("export", out + " is the service's store (" + a.data_dir + "/" +
                                                db + "); write to another file");
            }
    }
    auto ex = trace_export::export_data_dir(a.data_dir, since, until);
    if (!ex) return error2("export", ex.error().message);
    std::string stem = a.out;
    if (stem.size() > 4 && stem.ends_with(".csv")) stem.resize(stem.size() - 4);
    const std::string tenants = stem + "-tenants.json", machines = stem + "-machines.csv";
    for (const auto& [path, text] : {std::pair{a.out, &ex->trace_csv},
                                     std::pair{tenants, &ex->tenants_json},
                                     std::pair{machines, &ex->machines_csv}}) {
        auto written = write_atomically(path, *text);
        if (!written) {
            std::cerr << "astraeus trace export: error: " << written.error().message << "\n";
            return 1;
        }
    }
    std::cerr << fmt::format(
        "astraeus trace export: wrote {} ({}: {} succeeded, {} running, {} failed, {} "
        "stopped; {} never started, left out), {} ({}), {}\n",
        a.out, count_text(std::ssize(ex->workload.jobs), "run"), ex->succeeded, ex->running, ex->failed, ex->stopped,
        ex->never_started, tenants, count_text(std::ssize(ex->workload.tenants), "workspace"), machines);
    return 0;
}

void add_input(CLI::App* sub, TraceArgs& a) {
    sub->add_option("--trace", a.trace, "input trace file (may be .gz)")->required();
    std::string formats;
    for (const auto& f : trace_formats()) formats += f + ", ";
    sub->add_option("--format", a.format, "input format: " + formats + "or auto (detect)")
        ->capture_default_str();
}

}  // namespace

std::function<int()> add_trace(CLI::App& app) {
    auto a = std::make_shared<TraceArgs>();
    CLI::App* trace =
        app.add_subcommand("trace",
                           "Inspect and prepare traces: stats, slice, assign-tenants, convert, export.\n"
                           "Outputs are Astraeus native traces (docs/formats/native-trace.md).");
    trace->require_subcommand(1);

    CLI::App* stats = trace->add_subcommand("stats",
                                            "Print jobs, GPU-hours, sizes, run-time "
                                            "percentiles, time span and per-tenant totals.");
    add_input(stats, *a);
    stats->add_flag("--json", a->json, "print JSON instead of text");

    CLI::App* slice = trace->add_subcommand(
        "slice", "Keep the jobs submitted in a window, re-based to its start, as a native trace.");
    add_input(slice, *a);
    slice->add_option(
        "--from", a->from,
        "window start: UTC date YYYY-MM-DD[THH:MM:SS], or seconds since the trace epoch");
    slice->add_option("--to", a->to, "window end (exclusive), same forms as --from");
    slice->add_option("--busiest-days", a->busiest_days,
                      "instead of --from/--to: the N consecutive UTC days with the most GPU-time "
                      "submitted")
        ->check(CLI::Range(1, 36500));  // 0 said "give either --from and --to, or --busiest-days N"
    slice->add_option("--max-duration", a->max_duration_s,
                      "cap every run time at S seconds (applied before --busiest-days chooses)");
    slice->add_option("--out", a->out, "output native trace")->required();

    CLI::App* assign = trace->add_subcommand(
        "assign-tenants",
        "Give every job a virtual cluster drawn from the per-GPU-count VC mix of "
        "another trace (docs/formats/tenant-assignment.md).");
    add_input(assign, *a);
    assign
        ->add_option(
            "--mix-from", a->mix_from,
            "trace with tenants to take the mix from, e.g. data/philly/sampled_jobs.json.gz")
        ->required();
    assign->add_option("--mix-format", a->mix_format, "format of --mix-from")
        ->capture_default_str();
    // -1 was taken as 2^64 - 1 (simulate's --seed refuses it).
    assign->add_option("--seed", a->seed, "random seed")
        ->check(unsigned_digits("UINT"))
        ->capture_default_str();
    assign->add_option("--out", a->out, "output native trace")->required();

    CLI::App* convert = trace->add_subcommand("convert",
                                              "Read a trace in any format and write it "
                                              "as a native trace.");
    add_input(convert, *a);
    convert->add_option("--out", a->out, "output native trace")->required();

    CLI::App* exp = trace->add_subcommand(
        "export",
        "Write the service's run history (its store, read-only) as a native trace, a tenants "
        "file (OUT-tenants.json) and a machine list (OUT-machines.csv) for `astraeus simulate` "
        "and `compare` (docs/formats/run-export.md).");
    exp->add_option("--data-dir", a->data_dir, "the service's data directory (astraeus.db)")
        ->required();
    exp->add_option("--out", a->out, "output native trace; the other two files are named after it")
        ->default_val("exported.csv")
        ->capture_default_str();
    exp->add_option("--since", a->since, "keep runs submitted at or after this RFC 3339 time");
    exp->add_option("--until", a->until, "keep runs submitted before this RFC 3339 time");

    return [a, stats, slice, assign, convert, exp]() -> int {
        if (exp->parsed()) return run_export(*a);
        if (stats->parsed()) return run_stats(*a);
        if (slice->parsed()) return run_slice(*a);
        if (assign->parsed()) return run_assign(*a);
        if (convert->parsed()) return run_convert(*a);
        return 2;
    };
}

}  // namespace astraeus::cli
