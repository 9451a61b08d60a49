// The Slurm executor's wall-clock helpers, shared by its files (slurm_executor*.cpp): Slurm's
// times are Unix seconds of the real clock, not the service's.
#pragma once
#include <ctime>
#include <string>

#include "astraeus/base/time.hpp"

namespace astraeus::exec::slurm_time {

/// Now, Unix seconds of the real clock.
inline Seconds wall_now() { return static_cast<Seconds>(std::time(nullptr)); }

/// "2026-12-02T08:40:00Z" (UTC).
inline std::string utc(Seconds s) {
    const std::time_t tt = static_cast<std::time_t>(s);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

/// Seconds ahead of now that an administrator's held job's StartTime is set, so that a
/// `scontrol release` cannot start it on the nodes chosen before (ten years).
inline constexpr Seconds kHeldStartOffsetS = 10 * 365 * 86400;

}  // namespace astraeus::exec::slurm_time
