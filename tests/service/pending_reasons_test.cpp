// PendingReasons (service/pending_reasons.hpp): the reasons of a round memoized per kind of run
// equal RoundAdapter::pending_reason computed for every pending run, over random steps.
#include <gtest/gtest.h>

#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "astraeus/base/rng.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/service/pending_reasons.hpp"
#include "astraeus/service/round_adapter.hpp"

using namespace astraeus;

namespace {

/// The reason's first words ("waiting for quota", "GPUs held for a starving run", ...).
std::string category(const std::string& why) {
    for (const char* c : {"waiting for GPUs:", "waiting for GPUs of", "waiting for quota", "no placement",
                          "GPUs held for the waiting gang", "GPUs held for a starving run",
                          "no machine up fits"})
        if (why.starts_with(c)) return c;
    return why.find(" GPUs of gpu-") != std::string::npos ? "outside" : why;
}

struct Tally {
    std::map<std::string, int> seen;  ///< reasons by category
    std::size_t asked = 0, computed = 0;
};

/// Random submissions (gangs of 1-16 GPUs, whole machines or not, three workspaces), rounds,
/// lease ends, requeues, removals, lost machines and GPUs held outside, `steps` steps of up to
/// 20 min (past T_starve many times) on 4 machines x 8 GPUs. After each round, every pending
/// run's memoized reason is compared with pending_reason computed for it alone, same names.
void check_random_steps(bool keep_reservation, std::uint64_t seed, int steps, Tally& tally) {
    AstraeaOptions base;
    base.lease_s = 1800;
    auto opt = policy_options("astraea", base);
    ASSERT_TRUE(opt);
    opt->improve.keep_reservation = keep_reservation;  // "GPUs held for the waiting gang ..."
    auto ad = service::RoundAdapter::make(ClusterSpec::uniform(4, 8), *opt, "consolidate");
    ASSERT_TRUE(ad) << ad.error().message;
    service::RoundAdapter& a = **ad;
    a.set_tenants({{"ml", 2.0}, {"cv", 1.0}, {"nlp", 1.0}});
    Rng rng(seed);
    struct Gang {
        int workers, gpw;
    };
    std::map<int, Gang> gang;  // job -> the gang the service would name
    std::set<int> live;        // jobs submitted, not removed
    const auto names = [](int m) { return "gpu-" + std::to_string(m) + " (lost)"; };
    const auto outside = [&](int m) { return std::to_string(a.foreign_gpus(m)) + " GPUs of gpu-" + std::to_string(m); };
    const auto run = [](int k) { return "run-" + std::to_string(k); };
    const auto lease_end = [&](int k) { return a.is_running(k) ? a.clock_s() + 100 + k : Seconds{-1}; };
    const auto plain = [&](int j, int w, int g) {
        return a.pending_reason(j, w, g, names, outside, run, "default", lease_end);
    };
    const auto pick = [&] {
        auto it = live.begin();
        std::advance(it, static_cast<long>(rng.below(live.size())));
        return it;
    };
    Seconds t = 0;
    for (int step = 0; step < steps; ++step) {
        t += static_cast<Seconds>(rng.below(1200));
        const auto dice = rng.below(100);
        if (dice < 45) {
            const int u = static_cast<int>(rng.below(3));
            const int gpw = rng.below(3) == 0 ? 0 : (rng.below(2) == 0 ? 4 : 8);
            const int workers = gpw == 0 ? 1 : 1 + static_cast<int>(rng.below(2));
            const int gpus = gpw == 0 ? 1 + static_cast<int>(rng.below(8)) : workers * gpw;
            if (auto j = a.submit(u, gpus, t, 3600 + static_cast<Seconds>(rng.below(20000)), gpw)) {
                gang[*j] = {gpw == 0 ? 1 : workers, gpw == 0 ? gpus : gpw};
                live.insert(*j);
            }
        } else if (dice < 60 && !live.empty()) {
            const auto it = pick();
            const int j = *it;
            if (a.is_running(j)) {
                if (rng.below(2) == 0) a.lease_end(j, t);
                else a.requeue(j, t);
            } else if (rng.below(3) == 0) {
                a.remove(j, t);
                live.erase(it);
            }
        } else if (dice < 64) {
            const int m = static_cast<int>(rng.below(4));
            a.set_machine_up(m, !a.machine_up(m));
        } else if (dice < 68) {
            a.set_foreign(static_cast<int>(rng.below(4)), static_cast<int>(rng.below(3)) * 2);
        } else if (dice < 72 && !live.empty()) {
            const auto it = pick();
            a.remove(*it, t);
            live.erase(it);
        }
        a.round(t);
        service::PendingReasons memo(a, plain);
        for (int j : a.pending_jobs()) {
            const Gang& g = gang.at(j);
            const std::string want = plain(j, g.workers, g.gpw);
            ASSERT_EQ(memo.of(j, g.workers, g.gpw), want)
                << "job " << j << " at step " << step << ", keep_reservation " << keep_reservation;
            ++tally.seen[category(want)];
            ++tally.asked;
        }
        tally.computed += memo.computed();
    }
}

}  // namespace

// With and without the kept reservation (each shows reasons the other does not). The reasons
// seen cover the kinds that depend on the run itself (its workspace, gang, starving or not, the
// reserved gang or not): a key missing one of them fails here (tried: a key without `starving`,
// and one without `reserved`).
TEST(PendingReasons, EqualPendingReasonForEveryRunOverRandomSteps) {
    Tally tally;
    for (bool keep : {false, true}) {
        check_random_steps(keep, 18, 600, tally);
        if (HasFatalFailure()) return;
    }
    for (const auto& [c, n] : tally.seen) std::printf("  %-32s %d\n", c.c_str(), n);
    std::printf("  reasons asked %zu, computed %zu\n", tally.asked, tally.computed);
    for (const char* c : {"waiting for quota", "no placement", "GPUs held for a starving run",
                          "GPUs held for the waiting gang", "waiting for GPUs of", "outside"})
        EXPECT_GT(tally.seen[c], 0) << "no pending run had the reason '" << c << "': the steps do not cover it";
    EXPECT_LT(tally.computed * 2, tally.asked) << "the memo computes a reason per kind, not per run";
}
