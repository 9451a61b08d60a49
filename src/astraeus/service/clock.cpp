#include "astraeus/service/clock.hpp"

#include <algorithm>
#include <cstdint>

namespace astraeus::service {

Clock::Clock(Seconds base_s, double scale)
    : base_s_(base_s), real_base_(std::chrono::steady_clock::now()), scale_(scale) {
    // At time_scale 1 from the real clock's current second, the service's seconds turn over with
    // the real clock's: otherwise every time it records (a placement, a start) lags the real
    // clock by the sub-second part at start-up, up to 1 s behind what another system records
    // for the same instant (Slurm's accounting; docs/slurm.md, "Accounting").
    const auto wall = std::chrono::system_clock::now().time_since_epoch();
    const auto into = wall - std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(base_s));
    if (scale == 1.0 && into >= std::chrono::system_clock::duration::zero() && into < std::chrono::seconds(1))
        real_base_ -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(into);
}

Clock::Clock(std::shared_ptr<const ManualTime> manual)
    : base_s_(manual->now()), real_base_(std::chrono::steady_clock::now()), scale_(1.0),
      manual_(std::move(manual)) {}

Seconds Clock::now() const {
    if (manual_) return manual_->now();
    const double real = std::chrono::duration<double>(std::chrono::steady_clock::now() - real_base_).count();
    return base_s_ + static_cast<Seconds>(real * scale_);
}

std::chrono::milliseconds Clock::until(Seconds t) const {
    if (manual_) return manual_->now() >= t ? std::chrono::milliseconds(0) : std::chrono::milliseconds(1000);
    const double real = std::chrono::duration<double>(std::chrono::steady_clock::now() - real_base_).count();
    const double target = static_cast<double>(t - base_s_) / scale_;
    const double ms = (target - real) * 1000.0;
    if (ms <= 0) return std::chrono::milliseconds(0);
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::min(ms, 3.6e6)) + 1);
}

Seconds Clock::real_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace astraeus::service
