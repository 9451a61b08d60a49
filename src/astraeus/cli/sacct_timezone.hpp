// The time zone of `sacct`'s times printed without one (`import-slurm --timezone`): sacct prints
// local time, so times without a zone are read as UTC only when this machine's local zone is
// UTC or --timezone says which zone they are in (UTC, +05:00 / -03:30, or an IANA name such as
// America/New_York, from /usr/share/zoneinfo). Thread safety: an IANA zone sets the process's TZ
// while the ZoneScope lives (the CLI's one thread).
#pragma once
#include <optional>
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/slurm_import/sacct_records.hpp"

namespace astraeus::cli {

class ZoneScope {
public:
    /// `zone` empty: no --timezone given. An error names the zones accepted.
    static Result<ZoneScope> make(const std::string& zone);
    ZoneScope(ZoneScope&& o) noexcept;
    ZoneScope& operator=(ZoneScope&&) = delete;
    ZoneScope(const ZoneScope&) = delete;
    ~ZoneScope();
    /// Wall-clock times in the zone -> Unix seconds, or the refusal when no zone was named and
    /// the local zone is not UTC.
    slurm::WallClock wall() const;

private:
    ZoneScope() = default;
    enum class Kind { Local, Fixed, Named } kind_ = Kind::Local;
    Seconds offset_s_ = 0;                  ///< Fixed: east of UTC
    std::optional<std::string> saved_tz_;   ///< Named: TZ before (restored)
    bool owns_tz_ = false;
};

}  // namespace astraeus::cli
