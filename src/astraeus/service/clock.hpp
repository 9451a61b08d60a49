// The service's clock (split from service.hpp): Unix seconds on the real clock, sped up by
// time_scale for demos and tests, or a ManualTime that tests move by hand.
#pragma once
#include <atomic>
#include <chrono>
#include <memory>

#include "astraeus/base/time.hpp"

namespace astraeus::service {

/// A time that only moves when its owner sets it: the service's clock in tests that compute
/// their expected values by hand (Service::open_manual). Unix seconds; thread-safe.
class ManualTime {
public:
    explicit ManualTime(Seconds t) : t_(t) {}
    Seconds now() const { return t_.load(); }
    /// Moves the time to t; never back (an earlier t is ignored, as the count's clock never
    /// goes back). Call Service::tick() after it to run what became due.
    void set(Seconds t) {
        Seconds cur = t_.load();
        while (t > cur && !t_.compare_exchange_weak(cur, t)) {}
    }

private:
    std::atomic<Seconds> t_;
};

/// The service's clock: Unix seconds, running `scale` times faster than the real clock from
/// `base_s` at construction (scale 1: the real clock when base_s is the real time); or, for
/// tests, a ManualTime's (scale 1, standing still between its owner's set() calls).
class Clock {
public:
    Clock(Seconds base_s, double scale);
    explicit Clock(std::shared_ptr<const ManualTime> manual);
    Seconds now() const;
    /// Real time until the service's clock reaches t (zero when it has; a manual clock that has
    /// not: 1 s, the loop then looks again).
    std::chrono::milliseconds until(Seconds t) const;
    double scale() const { return scale_; }
    /// The real clock's Unix seconds.
    static Seconds real_now();

private:
    Seconds base_s_;
    std::chrono::steady_clock::time_point real_base_;
    double scale_;
    std::shared_ptr<const ManualTime> manual_;  ///< set: the time is manual_->now()
};

}  // namespace astraeus::service
