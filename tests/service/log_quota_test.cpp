// The per-workspace log quota (service/log_quota.hpp) on real files in a temporary folder:
// caps granted, sizes settled, the oldest logs removed first, what a restart finds, and a link
// planted in place of a log. Every figure is worked out by hand in the comments.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "astraeus/service/log_quota.hpp"

namespace astraeus::service {
namespace {

namespace fs = std::filesystem;

struct LogQuotaTest : ::testing::Test {
    fs::path root;
    void SetUp() override {
        root = fs::temp_directory_path() / ("astraeus-log-quota-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root);
        fs::create_directories(root);
    }
    void TearDown() override { fs::remove_all(root); }
    /// <root>/<ws>/<run>/attempt-<a>/worker-<w>.log (the folder made, the file not).
    std::string log(const std::string& ws, const std::string& run, int a, int w) {
        const fs::path dir = root / ws / run / ("attempt-" + std::to_string(a));
        fs::create_directories(dir);
        return (dir / ("worker-" + std::to_string(w) + ".log")).string();
    }
    static void write(const std::string& path, std::size_t bytes) { std::ofstream(path) << std::string(bytes, 'x'); }
    static std::string read(const std::string& path) {
        std::ifstream in(path);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
};

TEST_F(LogQuotaTest, CapsAreTheWorkerCapWhileThereIsRoomAndSettleToTheFilesSizes) {
    LogQuota q(10'000, 1'000);
    const std::vector<std::string> a{log("ml", "r1", 1, 0), log("ml", "r1", 1, 1)};
    EXPECT_EQ(q.reserve("ml", 1, a), 1'000u);
    EXPECT_EQ(q.used("ml"), 2'000u);  // 2 workers x 1,000 reserved
    write(a[0], 300);
    write(a[1], 500);
    q.settle(1);
    EXPECT_EQ(q.used("ml"), 800u);  // 300 + 500
    EXPECT_EQ(q.used("cv"), 0u);
    q.settle(1);  // twice: nothing more
    EXPECT_EQ(q.used("ml"), 800u);
}

TEST_F(LogQuotaTest, TheOldestLogsAreRemovedFirstUntilTheNewAttemptFits) {
    LogQuota q(3'000, 1'000);
    const std::vector<std::string> a{log("ml", "a", 1, 0), log("ml", "a", 1, 1)};
    const std::vector<std::string> b{log("ml", "b", 1, 0)};
    ASSERT_EQ(q.reserve("ml", 1, a), 1'000u);
    write(a[0], 1'000);
    write(a[1], 1'000);
    q.settle(1);  // settled first: the oldest
    ASSERT_EQ(q.reserve("ml", 2, b), 1'000u);
    write(b[0], 600);
    q.settle(2);
    ASSERT_EQ(q.used("ml"), 2'600u);
    // c needs 2 x 1,000: room 400; without a[0] 1,400; without a[1] too 2,400: enough. b stays.
    const std::vector<std::string> c{log("ml", "c", 1, 0), log("ml", "c", 1, 1)};
    EXPECT_EQ(q.reserve("ml", 3, c), 1'000u);
    EXPECT_EQ(q.used("ml"), 2'600u);  // b's 600 + c's 2,000 reserved
    EXPECT_TRUE(q.removed(a[0]));
    EXPECT_TRUE(q.removed(a[1]));
    EXPECT_FALSE(q.removed(b[0]));
    EXPECT_EQ(read(a[0]), LogQuota::removed_note("ml", 3'000));
    EXPECT_EQ(fs::file_size(b[0]), 600u);
}

TEST_F(LogQuotaTest, WhatIsLeftIsSharedAndThenNothing) {
    LogQuota q(1'500, 1'000);
    const std::vector<std::string> a{log("ml", "a", 1, 0), log("ml", "a", 1, 1)};
    EXPECT_EQ(q.reserve("ml", 1, a), 750u);  // 1,500 / 2 workers < 1,000
    EXPECT_EQ(q.used("ml"), 1'500u);
    // While a runs, nothing is left and nothing settled can be removed: b's output is dropped.
    EXPECT_EQ(q.reserve("ml", 2, {log("ml", "b", 1, 0)}), 0u);
    // Another workspace has its own quota.
    EXPECT_EQ(q.reserve("cv", 3, {log("cv", "x", 1, 0)}), 1'000u);
    // A new attempt of the same run settles the previous one first: a's files hold 100 + 0 bytes
    // (worker 1 wrote nothing), so 1,400 are left for attempt 2's one worker: its full cap.
    write(a[0], 100);
    write(a[1], 0);
    EXPECT_EQ(q.reserve("ml", 1, {log("ml", "a", 2, 0)}), 1'000u);
    EXPECT_EQ(q.used("ml"), 1'100u);  // 100 + 0 settled, 1,000 reserved (b: 0)
}

TEST_F(LogQuotaTest, NoQuotaGivesEveryWorkerTheCapAndRemovesNothing) {
    LogQuota q(0, 1'000);
    const std::string a = log("ml", "a", 1, 0);
    write(a, 5'000);
    EXPECT_EQ(q.reserve("ml", 1, {a}), 1'000u);
    EXPECT_EQ(q.reserve("ml", 2, {log("ml", "b", 1, 0)}), 1'000u);
    EXPECT_FALSE(q.removed(a));
    EXPECT_EQ(fs::file_size(a), 5'000u);
}

TEST_F(LogQuotaTest, ARestartCountsWhatIsOnDiskOldestFirstAndKnowsTheNotes) {
    const std::string older = log("ml", "old", 1, 0), newer = log("ml", "new", 1, 0), note = log("ml", "gone", 1, 0);
    write(older, 700);
    write(newer, 200);
    std::ofstream(note) << LogQuota::removed_note("ml", 2'000);
    const auto now = fs::file_time_type::clock::now();
    fs::last_write_time(older, now - std::chrono::hours(2));
    fs::last_write_time(newer, now - std::chrono::hours(1));
    std::ofstream(root / "ml" / "old" / "checkpoint.bin") << std::string(10'000, 'c');  // not a log
    LogQuota q(2'000, 1'000);
    // Found: 700 + 200 = 900 (the note and the checkpoint are not counted); a 2-worker attempt
    // needs 2,000: room 1,100, without `older` 1,800, without `newer` 2,000.
    EXPECT_EQ(q.reserve("ml", 9, {log("ml", "c", 1, 0), log("ml", "c", 1, 1)}), 1'000u);
    EXPECT_TRUE(q.removed(older));
    EXPECT_TRUE(q.removed(newer));
    EXPECT_TRUE(q.removed(note));
    EXPECT_EQ(q.used("ml"), 2'000u);
}

TEST_F(LogQuotaTest, ALinkPlantedInPlaceOfALogIsRemovedNotWrittenThrough) {
    LogQuota q(1'000, 1'000);
    const std::string a = log("ml", "a", 1, 0);
    ASSERT_EQ(q.reserve("ml", 1, {a}), 1'000u);
    write(a, 1'000);
    q.settle(1);
    // The worker (who owns its attempt folder) replaces its log by a link to a file of someone else.
    const fs::path victim = root / "victim.txt";
    std::ofstream(victim) << "keep me";
    fs::remove(a);
    fs::create_symlink(victim, a);
    EXPECT_EQ(q.reserve("ml", 2, {log("ml", "b", 1, 0)}), 1'000u);
    EXPECT_EQ(read(victim.string()), "keep me");
    EXPECT_FALSE(fs::is_symlink(a));
    EXPECT_EQ(read(a), LogQuota::removed_note("ml", 1'000));
}

}  // namespace
}  // namespace astraeus::service
