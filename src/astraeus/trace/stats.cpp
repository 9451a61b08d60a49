#include "astraeus/trace/stats.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "astraeus/trace/civil_time.hpp"

namespace astraeus {
namespace {

// Nearest-rank percentile of sorted values; p in percent (1..100).
Seconds nearest_rank(const std::vector<Seconds>& sorted, std::int64_t p) {
    if (sorted.empty()) return 0;
    const auto n = static_cast<std::int64_t>(sorted.size());
    const std::int64_t rank = (p * n + 99) / 100;  // ceil(p * n / 100)
    return sorted[static_cast<std::size_t>(std::clamp<std::int64_t>(rank, 1, n) - 1)];
}

std::string duration_text(Seconds s) {
    if (s < 3600) return fmt::format("{} s", s);
    return fmt::format("{} s ({:.1f} h)", s, static_cast<double>(s) / 3600.0);
}

}  // namespace

TraceStats compute_stats(const Workload& w) {
    TraceStats s;
    s.epoch_unix_s = w.epoch_unix_s;
    s.jobs = static_cast<std::int64_t>(w.jobs.size());
    for (const Tenant& t : w.tenants) s.tenants.push_back({t.name, 0, 0});
    TraceStats::TenantRow none{"(none)", 0, 0};
    std::vector<Seconds> durations;
    durations.reserve(w.jobs.size());
    for (const Job& j : w.jobs) {
        const GpuSeconds g = static_cast<GpuSeconds>(j.gpus) * j.duration_s;
        s.gpu_seconds += g;
        ++s.jobs_by_gpus[j.gpus];
        durations.push_back(j.duration_s);
        auto& row = j.tenant >= 0 && j.tenant < static_cast<int>(w.tenants.size())
                        ? s.tenants[static_cast<std::size_t>(j.tenant)]
                        : none;
        ++row.jobs;
        row.gpu_seconds += g;
    }
    if (none.jobs > 0) {
        s.tenants.push_back(none);
        s.none_row = true;
    }
    std::sort(durations.begin(), durations.end());
    s.duration_p50_s = nearest_rank(durations, 50);
    s.duration_p90_s = nearest_rank(durations, 90);
    s.duration_p99_s = nearest_rank(durations, 99);
    s.duration_max_s = durations.empty() ? 0 : durations.back();
    if (!w.jobs.empty()) {
        const auto [lo, hi] =
            std::minmax_element(w.jobs.begin(), w.jobs.end(),
                                [](const Job& a, const Job& b) { return a.submit_s < b.submit_s; });
        s.first_submit_s = lo->submit_s;
        s.last_submit_s = hi->submit_s;
    }
    return s;
}

std::string stats_text(const TraceStats& s) {
    std::string out;
    out += fmt::format("jobs:            {}\n", s.jobs);
    out += fmt::format("GPU-hours:       {:.1f} (sum of GPUs x run time)\n", s.gpu_hours());
    const Seconds span = s.last_submit_s - s.first_submit_s;
    // Under an hour in minutes, under a day in hours: a short trace's span printed "(0.0 days)".
    const double span_s = static_cast<double>(span);
    out += fmt::format("submit span:     {} s .. {} s ({})", s.first_submit_s, s.last_submit_s,
                       span < 3600    ? fmt::format("{:.1f} min", span_s / 60.0)
                       : span < 86400 ? fmt::format("{:.1f} h", span_s / 3600.0)
                                      : fmt::format("{:.1f} days", span_s / 86400.0));
    if (s.epoch_unix_s != 0)
        out += fmt::format(", {} .. {} UTC", format_utc(s.epoch_unix_s + s.first_submit_s),
                           format_utc(s.epoch_unix_s + s.last_submit_s));
    out += "\n";
    out += fmt::format("run time:        p50 {}, p90 {}, p99 {}, max {}\n",
                       duration_text(s.duration_p50_s), duration_text(s.duration_p90_s),
                       duration_text(s.duration_p99_s), duration_text(s.duration_max_s));
    out += "jobs by GPUs:   ";
    for (const auto& [g, n] : s.jobs_by_gpus) out += fmt::format(" {}:{}", g, n);
    out += "\n";
    if (!s.tenants.empty()) {
        // "(none)" is a row, not a tenant: a trace without tenants has 0 (it said 1).
        out += fmt::format("tenants:         {}{}\n", s.tenants.size() - (s.none_row ? 1 : 0),
                           s.none_row ? " (and jobs without a tenant: the (none) row)" : "");
        // The name column fits the longest name (a longer one pushed its row right).
        std::size_t w = 16;
        for (const auto& t : s.tenants) w = std::max(w, t.name.size());
        out += fmt::format("  {:<{}} {:>9} {:>7} {:>13} {:>7}\n", "tenant", w, "jobs", "jobs%",
                           "GPU-hours", "GPU-h%");
        for (const auto& t : s.tenants)
            out += fmt::format(
                "  {:<{}} {:>9} {:>6.1f}% {:>13.1f} {:>6.1f}%\n", t.name, w, t.jobs,
                s.jobs ? 100.0 * static_cast<double>(t.jobs) / static_cast<double>(s.jobs) : 0.0,
                static_cast<double>(t.gpu_seconds) / 3600.0,
                s.gpu_seconds ? 100.0 * static_cast<double>(t.gpu_seconds) /
                                    static_cast<double>(s.gpu_seconds)
                              : 0.0);
    }
    if (s.skipped.total() > 0) out += "skipped rows:    " + s.skipped.summary() + "\n";
    return out;
}

nlohmann::json stats_json(const TraceStats& s) {
    nlohmann::json j;
    j["jobs"] = s.jobs;
    j["gpu_seconds"] = s.gpu_seconds;
    j["gpu_hours"] = s.gpu_hours();
    nlohmann::json sizes = nlohmann::json::array();
    for (const auto& [g, n] : s.jobs_by_gpus) sizes.push_back({{"gpus", g}, {"jobs", n}});
    j["jobs_by_gpus"] = sizes;
    j["duration_s"] = {{"p50", s.duration_p50_s},
                       {"p90", s.duration_p90_s},
                       {"p99", s.duration_p99_s},
                       {"max", s.duration_max_s}};
    j["span"] = {{"epoch_unix_s", s.epoch_unix_s},
                 {"first_submit_s", s.first_submit_s},
                 {"last_submit_s", s.last_submit_s},
                 {"first_submit_utc", format_utc(s.epoch_unix_s + s.first_submit_s)},
                 {"last_submit_utc", format_utc(s.epoch_unix_s + s.last_submit_s)}};
    nlohmann::json tenants = nlohmann::json::array();
    for (const auto& t : s.tenants)
        tenants.push_back({{"name", t.name},
                           {"jobs", t.jobs},
                           {"gpu_seconds", t.gpu_seconds},
                           {"gpu_hours", static_cast<double>(t.gpu_seconds) / 3600.0}});
    j["tenants"] = tenants;
    nlohmann::json skipped = nlohmann::json::object();
    for (const auto& [reason, n] : s.skipped.by_reason) skipped[reason] = n;
    j["skipped"] = skipped;
    return j;
}

}  // namespace astraeus
