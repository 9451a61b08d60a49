#include "astraeus/trace/civil_time.hpp"

#include <fmt/format.h>

#include <array>

namespace astraeus {
namespace {

bool is_leap(std::int64_t y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int days_in_month(std::int64_t y, int m) {
    static constexpr std::array<int, 12> kDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : kDays[static_cast<std::size_t>(m - 1)];
}

struct Civil {
    std::int64_t y;
    int m, d;
};

// Howard Hinnant's civil_from_days (public domain algorithm, "chrono-Compatible Low-Level Date
// Algorithms").
Civil civil_from_days(std::int64_t z) {
    z += 719468;
    const std::int64_t era = floor_div(z, 146097);
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
    const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
    return {yoe + era * 400 + (m <= 2), m, d};
}

// Weekday of a day number: 0 = Sunday (1970-01-01 was a Thursday).
int weekday(std::int64_t days) {
    return static_cast<int>(((days % 7) + 7 + 4) % 7);
}

// Day number of the n-th (1-based) Sunday of y-m.
std::int64_t nth_sunday(std::int64_t y, int m, int n) {
    const std::int64_t first = days_from_civil(y, m, 1);
    return first + (7 - weekday(first)) % 7 + 7 * (n - 1);
}

// Day number of the last Sunday of y-m.
std::int64_t last_sunday(std::int64_t y, int m) {
    const std::int64_t last = days_from_civil(y, m, days_in_month(y, m));
    return last - weekday(last);
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        out = out * 10 + (s[i] - '0');
    }
    return true;
}

}  // namespace

std::int64_t days_from_civil(std::int64_t y, int m, int d) {
    y -= m <= 2;
    const std::int64_t era = floor_div(y, 400);
    const std::int64_t yoe = y - era * 400;
    const std::int64_t mp = m > 2 ? m - 3 : m + 9;
    const std::int64_t doy = (153 * mp + 2) / 5 + d - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

std::optional<std::int64_t> parse_civil(std::string_view s) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
    if (!digits(s, 0, 4, y) || s.size() < 10 || s[4] != '-' || !digits(s, 5, 2, mo) ||
        s[7] != '-' || !digits(s, 8, 2, d))
        return std::nullopt;
    if (s.size() > 10) {
        if (s[10] != ' ' && s[10] != 'T') return std::nullopt;
        std::string_view rest = s.substr(11);
        if (rest.size() == 9 && rest.back() == 'Z' && s[10] == 'T') rest.remove_suffix(1);
        if (rest.size() != 8 || !digits(rest, 0, 2, h) || rest[2] != ':' ||
            !digits(rest, 3, 2, mi) || rest[5] != ':' || !digits(rest, 6, 2, se))
            return std::nullopt;
    }
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59)
        return std::nullopt;
    return days_from_civil(y, mo, d) * kDay + h * 3600 + mi * 60 + se;
}

std::int64_t local_to_utc(std::int64_t local_s, TimeZone z) {
    switch (z) {
        case TimeZone::Utc:
            return local_s;
        case TimeZone::AsiaShanghai:
            return local_s - 8 * 3600;
        case TimeZone::UsPacific: {
            const std::int64_t y = civil_from_days(floor_div(local_s, kDay)).y;
            const std::int64_t start_day = y >= 2007 ? nth_sunday(y, 3, 2) : nth_sunday(y, 4, 1);
            const std::int64_t end_day = y >= 2007 ? nth_sunday(y, 11, 1) : last_sunday(y, 10);
            // Daylight time from 03:00 on the start day (02:00-02:59 does not exist; read as
            // standard time) to 02:00 on the end day (01:00-01:59 read as daylight time).
            const bool dst =
                local_s >= start_day * kDay + 3 * 3600 && local_s < end_day * kDay + 2 * 3600;
            return local_s + (dst ? 7 : 8) * 3600;
        }
    }
    return local_s;
}

std::string format_utc(std::int64_t unix_s) {
    const std::int64_t days = floor_div(unix_s, kDay);
    const std::int64_t sod = unix_s - days * kDay;
    const Civil c = civil_from_days(days);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", c.y, c.m, c.d, sod / 3600,
                       sod / 60 % 60, sod % 60);
}

std::string format_utc_date(std::int64_t unix_s) {
    const Civil c = civil_from_days(floor_div(unix_s, kDay));
    return fmt::format("{:04}-{:02}-{:02}", c.y, c.m, c.d);
}

}  // namespace astraeus
