// Calendar dates and wall-clock times as they appear in trace files, converted to Unix seconds
// (UTC). Trace logs write local wall-clock time without a zone; the reader names the zone it
// assumes (`TimeZone`) and this file turns "YYYY-MM-DD HH:MM:SS" into an instant.
// Proleptic Gregorian calendar, no leap seconds (as Unix time). Thread safety: pure functions.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace astraeus {

inline constexpr std::int64_t kDay = 86400;  ///< seconds in a calendar day (Unix time)

/// Zones the trace readers assume for zone-less timestamps.
enum class TimeZone {
    Utc,           ///< UTC, no offset
    UsPacific,     ///< America/Los_Angeles: UTC-8, UTC-7 in daylight saving time (US rules)
    AsiaShanghai,  ///< Asia/Shanghai: UTC+8, no daylight saving time since 1991
};

/// Days since 1970-01-01 of the civil date y-m-d (m 1..12, d 1..31); negative before 1970.
std::int64_t days_from_civil(std::int64_t y, int m, int d);

/// floor(a / b) for b > 0 (also for negative a).
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    return a / b - ((a % b != 0) && (a < 0));
}

/// Parses "YYYY-MM-DD HH:MM:SS", "YYYY-MM-DDTHH:MM:SS" (optional trailing "Z") or "YYYY-MM-DD"
/// (midnight) as wall-clock seconds since 1970-01-01 00:00 of the same zone, i.e. as if the
/// time were UTC. Rejects anything else, including out-of-range fields (month 13, Feb 30, 24:00).
std::optional<std::int64_t> parse_civil(std::string_view s);

/// Converts wall-clock seconds in zone `z` (from parse_civil) to Unix seconds (UTC).
/// US Pacific uses the US rules of 2007 on (DST from the second Sunday of March 02:00 to the
/// first Sunday of November 02:00) and of 1987-2006 before 2007 (first Sunday of April to the
/// last Sunday of October). Like Python's zoneinfo with fold=0: a time in the skipped spring
/// hour (02:00-02:59) is read with the standard offset, a time in the repeated autumn hour
/// (01:00-01:59) as its first occurrence (daylight time).
std::int64_t local_to_utc(std::int64_t local_s, TimeZone z);

/// "YYYY-MM-DD HH:MM:SS" of Unix seconds, in UTC.
std::string format_utc(std::int64_t unix_s);
/// "YYYY-MM-DD" of Unix seconds, in UTC.
std::string format_utc_date(std::int64_t unix_s);

}  // namespace astraeus
