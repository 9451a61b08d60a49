#include "astraeus/cli/sacct_timezone.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

namespace astraeus::cli {
namespace {

const char* kZones = "expected UTC, an offset such as +05:00 or -03:30, or a zone name such as "
                     "America/New_York";

std::string offset_text(long off) {
    const long a = off < 0 ? -off : off;
    return fmt::format("{}{:02}:{:02}", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
}

}  // namespace

Result<ZoneScope> ZoneScope::make(const std::string& zone) {
    ZoneScope z;
    if (zone.empty()) return z;
    if (zone == "UTC" || zone == "Z" || zone == "Etc/UTC") {
        z.kind_ = Kind::Fixed;
        return z;
    }
    if ((zone[0] == '+' || zone[0] == '-') && zone.size() == 6 && zone[3] == ':') {
        const auto digit = [&](std::size_t i) { return zone[i] >= '0' && zone[i] <= '9'; };
        if (digit(1) && digit(2) && digit(4) && digit(5)) {
            const int h = (zone[1] - '0') * 10 + (zone[2] - '0');
            const int m = (zone[4] - '0') * 10 + (zone[5] - '0');
            if (h <= 14 && m < 60) {
                z.kind_ = Kind::Fixed;
                z.offset_s_ = (zone[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
                return z;
            }
        }
        return fail("--timezone '" + zone + "': " + kZones);
    }
    std::error_code ec;
    if (zone.find("..") != std::string::npos || zone[0] == '/' ||
        !std::filesystem::is_regular_file("/usr/share/zoneinfo/" + zone, ec))
        return fail("--timezone '" + zone + "': no such zone in /usr/share/zoneinfo; " + kZones);
    if (const char* old = std::getenv("TZ")) z.saved_tz_ = old;
    ::setenv("TZ", zone.c_str(), 1);
    ::tzset();
    z.kind_ = Kind::Named;
    z.owns_tz_ = true;
    return z;
}

ZoneScope::ZoneScope(ZoneScope&& o) noexcept
    : kind_(o.kind_), offset_s_(o.offset_s_), saved_tz_(std::move(o.saved_tz_)), owns_tz_(o.owns_tz_) {
    o.owns_tz_ = false;
}

ZoneScope::~ZoneScope() {
    if (!owns_tz_) return;
    if (saved_tz_) ::setenv("TZ", saved_tz_->c_str(), 1);
    else ::unsetenv("TZ");
    ::tzset();
}

slurm::WallClock ZoneScope::wall() const {
    switch (kind_) {
        case Kind::Fixed: {
            const Seconds off = offset_s_;
            return [off](Seconds wall) -> Result<Seconds> { return wall - off; };
        }
        case Kind::Named:
            return [](Seconds wall) -> Result<Seconds> {
                std::time_t t = static_cast<std::time_t>(wall);
                std::tm tm{};
                ::gmtime_r(&t, &tm);
                tm.tm_isdst = -1;  // the zone's rule for that date
                return static_cast<Seconds>(std::mktime(&tm));
            };
        case Kind::Local: break;
    }
    return [](Seconds wall) -> Result<Seconds> {
        std::time_t t = static_cast<std::time_t>(wall);
        std::tm tm{};
        ::localtime_r(&t, &tm);
        if (tm.tm_gmtoff == 0) return wall;
        return fail("a time without a zone, and this machine's local time zone is not UTC (UTC" +
                    offset_text(tm.tm_gmtoff) + "): sacct prints local times; run it with TZ=UTC "
                    "or SLURM_TIME_FORMAT=%s, or name the zone with --timezone (UTC, +05:00, "
                    "America/New_York)");
    };
}

}  // namespace astraeus::cli
