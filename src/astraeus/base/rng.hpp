// Seeded pseudo-random numbers (SplitMix64): the only randomness in the core, always passed in.
// Same seed, same sequence, on every platform. Not thread-safe: one generator per run.
#pragma once
#include <cstdint>

namespace astraeus {

class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}
    /// Next 64 random bits (SplitMix64, Steele, Lea & Flood, OOPSLA 2014).
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    /// Uniform integer in [0, n); n > 0 (rejection sampling: no modulo bias).
    std::uint64_t below(std::uint64_t n) {
        const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
        std::uint64_t x;
        do x = next();
        while (x >= limit);
        return x % n;
    }
    /// Uniform double in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    std::uint64_t state_;
};

}  // namespace astraeus
