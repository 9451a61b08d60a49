#include <gtest/gtest.h>

#include "astraeus/placement/consolidate.hpp"
#include "astraeus/placement/pack.hpp"
#include "astraeus/placement/registry.hpp"

namespace astraeus {
namespace {

std::vector<std::pair<int, int>> parts(const Placement& p) {
    std::vector<std::pair<int, int>> v;
    for (auto& part : p.parts) v.push_back({part.machine, part.gpus});
    return v;
}

using Parts = std::vector<std::pair<int, int>>;

TEST(Consolidate, WholeMachineChunksThenRemainderFirstFit) {
    ClusterState c(ClusterSpec::uniform(4, 8));
    c.take(0, 3);  // machine 0 has 5 free
    ConsolidatePlacer placer;
    auto p = placer.place(c, 20);  // chunks 8, 8, 4
    ASSERT_TRUE(p);
    EXPECT_EQ(parts(*p), (Parts{{1, 8}, {2, 8}, {0, 4}}));
    EXPECT_EQ(c.free_gpus(), 32 - 3 - 20);
    EXPECT_EQ(c.free_on(0), 1);
    EXPECT_EQ(c.free_on(3), 8);
}

TEST(Consolidate, SpreadsWhenAChunkFitsNowhere) {
    ClusterState c(ClusterSpec::uniform(3, 8));
    c.take(0, 5);
    c.take(1, 6);
    c.take(2, 4);  // free: 3, 2, 4
    ConsolidatePlacer placer;
    auto p = placer.place(c, 8);  // no machine has 8: spread 3 + 2 + 3
    ASSERT_TRUE(p);
    EXPECT_EQ(parts(*p), (Parts{{0, 3}, {1, 2}, {2, 3}}));
    EXPECT_EQ(c.free_gpus(), 1);
}

TEST(Consolidate, FailureReleasesEverythingItTook) {
    ClusterState c(ClusterSpec::uniform(3, 8));
    c.take(1, 7);
    c.take(2, 7);  // free: 8, 1, 1 = 10
    ConsolidatePlacer placer;
    // chunks 8, 4: the 8 goes to machine 0, the 4 fits nowhere and 4 > 1 GPU is spread over
    // 1 + 1 = 2 free GPUs: not enough, so the whole attempt is undone.
    EXPECT_FALSE(placer.place(c, 12));
    EXPECT_EQ(c.free_gpus(), 10);
    EXPECT_EQ(c.free_on(0), 8);
}

TEST(Consolidate, OneGpuJobNeedsOneFreeGpu) {
    ClusterState c(ClusterSpec::uniform(2, 8));
    c.take(0, 8);
    c.take(1, 8);
    ConsolidatePlacer placer;
    EXPECT_FALSE(placer.place(c, 1));
    EXPECT_EQ(c.free_gpus(), 0);
}

TEST(Consolidate, MixedMachinesUseTheLargestAsChunk) {
    ClusterSpec spec{{2, 8, 2}};
    ClusterState c(spec);
    ConsolidatePlacer placer;
    auto p = placer.place(c, 10);  // chunks 8 (machine 1), 2 (machine 0)
    ASSERT_TRUE(p);
    EXPECT_EQ(parts(*p), (Parts{{1, 8}, {0, 2}}));
}

TEST(Pack, NeverSpreadsAChunk) {
    ClusterState c(ClusterSpec::uniform(2, 8));
    c.take(0, 6);
    c.take(1, 6);
    PackPlacer pack;
    EXPECT_FALSE(pack.place(c, 4));
    EXPECT_EQ(c.free_gpus(), 4);
    auto p = pack.place(c, 2);
    ASSERT_TRUE(p);
    EXPECT_EQ(parts(*p), (Parts{{0, 2}}));
}

TEST(PlacerRegistry, UnknownNameListsTheValidOnes) {
    auto p = make_placer("topology");
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().message.find("consolidate, pack"), std::string::npos);
    EXPECT_TRUE(make_placer("consolidate"));
}

}  // namespace
}  // namespace astraeus

namespace astraeus {
namespace {

/// The first machine from `from` with `gpus` free, by a plain scan (the independent method).
int scan_first_fit(const ClusterState& c, int gpus, int from) {
    for (int m = std::max(from, 0); m < c.machines(); ++m)
        if (c.free_on(m) >= gpus) return m;
    return -1;
}

TEST(ClusterState, FirstFitAgreesWithAScanUnderRandomTakesAndGives) {
    ClusterSpec spec;
    for (int m = 0; m < 37; ++m) spec.machine_gpus.push_back(m % 3 == 0 ? 8 : m % 3 == 1 ? 2 : 4);
    ClusterState c(spec);
    std::vector<Placement> held;
    std::uint64_t x = 12345;
    auto next = [&](int n) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<int>((x >> 33) % static_cast<std::uint64_t>(n));
    };
    for (int step = 0; step < 5000; ++step) {
        const int g = 1 + next(8), from = next(40);
        ASSERT_EQ(c.first_fit(g, from), scan_first_fit(c, g, from)) << "step " << step;
        if (next(2) == 0 || held.empty()) {
            const int m = c.first_fit(g);
            if (m < 0) continue;
            c.take(m, g);
            held.push_back(Placement{{{m, g}}});
        } else {
            const std::size_t k = static_cast<std::size_t>(next(static_cast<int>(held.size())));
            c.give(held[k]);
            held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
        }
    }
    EXPECT_EQ(c.first_fit(9), -1);  // larger than every machine
}

TEST(ClusterState, ARolledBackTrialLeavesEveryMachineAsItWas) {
    ClusterState c(ClusterSpec::uniform(5, 8));
    c.take(1, 8);
    c.take(3, 5);
    std::vector<int> before;
    for (int m = 0; m < c.machines(); ++m) before.push_back(c.free_on(m));
    c.begin_trial();
    ConsolidatePlacer placer;
    ASSERT_TRUE(placer.place(c, 19));     // 8 + 8 + 3: machines 0, 2, then 3's 3 free
    c.give(Placement{{{1, 8}}});          // a preemption inside the round
    EXPECT_EQ(c.free_gpus(), 40 - 13 - 19 + 8);
    c.rollback();
    EXPECT_EQ(c.free_gpus(), 40 - 13);
    for (int m = 0; m < c.machines(); ++m) EXPECT_EQ(c.free_on(m), before[m]) << "machine " << m;
    EXPECT_EQ(c.first_fit(8), 0);
    EXPECT_EQ(c.first_fit(4, 1), 2);  // machine 1 is full again, 2 is free
}

}  // namespace
}  // namespace astraeus
