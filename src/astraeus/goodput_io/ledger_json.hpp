// The REST shape of goodput ledgers (spec/goodput.md "REST"), built with nlohmann::json: the
// only place that turns counts into JSON. GPU-hours are GPU-seconds / 3600 as doubles.
// Thread safety: pure functions.
#pragma once
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "astraeus/goodput/category.hpp"
#include "astraeus/goodput_io/table.hpp"

namespace astraeus::goodput {

/// {"gpu_hours": {category: held + not held, all 8}, "held_gpu_hours": {category: held part,
///  all but waiting}, "allocated_gpu_hours", "productive_gpu_hours", "lost_gpu_hours",
///  "waiting_gpu_hours", "goodput" (0..1; the key is absent when nothing was held),
///  "unmeasured_gpu_hours" (the part of idle no utilization sample or progress decided; only
///  when non-zero)}.
nlohmann::json ledger_json(const Counts& c);

/// {"by": by, "start": RFC3339, "end": RFC3339, "rows": [{<by>: name, ...ledger}],
///  "total": ledger}.
nlohmann::json rows_json(std::string_view by, Seconds start_s, Seconds end_s,
                         const std::vector<NamedCounts>& rows);

}  // namespace astraeus::goodput
