// The goodput table and JSON for ledgers counted from Slurm accounting (`astraeus goodput
// import-slurm`). Slurm's records give when each segment held its GPUs and when the job waited,
// but no GPU utilization, progress or start-up phase, and the GPUs are freed at a segment's End:
// so only HELD and WAITING (and the cause of each wait) are known. The other columns of the page's
// table are shown as "-" (not known), never as a number (docs/slurm.md).
// Thread safety: pure functions.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/time.hpp"
#include "astraeus/goodput_io/table.hpp"

namespace astraeus::slurm {

/// The page's columns (HELD USED GOODPUT IDLE STALLED START RESTART FAILURE PREEMPT WAITING), the
/// same widths and TOTAL row as goodput::goodput_table; HELD and WAITING in GPU-hours with one
/// decimal, every other cell "-"; then a footer saying what Slurm's records do not give.
std::string slurm_goodput_table(std::string_view key_header,
                                const std::vector<goodput::NamedCounts>& rows);

/// One ledger: {"allocated_gpu_hours", "waiting_gpu_hours", "waiting_gpu_hours_by_cause":
/// {"first_placement", "preemption", "failure"}} (GPU-seconds / 3600).
nlohmann::json slurm_ledger_json(const goodput::Counts& c);

/// {"source": "slurm", "by", "start", "end", "rows": [{<by>: name, ledger}], "total": ledger,
///  "not_recorded_by_slurm": [...]} (the period in RFC 3339).
nlohmann::json slurm_rows_json(std::string_view by, Seconds start_s, Seconds end_s,
                               const std::vector<goodput::NamedCounts>& rows);

/// The categories Slurm's records cannot give: productive, idle, stalled, starting, restart,
/// goodput, and the held parts of failure and preemption.
nlohmann::json not_recorded_by_slurm();

}  // namespace astraeus::slurm
