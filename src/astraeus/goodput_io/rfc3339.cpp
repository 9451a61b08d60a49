#include "astraeus/goodput_io/rfc3339.hpp"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>

namespace astraeus::goodput {

namespace {
using namespace std::chrono;

bool digits(std::string_view s, std::size_t at, std::size_t n, int& out) {
    if (at + n > s.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        out = out * 10 + (s[i] - '0');
    }
    return true;
}
}  // namespace

Result<Seconds> parse_rfc3339(std::string_view s) {
    auto bad = [&] {
        return fail("malformed time '" + std::string(s) +
                    "' (expected RFC 3339, e.g. 2026-10-01T00:00:00Z)");
    };
    int y, mo, d, h, mi, se;
    if (!digits(s, 0, 4, y) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, mo) ||
        s[7] != '-' || !digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        !digits(s, 11, 2, h) || s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' ||
        !digits(s, 17, 2, se))
        return bad();
    const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)},
                             day{static_cast<unsigned>(d)}};
    if (!ymd.ok() || h > 23 || mi > 59 || se > 60) return bad();
    std::size_t i = 19;
    if (i < s.size() && s[i] == '.') {
        ++i;
        const std::size_t from = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
        if (i == from) return bad();
    }
    Seconds offset = 0;
    if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
        ++i;
    } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
        int oh, om;
        if (!digits(s, i + 1, 2, oh) || i + 3 >= s.size() || s[i + 3] != ':' ||
            !digits(s, i + 4, 2, om) || oh > 23 || om > 59)
            return bad();
        offset = (s[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
        i += 6;
    } else {
        return bad();
    }
    if (i != s.size()) return bad();
    const Seconds days = sys_days{ymd}.time_since_epoch().count();
    const Seconds t = days * 86400 + h * 3600 + mi * 60 + std::min(se, 59) - offset;
    // The offset may carry the instant out of the years 0000..9999 that the format writes in
    // four digits (9999-12-31T23:59:59-07:30 is 10000-01-01 in UTC): such a time could not be
    // written back, so it is refused like any other time out of range.
    const Seconds first = sys_days{year{0} / January / 1}.time_since_epoch().count() * 86400;
    const Seconds last = sys_days{year{9999} / December / 31}.time_since_epoch().count() * 86400 + 86399;
    if (t < first || t > last)
        return fail("time '" + std::string(s) + "' is out of range: in UTC it must fall within the years 0000 to 9999");
    return t;
}

std::string format_rfc3339(Seconds t) {
    const sys_seconds tp{seconds{t}};
    const auto dp = floor<days>(tp);
    const year_month_day ymd{dp};
    const hh_mm_ss hms{tp - dp};
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(ymd.year()),
                       static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                       hms.hours().count(), hms.minutes().count(), hms.seconds().count());
}

std::string iso_week_label(Seconds t) {
    // The ISO year is the year of the week's Thursday; the week number counts Thursdays.
    const auto dp = floor<days>(sys_seconds{seconds{t}});
    const weekday wd{dp};
    const auto thursday = dp + days{3 - static_cast<int>((wd.c_encoding() + 6) % 7)};
    const year_month_day ymd{thursday};
    const sys_days jan1{ymd.year() / January / 1};
    const int week = static_cast<int>((thursday - jan1).count() / 7) + 1;
    return fmt::format("{:04}-W{:02}", static_cast<int>(ymd.year()), week);
}

}  // namespace astraeus::goodput
