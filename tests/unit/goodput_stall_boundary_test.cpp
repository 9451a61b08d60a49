// Stalls with progress reports off minute boundaries, and a new attempt's progress history
// (issue 14): replayed through the event log (the count `astraeus goodput replay`, the simulator
// and the service share, goodput/counter.hpp). GPU-seconds computed by hand in the comments.
#include <gtest/gtest.h>

#include "astraeus/goodput/ledger.hpp"
#include "goodput_test_util.hpp"

namespace astraeus::goodput {
namespace {
using testing::Log;
using testing::replay_text;

constexpr Seconds kMin = 60;
constexpr Seconds T0 = 1793613600;  // 2026-11-02T10:00:00Z

Counts counts(std::initializer_list<std::tuple<Category, bool, GpuSeconds>> parts) {
    Counts c;
    for (const auto& [k, h, v] : parts) c.add(k, h, v);
    return c;
}

TEST(GoodputStallBoundary, StallCountsFromAnOffBoundaryReport) {
    // 1 worker x 2 GPUs placed and started at 10:00:00, busy (90 %) every minute; progress at
    // 10:01:30 and 10:03:20, then none; timeout 600 s: detected at 10:13:20; ends 10:20:00.
    // The stall counts from the last progress, 10:03:20 (not from 10:04):
    //   productive [10:00:00, 10:03:20) = 200 s x 2 = 400
    //   stalled    [10:03:20, 10:20:00) = 1000 s x 2 = 2000
    Log log;
    log.submit(T0, "r", "ws", "a100", 1, 2)
        .place(T0, "r", 0, "m1")
        .move(T0, "start", "r", 0)
        .util_minutes(T0, T0 + 20 * kMin, "r", 0, "90, 90")
        .progress(T0 + 90, "r", 0, 1)
        .progress(T0 + 200, "r", 0, 2)
        .move(T0 + 20 * kMin, "end", "r", 0);
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    EXPECT_EQ(r.ledger().run_total(0),
              counts({{Category::Productive, true, 400}, {Category::Stalled, true, 2000}}));
    EXPECT_EQ(testing::sum_all(r.ledger().run_total(0)), 20 * kMin * 2);
}

TEST(GoodputStallBoundary, DetectionMidHourMovesOnlyTheSecondsAfterTheReport) {
    // The same at the end of an hour: progress every 9 minutes from 10:05, the last at
    // 10:59:45, detected 11:09:45, end 11:12:00.
    // Hour 10: productive [10:00, 10:59:45) = 3585 s, stalled [10:59:45, 11:00) = 15 s;
    // hour 11: stalled [11:00, 11:12) = 720 s. 1 GPU.
    Log log;
    log.submit(T0, "r", "ws", "a100", 1, 1)
        .place(T0, "r", 0, "m1")
        .move(T0, "start", "r", 0)
        .util_minutes(T0, T0 + 72 * kMin, "r", 0, "90")
        .progress(T0 + 5 * kMin, "r", 0, 1)
        .progress(T0 + 14 * kMin, "r", 0, 2)
        .progress(T0 + 23 * kMin, "r", 0, 3)
        .progress(T0 + 32 * kMin, "r", 0, 4)
        .progress(T0 + 41 * kMin, "r", 0, 5)
        .progress(T0 + 50 * kMin, "r", 0, 6)
        .progress(T0 + 59 * kMin + 45, "r", 0, 7)
        .move(T0 + 72 * kMin, "end", "r", 0);
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    const auto hour10 = r.ledger().query(By::Run, {T0, T0 + kHour});
    ASSERT_EQ(hour10.size(), 1U);
    EXPECT_EQ(hour10[0].counts, counts({{Category::Productive, true, 3585}, {Category::Stalled, true, 15}}));
    const auto hour11 = r.ledger().query(By::Run, {T0 + kHour, T0 + 2 * kHour});
    ASSERT_EQ(hour11.size(), 1U);
    EXPECT_EQ(hour11[0].counts, counts({{Category::Stalled, true, 720}}));
}

TEST(GoodputStallBoundary, StallEndsAtTheResumingReport) {
    // As above (stalled from 10:03:20, detected 10:13:20), then progress again at 10:16:40;
    // ends 10:20:00. The minute of the resuming report is split at the report:
    //   productive [10:00:00, 10:03:20) + [10:16:40, 10:20:00) = 200 + 200 s = 400 s x 2 = 800
    //   stalled    [10:03:20, 10:16:40) = 800 s x 2 = 1600
    Log log;
    log.submit(T0, "r", "ws", "a100", 1, 2)
        .place(T0, "r", 0, "m1")
        .move(T0, "start", "r", 0)
        .util_minutes(T0, T0 + 20 * kMin, "r", 0, "90, 90")
        .progress(T0 + 90, "r", 0, 1)
        .progress(T0 + 200, "r", 0, 2)
        .progress(T0 + 16 * kMin + 40, "r", 0, 3)
        .move(T0 + 20 * kMin, "end", "r", 0);
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    EXPECT_EQ(r.ledger().run_total(0),
              counts({{Category::Productive, true, 800}, {Category::Stalled, true, 1600}}));
}

TEST(GoodputStallBoundary, NewAttemptStartsWithNoProgressHistory) {
    // 1 worker x 1 GPU. Attempt 1: started 10:00, busy, progress 10:01 and 10:02 (step 2),
    // fails 10:05, released 10:06, waits until 13:00 to be placed again, starts 13:02 and
    // restores from a checkpoint for 15 minutes: its first progress (step 1, below attempt 1's
    // step 2) comes at 13:17, the next at 13:25. Ends 13:30. Attempt 2 is not judged by
    // attempt 1's clock or step: no stall at all (attempt 1's clock would have found one at
    // 13:12, 10 minutes after the start).
    //   productive [10:00, 10:05) 300 + [13:02, 13:30) 1680 = 1980
    //   failure held [10:05, 10:06) 60; failure not held [10:06, 13:00) 10440
    //   restart [13:00, 13:02) 120                      sum 12600 = 3.5 h
    Log log;
    log.submit(T0, "r", "ws", "a100", 1, 1)
        .place(T0, "r", 0, "m1")
        .move(T0, "start", "r", 0)
        .util_minutes(T0, T0 + 5 * kMin, "r", 0, "90")
        .progress(T0 + kMin, "r", 0, 1)
        .progress(T0 + 2 * kMin, "r", 0, 2)
        .move(T0 + 5 * kMin, "fail", "r", 0)
        .move(T0 + 6 * kMin, "release", "r", 0)
        .place(T0 + 180 * kMin, "r", 0, "m2")
        .move(T0 + 182 * kMin, "start", "r", 0)
        .util_minutes(T0 + 182 * kMin, T0 + 210 * kMin, "r", 0, "90")
        .progress(T0 + 197 * kMin, "r", 0, 1)
        .progress(T0 + 205 * kMin, "r", 0, 2)
        .move(T0 + 210 * kMin, "end", "r", 0);
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    EXPECT_EQ(r.ledger().run_total(0), counts({{Category::Productive, true, 1980},
                                               {Category::Failure, true, 60},
                                               {Category::Failure, false, 10440},
                                               {Category::Restart, true, 120}}));
    EXPECT_EQ(testing::sum_all(r.ledger().run_total(0)), 210 * kMin);
}

TEST(GoodputStallBoundary, NewAttemptStallsFromItsOwnLastReport) {
    // As above, but attempt 2 reports at 13:05:30 and then never again: detected 13:15:30,
    // stalled [13:05:30, 13:30) = 1470; productive 300 + [13:02, 13:05:30) 210 = 510.
    Log log;
    log.submit(T0, "r", "ws", "a100", 1, 1)
        .place(T0, "r", 0, "m1")
        .move(T0, "start", "r", 0)
        .util_minutes(T0, T0 + 5 * kMin, "r", 0, "90")
        .progress(T0 + kMin, "r", 0, 1)
        .move(T0 + 5 * kMin, "fail", "r", 0)
        .move(T0 + 6 * kMin, "release", "r", 0)
        .place(T0 + 180 * kMin, "r", 0, "m2")
        .move(T0 + 182 * kMin, "start", "r", 0)
        .util_minutes(T0 + 182 * kMin, T0 + 210 * kMin, "r", 0, "90")
        .progress(T0 + 185 * kMin + 30, "r", 0, 1)
        .move(T0 + 210 * kMin, "end", "r", 0);
    Replayer r;
    ASSERT_EQ(replay_text(log.text(), r), "");
    EXPECT_EQ(r.ledger().run_total(0), counts({{Category::Productive, true, 510},
                                               {Category::Stalled, true, 1470},
                                               {Category::Failure, true, 60},
                                               {Category::Failure, false, 10440},
                                               {Category::Restart, true, 120}}));
}

}  // namespace
}  // namespace astraeus::goodput
