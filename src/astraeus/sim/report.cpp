#include "astraeus/sim/report.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <fstream>
#include <iterator>

#include "astraeus/trace/csv.hpp"

#ifndef ASTRAEUS_VERSION
#define ASTRAEUS_VERSION "0.0.0+unknown"
#endif

namespace astraeus {

std::string astraeus_version() { return ASTRAEUS_VERSION; }

Result<std::string> file_hash(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail(path + ": cannot open to hash");
    std::uint64_t h = 0xcbf29ce484222325ULL;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        for (std::streamsize i = 0; i < in.gcount(); ++i) {
            h ^= static_cast<unsigned char>(buf[i]);
            h *= 0x100000001b3ULL;
        }
    }
    return fmt::format("{:016x}", h);
}

namespace {

std::string_view status_name(RunStatus s) {
    switch (s) {
        case RunStatus::Future: return "future";
        case RunStatus::Pending: return "pending";
        case RunStatus::Running: return "running";
        case RunStatus::Done: return "done";
        case RunStatus::Dropped: return "dropped";
    }
    return "?";
}

std::string tenant_name(const Workload& w, int u) { return u < 0 ? "" : w.tenants[u].name; }

}  // namespace

std::string csv_field(std::string_view v) {
    if (v.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(v);
    std::string out = "\"";
    for (char c : v) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

namespace {

}  // namespace

void write_jobs_csv(std::ostream& out, const Workload& w, const SimResult& r) {
    fmt::memory_buffer buf;
    auto it = std::back_inserter(buf);
    auto text = [&](std::string_view s) { buf.append(s.data(), s.data() + s.size()); };
    text("job_id,tenant,gpus,submit_s,first_start_s,end_s,jct_s,queueing_delay_s,run_time_s,"
         "fairness,preemptions,lease_expiries,checkpoints,resumes,status,longest_wait_s\n");
    // Field by field (compiled formats, no string per field), streamed in 64 KiB pieces: the
    // same bytes as one fmt::format per row, and the file is never whole in memory.
    for (std::size_t j = 0; j < w.jobs.size(); ++j) {
        const Job& job = w.jobs[j];
        const RunState& run = r.runs[j];
        const bool done = run.status == RunStatus::Done;
        const bool started = run.first_start_s >= 0;
        fmt::format_to(it, FMT_COMPILE("{},"), job.id);
        text(csv_field(tenant_name(w, job.tenant)));
        fmt::format_to(it, FMT_COMPILE(",{},{},"), job.gpus, job.submit_s);
        if (started) fmt::format_to(it, FMT_COMPILE("{}"), run.first_start_s);
        buf.push_back(',');
        if (done) fmt::format_to(it, FMT_COMPILE("{},{}"), run.end_s, run.end_s - job.submit_s);
        else buf.push_back(',');
        buf.push_back(',');
        if (started) fmt::format_to(it, FMT_COMPILE("{}"), run.first_start_s - job.submit_s);
        fmt::format_to(it, FMT_COMPILE(",{},"), job.duration_s);
        if (run.deserved_gpu_s > 0) fmt::format_to(it, FMT_COMPILE("{:.4f}"), run.fairness);
        fmt::format_to(it, FMT_COMPILE(",{},{},{},{},"), run.preemptions, run.lease_expiries,
                       run.checkpoints, run.resumes);
        text(status_name(run.status));
        buf.push_back(',');
        if (started) fmt::format_to(it, FMT_COMPILE("{}"), run.longest_wait_s);
        buf.push_back('\n');
        if (buf.size() >= (1 << 16)) {
            out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
            buf.clear();
        }
    }
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

std::string jobs_csv(const Workload& w, const SimResult& r) {
    std::ostringstream out;
    write_jobs_csv(out, w, r);
    return std::move(out).str();
}

std::string tenants_csv(const Workload& w, const SimResult& r) {
    std::string out = "time_s,tenant,quota_gpus,fairness,index,used_gpus,pending_gpus\n";
    auto it = std::back_inserter(out);
    for (const TenantSample& t : r.tenant_series) {
        fmt::format_to(it, FMT_COMPILE("{},"), t.time_s);
        out += csv_field(w.tenants[t.tenant].name);
        fmt::format_to(it, FMT_COMPILE(",{},{:.6f},{:.6f},{},{}\n"), r.quotas[t.tenant],
                       t.fairness, t.index, t.used_gpus, t.pending_gpus);
    }
    return out;
}

nlohmann::json summary_json(const Workload& w, const SimResult& r, const Summary& s) {
    auto dist = [](const Distribution& d) {
        return nlohmann::json{{"mean", d.mean}, {"p50", d.p50}, {"p95", d.p95},
                              {"p99", d.p99},   {"min", d.min}, {"max", d.max}};
    };
    nlohmann::json tenants = nlohmann::json::array();
    for (std::size_t u = 0; u < w.tenants.size(); ++u)
        tenants.push_back({{"name", w.tenants[u].name},
                           {"weight", w.tenants[u].weight},
                           {"quota_gpus", r.quotas[u]},
                           {"fairness", r.tenant_fairness[u]}});
    return {
        {"jobs", {{"total", s.jobs_total}, {"admitted", s.jobs_admitted},
                  {"dropped", s.jobs_dropped}, {"done", s.jobs_done},
                  {"dropped_larger_than_cluster", r.dropped_too_big},
                  {"dropped_over_static_quota", r.dropped_over_static_quota}}},
        {"jct_s", dist(s.jct_s)},
        {"queueing_delay_s", dist(s.queueing_delay_s)},
        {"longest_wait_s", {{"max", s.longest_wait_s.max}, {"p99", s.longest_wait_s.p99},
                            {"mean", s.longest_wait_s.mean}}},
        {"makespan_s", s.makespan_s},
        {"gpu_utilization", s.gpu_utilization},
        {"preemptions", s.preemptions},
        {"lease_expiries", s.lease_expiries},
        {"checkpoints", s.checkpoints},
        {"resumes", s.resumes},
        {"overhead_gpu_hours", static_cast<double>(r.overhead_gpu_s) / 3600.0},
        {"job_fairness", {{"jobs_without", s.jobs_without_fairness},
                          {"share_fair", s.share_fair}, {"share_loss", s.share_loss},
                          {"share_benefit", s.share_benefit}, {"min", s.fj_min},
                          {"p5", s.fj_p5}, {"median", s.fj_median}, {"max", s.fj_max},
                          {"jain", s.fj_jain}}},
        {"tenant_fairness", {{"max_abs_dev", s.fu_max_dev}, {"max_over_min", s.fu_max_over_min},
                             {"min", s.fu_min}, {"max_shortfall", s.fu_max_shortfall},
                             {"jain", s.fu_jain}, {"worst_over_time", s.fu_worst_over_time},
                             {"tenants", tenants}}},
        {"rounds", r.rounds},
    };
}

Result<nlohmann::json> manifest_json(const SimConfig& c, const std::vector<InputFile>& inputs,
                                     const std::string& policy) {
    const AstraeaOptions& o = c.options;
    nlohmann::json files = nlohmann::json::array();
    for (const auto& in : inputs) {
        auto h = file_hash(in.path);
        if (!h) return std::unexpected(h.error());
        files.push_back({{"role", in.role}, {"path", in.path}, {"fnv1a64", *h}});
    }
    nlohmann::json manifest{
        {"astraeus_version", astraeus_version()},
        {"policy", policy},
        {"seed", o.seed},
        {"cluster", {{"name", c.cluster_name},
                     {"machines", c.cluster.machines()},
                     {"gpus", c.cluster.total_gpus()},
                     {"placement", c.placement}}},
        {"options", {{"mode", to_string(o.mode)}, {"job_order", to_string(o.job_order)},
                     {"quota_mode", to_string(o.quota_mode)}, {"lease_s", o.lease_s},
                     {"starvation_s", o.starvation_s}, {"delay_s", o.delay_s},
                     {"block_scheduling", o.block_scheduling}, {"backfill", o.backfill},
                     {"tick_s", o.tick_s},
                     {"window_buckets", o.window_buckets}, {"bucket_s", o.bucket_s},
                     {"checkpoint_s", o.checkpoint_s}, {"restore_s", o.restore_s},
                     {"round", o.policy},
                     {"astraea_improvements",
                      {{"reserve", o.improve.reserve},
                       {"history_ties", o.improve.history_ties},
                       {"index_half_life_s", o.improve.index_half_life_s},
                       {"exact_entitlement", o.improve.exact_entitlement},
                       {"index_tolerance", o.improve.index_tolerance},
                       {"overserved_victims", o.improve.overserved_victims},
                       {"reserve_own", o.improve.reserve_own},
                       {"due_first", o.improve.due_first},
                       {"keep_reservation", o.improve.keep_reservation},
                       {"gang_weight", o.improve.gang_weight},
                       {"placed_victims_only", o.improve.placed_victims_only},
                       {"keep_renewals", o.improve.keep_renewals},
                       {"free_before_victims", o.improve.free_before_victims}}},
                     {"policy_params",
                      {{"tiresias_thresholds_gpu_s", o.params.tiresias_thresholds_gpu_s},
                       {"tiresias_promote_knob", o.params.tiresias_promote_knob},
                       {"themis_fairness_knob", o.params.themis_fairness_knob},
                       {"themis_lease_s", o.params.themis_lease_s},
                       {"gandiva_quantum_s", o.params.gandiva_quantum_s},
                       {"yarn_max_share", o.params.yarn_max_share}}}}},
        {"inputs", files},
    };
    // The lease-end rules, the arrival headroom and the reclaim are recorded only when in effect, so that a run without
    // them (astraea-paper, compat) writes the manifest it always wrote. The headroom: as set (GPUs, -1: scaled), its
    // fraction when scaled, and the GPUs it keeps on this cluster.
    auto& improvements = manifest["options"]["astraea_improvements"];
    if (o.improve.victim_margin >= 0) improvements["victim_margin"] = o.improve.victim_margin;
    if (o.improve.arrival_headroom != 0) {
        improvements["arrival_headroom"] = o.improve.arrival_headroom;
        if (o.improve.arrival_headroom < 0)
            improvements["arrival_headroom_fraction"] = o.improve.arrival_headroom_fraction;
        improvements["arrival_headroom_gpus"] = o.improve.headroom_gpus(c.cluster.total_gpus());
    }
    if (o.improve.preempt_horizon_s > 0)
        improvements["preempt_horizon_s"] = o.improve.preempt_horizon_s;
    if (o.improve.reclaim_within_quota) improvements["reclaim_within_quota"] = true;
    return manifest;
}

std::string summary_table(const Workload& w, const SimResult& r, const Summary& s) {
    (void)w;
    std::string out;
    auto row = [&](std::string_view k, const std::string& v) {
        out += fmt::format("  {:<34} {}\n", k, v);
    };
    auto dist = [](const Distribution& d) {
        return fmt::format("avg {:.2f}  p50 {:.0f}  p95 {:.0f}  p99 {:.0f}", d.mean, d.p50, d.p95,
                           d.p99);
    };
    row("jobs (admitted / total)", fmt::format("{} / {}  ({} dropped, {} done)", s.jobs_admitted,
                                                s.jobs_total, s.jobs_dropped, s.jobs_done));
    if (r.dropped_too_big + r.dropped_over_static_quota > 0)
        row("dropped: larger than cluster / static quota",
            fmt::format("{} / {}", r.dropped_too_big, r.dropped_over_static_quota));
    row("JCT (s)", dist(s.jct_s));
    row("queueing delay (s)", dist(s.queueing_delay_s));
    row("longest wait (s)", fmt::format("max {:.0f}  p99 {:.0f}", s.longest_wait_s.max,
                                        s.longest_wait_s.p99));
    row("makespan (s)", fmt::format("{}", s.makespan_s));
    row("GPU utilization", fmt::format("{:.1f} %", 100 * s.gpu_utilization));
    row("preemptions / lease expiries", fmt::format("{} / {}", s.preemptions, s.lease_expiries));
    row("checkpoints / resumes", fmt::format("{} / {}", s.checkpoints, s.resumes));
    row("checkpoint + restore overhead", fmt::format("{:.1f} GPU-hours",
                                                     static_cast<double>(r.overhead_gpu_s) / 3600));
    row("jobs sharing-fair / loss / benefit",
        fmt::format("{:.1f} % / {:.1f} % / {:.1f} %", 100 * s.share_fair, 100 * s.share_loss,
                    100 * s.share_benefit));
    row("F_j min / p5 / median / max", fmt::format("{:.4f} / {:.4f} / {:.4f} / {:.4f}", s.fj_min,
                                                   s.fj_p5, s.fj_median, s.fj_max));
    row("F_j Jain's index", fmt::format("{:.4f}", s.fj_jain));
    if (s.jobs_without_fairness > 0)
        row("jobs without F_j (deserved nothing)", fmt::format("{}", s.jobs_without_fairness));
    row("F_u (whole run) max |F_u - 1|", fmt::format("{:.4f}", s.fu_max_dev));
    row("F_u min (worst-served tenant)", fmt::format("{:.4f}", s.fu_min));
    row("F_u max / min", fmt::format("{:.4f}", s.fu_max_over_min));
    row("F_u Jain's index", fmt::format("{:.4f}", s.fu_jain));
    row("worst windowed F_u over time", fmt::format("{:.4f}", s.fu_worst_over_time));
    row("scheduling rounds", fmt::format("{}", r.rounds));
    return out;
}

Result<bool> check_output_dir(const std::string& dir) {
    std::error_code ec;
    const bool existed = std::filesystem::exists(dir, ec);
    // A file in the way: say so (create_directories' own error was "Not a directory").
    if (existed && !std::filesystem::is_directory(dir, ec))
        return fail(dir + ": cannot create output directory: it exists and is not a directory");
    std::filesystem::create_directories(dir, ec);
    if (ec) return fail(dir + ": cannot create output directory: " + ec.message());
    const auto probe = std::filesystem::path(dir) / ".astraeus-write-probe.tmp";
    bool ok;
    {
        std::ofstream out(probe, std::ios::binary | std::ios::trunc);
        ok = static_cast<bool>(out);
    }
    if (!ok) return fail(dir + ": cannot write in the output directory: " +
                         std::error_code(errno, std::generic_category()).message());
    std::filesystem::remove(probe, ec);
    return !existed;
}

Result<void> write_files(const std::string& dir,
                         const std::vector<std::pair<std::string, std::string>>& files) {
    std::vector<std::pair<std::string, FileWriter>> writers;
    for (const auto& [name, content] : files)
        writers.push_back({name, [&content](std::ostream& out) { out << content; }});
    return write_files(dir, writers);
}

Result<void> write_files(const std::string& dir,
                         const std::vector<std::pair<std::string, FileWriter>>& files) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return fail(dir + ": cannot create output directory: " + ec.message());
    for (const auto& [name, write] : files) {
        const auto path = std::filesystem::path(dir) / name;
        const auto tmp = std::filesystem::path(dir) / ("." + name + ".tmp");
        bool ok;
        {
            std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
            write(out);
            ok = static_cast<bool>(out.flush());
        }
        if (ok) std::filesystem::rename(tmp, path, ec);
        if (!ok || ec) {
            std::error_code ignored;
            std::filesystem::remove(tmp, ignored);
            return fail(path.string() + (ok ? ": cannot rename into place: " + ec.message()
                                            : ": write failed (disk full or file too large?)"));
        }
    }
    return {};
}

}  // namespace astraeus
