#include "astraeus/slurm_import/slurm_goodput_table.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>

#include "astraeus/goodput_io/rfc3339.hpp"

namespace astraeus::slurm {
namespace {

using goodput::Category;
using goodput::Counts;

using Cells = std::array<std::string, 10>;

std::string tenths(std::int64_t v) {
    const std::int64_t a = v < 0 ? -v : v;
    return fmt::format("{}{}.{}", v < 0 ? "-" : "", a / 10, a % 10);
}

Cells cells(const Counts& c) {
    const goodput::DisplayRow d = goodput::display_row(c);
    Cells out;
    out.fill("-");
    out[0] = tenths(d.held);
    out[9] = tenths(d.waiting);
    return out;
}

std::string line(std::string_view name, std::size_t name_width, const Cells& c,
                 const std::array<std::size_t, 10>& widths) {
    std::string out(name);
    out.resize(std::max(out.size(), name_width), ' ');
    out += ' ';
    for (std::size_t i = 0; i < c.size(); ++i) out += fmt::format("{:>{}}", c[i], widths[i]);
    out += '\n';
    return out;
}

double hours(GpuSeconds s) { return static_cast<double>(s) / 3600.0; }

}  // namespace

std::string slurm_goodput_table(std::string_view key_header,
                                const std::vector<goodput::NamedCounts>& rows) {
    std::array<std::size_t, 10> widths{8, 9, 8, 8, 8, 8, 8, 8, 8, 8};
    std::size_t name_width = 28;
    std::vector<Cells> body;
    Counts total;
    for (const auto& r : rows) {
        body.push_back(cells(r.counts));
        total += r.counts;
        name_width = std::max(name_width, r.name.size());
    }
    body.push_back(cells(total));
    for (const Cells& c : body)
        for (std::size_t i = 0; i < c.size(); ++i) widths[i] = std::max(widths[i], c[i].size() + 1);
    std::string out = "GPU-hours\n";
    out += line(key_header, name_width,
                {"HELD", "USED", "GOODPUT", "IDLE", "STALLED", "START", "RESTART", "FAILURE",
                 "PREEMPT", "WAITING"},
                widths);
    for (std::size_t i = 0; i < rows.size(); ++i) out += line(rows[i].name, name_width, body[i], widths);
    out += line("TOTAL", name_width, body.back(), widths);
    out += "\nFrom Slurm accounting: HELD = allocated GPUs x (End - Start) of every job segment;\n"
           "WAITING = asked for, not held (before the first start, and between requeued segments);\n"
           "each minute counted in the state at its end (docs/formats/goodput-events.md).\n"
           "\"-\" = not in Slurm's records: no GPU utilization, progress or start-up phase, and a\n"
           "segment's GPUs are freed at its End (docs/slurm.md).\n";
    return out;
}

nlohmann::json slurm_ledger_json(const Counts& c) {
    GpuSeconds held = 0, waiting = 0;
    for (int i = 0; i < goodput::kCategories; ++i) {
        held += c.held[static_cast<std::size_t>(i)];
        waiting += c.not_held[static_cast<std::size_t>(i)];
    }
    return {{"allocated_gpu_hours", hours(held)},
            {"waiting_gpu_hours", hours(waiting)},
            {"waiting_gpu_hours_by_cause",
             {{"first_placement", hours(c.not_held_of(Category::Waiting))},
              {"preemption", hours(c.not_held_of(Category::Preemption))},
              {"failure", hours(c.not_held_of(Category::Failure))}}}};
}

nlohmann::json not_recorded_by_slurm() {
    return {"productive", "idle", "stalled", "starting", "restart", "goodput",
            "held failure", "held preemption"};
}

nlohmann::json slurm_rows_json(std::string_view by, Seconds start_s, Seconds end_s,
                               const std::vector<goodput::NamedCounts>& rows) {
    nlohmann::json j;
    j["source"] = "slurm";
    j["by"] = std::string(by);
    j["start"] = goodput::format_rfc3339(start_s);
    j["end"] = goodput::format_rfc3339(end_s);
    j["rows"] = nlohmann::json::array();
    Counts total;
    for (const auto& r : rows) {
        nlohmann::json row = slurm_ledger_json(r.counts);
        row[std::string(by)] = r.name;
        j["rows"].push_back(std::move(row));
        total += r.counts;
    }
    j["total"] = slurm_ledger_json(total);
    j["not_recorded_by_slurm"] = not_recorded_by_slurm();
    return j;
}

}  // namespace astraeus::slurm
