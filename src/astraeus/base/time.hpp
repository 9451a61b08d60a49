// Simulated time. All times are integer seconds since the trace epoch (the first submit of the
// workload is usually 0). No system clock is read anywhere in the core.
#pragma once
#include <cstdint>

namespace astraeus {

using Seconds = std::int64_t;       ///< a duration or an instant, in seconds
using GpuSeconds = std::int64_t;    ///< GPU-time: GPUs x seconds

inline constexpr Seconds kHour = 3600;

}  // namespace astraeus
