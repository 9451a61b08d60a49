#include "astraeus/slurm_import/slurm_goodput_table.hpp"

#include "astraeus/goodput_io/rfc3339.hpp"

namespace astraeus::slurm {
namespace {

using goodput::Category;
using goodput::Counts;

goodput::TableCells cells(const Counts& c) {
    const goodput::DisplayRow d = goodput::display_row(c);
    goodput::TableCells out;
    out.fill("-");
    out[0] = goodput::format_tenths(d.held);
    out[9] = goodput::format_tenths(d.waiting);
    return out;
}

double hours(GpuSeconds s) { return static_cast<double>(s) / 3600.0; }

}  // namespace

std::string slurm_goodput_table(std::string_view key_header,
                                const std::vector<goodput::NamedCounts>& rows) {
    std::string out = goodput::goodput_table_lines(key_header, rows, cells);
    out += "\nFrom Slurm accounting: HELD = allocated GPUs x (End - Start) of every job segment;\n"
           "WAITING = asked for, not held (before the first start, and between requeued segments);\n"
           "counted to the second: HELD equals Slurm's own figure (docs/slurm.md).\n"
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
