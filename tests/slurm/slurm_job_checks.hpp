// What the libslurm test programs (slurm_lease_cycle.cpp, slurm_fencing.cpp) share: a named
// check that prints ok/FAIL and counts failures, and the job's view found or waited for.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "astraeus/exec/slurm_client.hpp"

namespace slurm_test {

using astraeus::exec::slurm::JobInfo;
using astraeus::exec::slurm::SlurmClient;
using Clock = std::chrono::steady_clock;

inline int fails = 0;
inline void check(bool ok, const std::string& what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
    if (!ok) ++fails;
}

/// Job `id` as slurmctld shows it now (nullopt: not found or no answer).
inline std::optional<JobInfo> find(const SlurmClient& c, std::uint32_t id) {
    auto jobs = c.jobs();
    if (!jobs) return std::nullopt;
    for (auto& j : *jobs)
        if (j.id == id) return j;
    return std::nullopt;
}

/// Polls every 20 ms until pred(job) or the timeout; returns the last view.
template <class Pred>
std::optional<JobInfo> wait_for(const SlurmClient& c, std::uint32_t id, Pred pred, double timeout_s) {
    const auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
    std::optional<JobInfo> j;
    while (Clock::now() < until) {
        j = find(c, id);
        if (j && pred(*j)) return j;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return j;
}

}  // namespace slurm_test
