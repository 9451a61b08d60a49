// UTC calendar arithmetic for the goodput ledgers: minute, hour and ISO-week starts of Unix
// times (seconds since 1970-01-01T00:00:00Z). ISO weeks begin on Monday 00:00 UTC; 1970-01-01
// was a Thursday. Thread safety: pure functions.
#pragma once
#include "astraeus/base/time.hpp"

namespace astraeus::goodput {

inline constexpr Seconds kMinute = 60;
inline constexpr Seconds kDay = 86400;
inline constexpr Seconds kWeek = 7 * kDay;
/// Hourly rows are kept this long, and a query's period is at most this long (spec "Ledgers").
inline constexpr Seconds kRetention = 400 * kDay;

/// Largest multiple of `step` <= t (also for negative t).
constexpr Seconds floor_to(Seconds t, Seconds step) {
    const Seconds q = t / step;
    return (q * step > t ? q - 1 : q) * step;
}
constexpr Seconds minute_start(Seconds t) { return floor_to(t, kMinute); }
constexpr Seconds hour_start(Seconds t) { return floor_to(t, kHour); }
/// The Monday 00:00 UTC that begins t's ISO week.
constexpr Seconds week_start(Seconds t) { return floor_to(t + 3 * kDay, kWeek) - 3 * kDay; }

}  // namespace astraeus::goodput
