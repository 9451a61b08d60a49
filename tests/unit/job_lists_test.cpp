#include <gtest/gtest.h>

#include <algorithm>

#include "astraeus/sim/job_lists.hpp"

namespace astraeus::detail {
namespace {

/// Random pushes and removals on a family of 3 lists, against plain vectors erased at once
/// (the independent model): live() keeps insertion order, size() counts live entries.
void check_against_vectors(bool tombstones) {
    constexpr int kJobs = 400;
    JobLists lists(3, kJobs, tombstones);
    std::vector<std::vector<int>> model(3);
    std::vector<int> where(kJobs, -1);
    std::uint64_t x = 99;
    auto next = [&](int n) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<int>((x >> 33) % static_cast<std::uint64_t>(n));
    };
    for (int step = 0; step < 20000; ++step) {
        const int j = next(kJobs);
        if (where[j] < 0) {
            const int l = next(3);
            lists.push(static_cast<std::size_t>(l), j);
            model[l].push_back(j);
            where[j] = l;
        } else {
            const int l = where[j];
            lists.remove(static_cast<std::size_t>(l), j);
            model[l].erase(std::find(model[l].begin(), model[l].end(), j));
            where[j] = -1;
        }
        const std::size_t l = static_cast<std::size_t>(next(3));
        ASSERT_EQ(lists.size(l), model[l].size()) << "step " << step;
        if (step % 7 == 0) {
            ASSERT_EQ(lists.live(l), model[l]) << "step " << step;
        }
        // Stored entries are the live ones in order, with tombstones between.
        std::vector<int> stored;
        for (int e : lists.stored(l))
            if (e != JobLists::kGone) stored.push_back(e);
        ASSERT_EQ(stored, model[l]) << "step " << step;
        if (!tombstones) {
            ASSERT_EQ(lists.stored(l).size(), model[l].size());
        }
    }
}

TEST(JobLists, TombstonesKeepInsertionOrder) { check_against_vectors(true); }
TEST(JobLists, WithoutTombstonesARemovalErasesAtOnce) { check_against_vectors(false); }

TEST(JobLists, MostlyGoneListsAreCompacted) {
    JobLists lists(1, 1000, true);
    for (int j = 0; j < 1000; ++j) lists.push(0, j);
    for (int j = 0; j < 999; j += 1) lists.remove(0, j);  // all but the last
    EXPECT_EQ(lists.size(0), 1u);
    EXPECT_LE(lists.stored(0).size(), 66u);  // compacted whenever over 32 and half gone
    EXPECT_EQ(lists.live(0), std::vector<int>{999});
}

}  // namespace
}  // namespace astraeus::detail
