#include "astraeus/service/submit_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace astraeus::service {

int SubmitLimiter::take(std::int64_t ws, double now_s) {
    const double cap = per_minute_;
    const double rate = cap / 60.0;  // tokens per second
    auto [it, fresh] = buckets_.try_emplace(ws, Bucket{cap, now_s});
    Bucket& b = it->second;
    if (!fresh) {
        b.tokens = std::min(cap, b.tokens + std::max(0.0, now_s - b.at_s) * rate);
        b.at_s = std::max(b.at_s, now_s);
    }
    if (b.tokens >= 1.0) {
        b.tokens -= 1.0;
        return 0;
    }
    return std::max(1, static_cast<int>(std::ceil((1.0 - b.tokens) / rate)));
}

}  // namespace astraeus::service
