// The gang's semantics (exec/gang.hpp) on hand-made worker facts: the barrier, a failure and
// its release, a stop, running at the first progress, the time limit.
#include <gtest/gtest.h>

#include "astraeus/exec/gang.hpp"

namespace {

using astraeus::exec::ExecEvent;
using astraeus::exec::ExecPhase;
using astraeus::exec::ExecRun;
using astraeus::exec::Gang;
using K = ExecEvent::Kind;

ExecRun two_workers() {
    ExecRun r;
    r.run = 7;
    r.workers = 2;
    r.attempt = 1;
    return r;
}

std::vector<K> kinds(const std::vector<ExecEvent>& v) {
    std::vector<K> out;
    for (const auto& e : v) out.push_back(e.kind);
    return out;
}

TEST(Gang, BarrierThenAllExitZeroIsFinished) {
    Gang g(two_workers(), 100);
    std::vector<ExecEvent> out;
    g.worker_up(0, 100, out);
    EXPECT_EQ(g.phase(), ExecPhase::Starting);
    g.worker_up(1, 101, out);
    EXPECT_EQ(g.phase(), ExecPhase::Running);
    g.worker_exited(0, 0, 0, false, 150, out);
    g.worker_gone(0, 150, out);
    g.worker_exited(1, 0, 0, false, 160, out);
    g.worker_gone(1, 160, out);
    EXPECT_EQ(kinds(out), (std::vector<K>{K::WorkerStarted, K::WorkerStarted, K::Started, K::WorkerExited,
                                          K::WorkerExited, K::Finished}));
    EXPECT_EQ(out[2].t, 101);
    EXPECT_EQ(out[5].t, 160);
    EXPECT_EQ(g.executed_s(500), 59);
    EXPECT_TRUE(g.done());
}

TEST(Gang, ANonZeroExitFailsTheGangOthersAreStoppedThenReleased) {
    Gang g(two_workers(), 0);
    std::vector<ExecEvent> out;
    g.worker_up(0, 0, out);
    g.worker_up(1, 0, out);
    out.clear();
    g.worker_exited(1, 1, 0, false, 30, out);
    EXPECT_TRUE(g.wants_stop());
    ASSERT_EQ(kinds(out), (std::vector<K>{K::WorkerExited, K::Failed}));
    EXPECT_EQ(out[1].worker, 1);
    g.worker_gone(1, 30, out);
    g.worker_exited(0, -1, 15, true, 31, out);  // our SIGTERM: no second failure
    g.worker_gone(0, 32, out);
    EXPECT_EQ(kinds(out), (std::vector<K>{K::WorkerExited, K::Failed, K::WorkerExited, K::Released}));
    EXPECT_EQ(out.back().t, 32);
}

TEST(Gang, ASignalWeDidNotSendIsAFailure) {
    Gang g(two_workers(), 0);
    std::vector<ExecEvent> out;
    g.worker_up(0, 0, out);
    g.worker_up(1, 0, out);
    out.clear();
    g.worker_exited(0, -1, 9, false, 5, out);
    EXPECT_EQ(kinds(out), (std::vector<K>{K::WorkerExited, K::Failed}));
}

TEST(Gang, StopThenStopDoneWhateverTheExitCodes) {
    Gang g(two_workers(), 0);
    std::vector<ExecEvent> out;
    g.worker_up(0, 0, out);
    g.worker_up(1, 0, out);
    g.stop(50);
    EXPECT_TRUE(g.wants_stop());
    out.clear();
    g.worker_exited(0, 0, 0, true, 52, out);
    g.worker_exited(1, -1, 9, true, 55, out);
    g.worker_gone(0, 52, out);
    g.worker_gone(1, 55, out);
    EXPECT_EQ(kinds(out), (std::vector<K>{K::WorkerExited, K::WorkerExited, K::StopDone}));
    EXPECT_EQ(g.executed_s(100), 50);
}

TEST(Gang, RunningAtTheFirstProgressReport) {
    ExecRun r = two_workers();
    r.running_at_progress = true;
    Gang g(r, 0);
    std::vector<ExecEvent> out;
    g.worker_up(0, 1, out);
    g.worker_up(1, 2, out);
    EXPECT_EQ(g.phase(), ExecPhase::Starting);
    g.progress(1, 10, 40, out);
    EXPECT_EQ(g.phase(), ExecPhase::Running);
    EXPECT_EQ(kinds(out), (std::vector<K>{K::WorkerStarted, K::WorkerStarted, K::Started, K::Progress}));
    EXPECT_EQ(out[2].t, 40);
    EXPECT_EQ(out[3].step, 10);
}

TEST(Gang, TimeLimitCountsRunningTimeOnly) {
    ExecRun r = two_workers();
    r.time_limit_s = 100;
    r.executed_s = 30;  // an earlier attempt ran 30 s
    Gang g(r, 0);
    std::vector<ExecEvent> out;
    EXPECT_EQ(g.time_limit_at(), astraeus::exec::kNever);  // not running yet
    g.worker_up(0, 10, out);
    g.worker_up(1, 20, out);
    EXPECT_EQ(g.time_limit_at(), 90);
    out.clear();
    g.time_limit(90, out);
    EXPECT_EQ(kinds(out), (std::vector<K>{K::TimeLimit}));
    EXPECT_TRUE(g.wants_stop());
    g.worker_gone(0, 95, out);
    g.worker_gone(1, 96, out);
    EXPECT_EQ(out.back().kind, K::StopDone);
}

}  // namespace
