// What the service does with a resource manager's Withdrawn and Preempted events
// (exec/executor.hpp; the Slurm executor emits them: exec/slurm_executor_pending.cpp when a
// released job stays PENDING past slurm.pending_bound_s, exec/slurm_executor_admin.cpp at an
// administrator's `scontrol requeue`), in process: a scripted executor holding GPUs from Started
// to the end event as Slurm's does, on a manual clock (scripted_service.hpp). The live Slurm
// tests (tests/slurm) cover the executor's side. Every value below is computed by hand in the
// comments, in GPU-seconds; the API answers GPU-hours (GPU-seconds / 3600), compared exactly.
#include <gtest/gtest.h>

#include "scripted_service.hpp"

using namespace scripted_service;

namespace {

/// The run's attempts as GET /runs/{run}/attempts shows them (number, started_at, ended_at,
/// outcome).
json attempts(Harness& x, const std::string& name) {
    auto r = x.service().run_attempts(x.caller(), name, {});
    if (!r) throw std::runtime_error("run_attempts " + name + ": " + r.error().message);
    return r->at("attempts");
}

/// The run as GET /v1/runs/{run} shows it.
json show(Harness& x, const std::string& name) {
    auto r = x.service().show_run(x.caller(), name, {});
    if (!r) throw std::runtime_error("show_run " + name + ": " + r.error().message);
    return *r;
}

/// A Foreign event: `gpus` GPUs of machine `machine` held by jobs outside the service from t.
ExecEvent foreign(Seconds t, std::int64_t machine, int gpus, std::string detail) {
    ExecEvent e{K::Foreign, t};
    e.machine = machine;
    e.gpus = gpus;
    e.detail = std::move(detail);
    return e;
}

/// One machine of 8 GPUs: ml's run `a` of 8 placed at T0 (held from its launch), `b` of 1 GPU
/// submitted then and pending behind it at T0 + 10 (ml alone in the pool).
void fill_the_pool_and_wait(Harness& x) {
    x.submit("a", 8);
    x.at(T0);
    x.submit("b", 1);
    x.at(T0 + 10);
    ASSERT_EQ(show(x, "b").at("state"), "pending");
}

}  // namespace

TEST(ServiceExecEvents, WithdrawnPlacementWaitsAgainUnchargedAndIsNoFailure) {
    // max_failures 2. A run of 2 GPUs is placed at 10:00:00 (attempt 1); the resource manager
    // does not start it: at 10:00:30 the executor reports the node's GPUs held outside (as the
    // Slurm executor does before its Withdrawn, so that the next round places elsewhere) and
    // withdraws the placement. The run is pending again, reason "requeued: " + the executor's
    // words, attempt 1 ends "not started" at 10:00:30. At 10:01:00 the node is free again:
    // attempt 2 is placed, starts 10:01:10 (busy), fails 10:01:20, released 10:01:30. Had the
    // withdrawn attempt counted as a failure, that would be the second (= max_failures): the
    // run would end failed; it is placed again at the release (attempt 3), starts 10:01:40 and
    // finishes 10:02:00.
    // The count, x 2 GPUs (GPUs held from Started on): waiting 10:00:00-10:01:10 = 70 s -> 140
    // (not held: attempt 1 charged nothing); productive 10 + 20 = 30 s -> 60; failure held
    // 10:01:20-10:01:30 = 10 s -> 20, not held 10:01:30-10:01:40 = 10 s -> 20; starting and
    // restart 0 (start-up ends at Started). Held: 60 + 20 = 80; not held: 140 + 20 = 160.
    Harness x(600, true, 2);
    const auto run = x.submit("withdrawn", 2);
    ASSERT_EQ(x.launched_at(run, 1), T0);
    const std::int64_t machine = x.script().launched.at(0).run.placement.at(0).machine;
    const std::string why = "Slurm did not start job 12 on default-1 within 30 s (Resources): placed again";
    x.push(foreign(T0 + 30, machine, 8, "8 GPUs of node default-1 are held by Slurm jobs outside Astraeus (job 2)"));
    x.emit_detail(K::Withdrawn, T0 + 30, run, why);
    x.at(T0 + 30);
    json r = show(x, "withdrawn");
    EXPECT_EQ(r.at("state"), "pending");
    EXPECT_EQ(r.at("reason"), "requeued: " + why);
    EXPECT_EQ(r.at("attempts"), 1);
    json a = attempts(x, "withdrawn");
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].at("outcome"), "not started");
    EXPECT_EQ(a[0].at("ended_at"), "2026-11-02T10:00:30Z");
    EXPECT_EQ(x.launched_at(run, 2), -1);  // the node's GPUs are outside: not placed again there

    x.push(foreign(T0 + 60, machine, 0, ""));
    x.at(T0 + 60);
    ASSERT_EQ(x.launched_at(run, 2), T0 + 60);
    // The count through 10:01:00: 60 s waiting x 2 GPUs, nothing held.
    json j = x.ledger("withdrawn");
    EXPECT_DOUBLE_EQ(all(j, "waiting"), h(120));
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), 0);

    x.emit(K::Started, T0 + 70, run, 90);
    x.emit(K::Failed, T0 + 80, run);
    x.emit(K::Released, T0 + 90, run);
    x.at(T0 + 90);
    ASSERT_EQ(x.launched_at(run, 3), T0 + 90);  // one failure of 2 allowed: placed again
    x.emit(K::Started, T0 + 100, run, 90);
    x.emit(K::Finished, T0 + 120, run);
    x.at(T0 + 120);
    r = show(x, "withdrawn");
    EXPECT_EQ(r.at("state"), "succeeded");
    EXPECT_EQ(r.at("attempts"), 3);
    a = attempts(x, "withdrawn");
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[0].at("outcome"), "not started");
    EXPECT_EQ(a[1].at("outcome"), "failed");
    EXPECT_EQ(a[2].at("outcome"), "succeeded");
    j = x.ledger("withdrawn");
    EXPECT_DOUBLE_EQ(all(j, "waiting"), h(140));
    EXPECT_DOUBLE_EQ(held(j, "starting"), 0);
    EXPECT_DOUBLE_EQ(held(j, "restart"), 0);
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(60));
    EXPECT_DOUBLE_EQ(held(j, "failure"), h(20));
    EXPECT_DOUBLE_EQ(all(j, "failure"), h(40));
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(80));
    EXPECT_DOUBLE_EQ(j.at("waiting_gpu_hours").get<double>(), h(160));
}

TEST(ServiceExecEvents, WithdrawnAfterTheStartChangesNothing) {
    // A Withdrawn is about a placement not started: once the attempt runs (Started 10:00:10), a
    // late one (10:00:30) is ignored: the run keeps running and finishes at 10:01:00 (attempt 1
    // "succeeded"); productive 50 s x 2 GPUs = 100, waiting 10 s x 2 = 20.
    Harness x(600, true);
    const auto run = x.submit("late", 2);
    x.emit(K::Started, T0 + 10, run, 90);
    x.emit_detail(K::Withdrawn, T0 + 30, run,
                  "Slurm did not start job 12 on default-1 within 30 s (Resources): placed again");
    x.at(T0 + 30);
    EXPECT_EQ(show(x, "late").at("state"), "running");
    x.emit(K::Finished, T0 + 60, run);
    x.at(T0 + 60);
    const json a = attempts(x, "late");
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].at("outcome"), "succeeded");
    const json j = x.ledger("late");
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(100));
    EXPECT_DOUBLE_EQ(all(j, "waiting"), h(20));
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(100));
}

TEST(ServiceExecEvents, PreemptedByTheAdministratorIsNoFailureAndPlacedAgain) {
    // max_failures 2. A run of 2 GPUs is placed at 10:00:00 and starts at 10:00:10 (busy); the
    // resource manager's administrator requeues it at 10:01:10 (Preempted): attempt 1 ends
    // "preempted" at 10:01:10, its GPUs are free at that second, and the round that follows
    // the event places the run again at once (attempt 2, 10:01:10). Attempt 2 starts 10:01:20
    // (busy), fails 10:01:30, released 10:01:40: had the preemption counted as a failure, that
    // would be the second (= max_failures): the run would end failed; it is placed again
    // (attempt 3) at 10:01:40, starts 10:01:50 and finishes 10:02:00.
    // The count, x 2 GPUs (GPUs held from Started on): waiting 10 s -> 20; productive
    // 10:00:10-10:01:10 = 60 s (charged exactly to the preemption second) + 10 + 10 = 80 s ->
    // 160; preemption held 0, not held 10:01:10-10:01:20 = 10 s -> 20; failure held 10 s -> 20,
    // not held 10 s -> 20. Held: 160 + 20 = 180; not held: 20 + 20 + 20 = 60.
    Harness x(600, true, 2);
    const auto run = x.submit("requeued", 2);
    ASSERT_EQ(x.launched_at(run, 1), T0);
    const std::string why =
        "requeued: preempted in Slurm by an administrator (scontrol requeue) at 2026-11-02T10:01:10Z (job 7; "
        "Slurm does not record who): placed again by Astraeus";
    x.emit(K::Started, T0 + 10, run, 90);
    x.emit_detail(K::Preempted, T0 + 70, run, why);
    x.at(T0 + 70);
    ASSERT_EQ(x.launched_at(run, 2), T0 + 70);  // placed again by the round after the event
    json a = attempts(x, "requeued");
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].at("outcome"), "preempted");
    EXPECT_EQ(a[0].at("started_at"), "2026-11-02T10:00:10Z");
    EXPECT_EQ(a[0].at("ended_at"), "2026-11-02T10:01:10Z");
    EXPECT_EQ(show(x, "requeued").at("state"), "starting");

    x.emit(K::Started, T0 + 80, run, 90);
    x.emit(K::Failed, T0 + 90, run);
    x.emit(K::Released, T0 + 100, run);
    x.at(T0 + 100);
    ASSERT_EQ(x.launched_at(run, 3), T0 + 100);  // one failure of 2 allowed: placed again
    x.emit(K::Started, T0 + 110, run, 90);
    x.emit(K::Finished, T0 + 120, run);
    x.at(T0 + 120);
    EXPECT_EQ(show(x, "requeued").at("state"), "succeeded");
    a = attempts(x, "requeued");
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[0].at("outcome"), "preempted");
    EXPECT_EQ(a[1].at("outcome"), "failed");
    EXPECT_EQ(a[2].at("outcome"), "succeeded");
    const json j = x.ledger("requeued");
    EXPECT_DOUBLE_EQ(all(j, "waiting"), h(20));
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(160));
    EXPECT_DOUBLE_EQ(held(j, "preemption"), 0);
    EXPECT_DOUBLE_EQ(all(j, "preemption"), h(20));
    EXPECT_DOUBLE_EQ(held(j, "failure"), h(20));
    EXPECT_DOUBLE_EQ(all(j, "failure"), h(40));
    EXPECT_DOUBLE_EQ(held(j, "restart"), 0);
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(180));
    EXPECT_DOUBLE_EQ(j.at("waiting_gpu_hours").get<double>(), h(60));
}

TEST(ServiceExecEvents, PreemptedWhileTheMachineIsTakenWaitsWithTheExecutorsReason) {
    // The administrator's requeue (10:00:40) of a run of 8 GPUs started at 10:00:10, while the
    // node's GPUs are held outside from that second (the executor's Foreign event first): the
    // run waits, its reason the executor's words as given (they begin with "requeued: "), until
    // the node is free again at 10:01:00, when it is placed again (attempt 2).
    // The count through 10:01:00, x 8 GPUs: waiting 10 s -> 80; productive 30 s -> 240;
    // preemption not held 20 s -> 160, held 0.
    Harness x(600, true);
    const auto run = x.submit("big", 8);
    const std::int64_t machine = x.script().launched.at(0).run.placement.at(0).machine;
    const std::string why =
        "requeued: preempted in Slurm by an administrator (scontrol requeue) at 2026-11-02T10:00:40Z (job 9; "
        "Slurm does not record who): placed again by Astraeus";
    x.emit(K::Started, T0 + 10, run, 90);
    x.push(foreign(T0 + 40, machine, 8, "8 GPUs of node default-1 are held by Slurm jobs outside Astraeus (job 3)"));
    x.emit_detail(K::Preempted, T0 + 40, run, why);
    x.at(T0 + 40);
    const json r = show(x, "big");
    EXPECT_EQ(r.at("state"), "pending");
    EXPECT_EQ(r.at("reason"), why);
    EXPECT_EQ(x.launched_at(run, 2), -1);
    x.push(foreign(T0 + 60, machine, 0, ""));
    x.at(T0 + 60);
    EXPECT_EQ(x.launched_at(run, 2), T0 + 60);
    const json j = x.ledger("big");
    EXPECT_DOUBLE_EQ(all(j, "waiting"), h(80));
    EXPECT_DOUBLE_EQ(held(j, "productive"), h(240));
    EXPECT_DOUBLE_EQ(held(j, "preemption"), 0);
    EXPECT_DOUBLE_EQ(all(j, "preemption"), h(160));
    EXPECT_DOUBLE_EQ(j.at("allocated_gpu_hours").get<double>(), h(240));
}

// The Fairness page's explanation of "waiting for GPUs: ..." (a workspace alone in its pool,
// its own runs fill it): it said only "pool default has 0 GPUs free; this run needs 1 x 1 GPUs
// placed together", as for any other reason. By hand: one machine of 8 GPUs, ml's run `a` of 8
// placed at T0 (held from its launch); `b` of 1 GPU waits behind it, ml alone in the pool.
TEST(ServiceFairness, AloneInAFullPoolIsExplainedAsTheWorkspacesOwnRuns) {
    Harness x;
    ASSERT_NO_FATAL_FAILURE(fill_the_pool_and_wait(x));
    auto f = x.service().fairness(x.caller());
    ASSERT_TRUE(f) << f.error().message;
    ASSERT_EQ(f->at("pending").size(), 1u) << f->dump();
    const json& p = f->at("pending")[0];
    EXPECT_EQ(p.at("run"), "b");
    EXPECT_EQ(p.at("reason").get<std::string>().rfind("waiting for GPUs: all 8 GPUs of pool default are in use (8 by this workspace)", 0), 0u)
        << p.dump();
    EXPECT_EQ(p.at("explanation"),
              "workspace ml is the only one holding or asking for GPUs in pool default, so its share is the "
              "whole pool; its own runs hold 8 GPUs of it and this run needs 1 GPU free: it starts when enough "
              "of them end or give their GPUs back at their lease end");
}

// A run stopped by its owner while it waits never passes through "stopping": its history's
// "stopped" carries the cause, so `astra runs show` says "stopped (by its owner)" (the client
// reads the last cause of the history: client/render.cpp, AstraRender tests). Before, the history was
// pending -> stopped with no cause. A running run stopped by its owner keeps its cause on
// "stopping" only.
TEST(ServiceStop, APendingRunStoppedByItsOwnerRecordsTheCause) {
    Harness x;
    ASSERT_NO_FATAL_FAILURE(fill_the_pool_and_wait(x));
    auto stopped = x.service().stop_run(x.caller(), "b", {});
    ASSERT_TRUE(stopped) << stopped.error().message;
    const json b = show(x, "b");
    EXPECT_EQ(b.at("state"), "stopped");
    const json& h = b.at("history");
    ASSERT_GE(h.size(), 2u) << b.dump();
    EXPECT_EQ(h[h.size() - 2].at("state"), "pending") << b.dump();
    EXPECT_EQ(h.back().at("state"), "stopped") << b.dump();
    EXPECT_EQ(h.back().value("cause", ""), "owner") << b.dump();

    ASSERT_TRUE(x.service().stop_run(x.caller(), "a", {}));
    const json a = show(x, "a");
    ASSERT_FALSE(a.at("history").empty());
    EXPECT_EQ(a.at("history").back().at("state"), "stopping") << a.dump();
    EXPECT_EQ(a.at("history").back().at("cause"), "owner") << a.dump();
}

TEST(ServiceExecEvents, AFailedRunSaysHowItsWorkerEnded) {
    // max_failures 1, one machine of 8 GPUs. "f" (1 GPU) is placed at T0, starts T0 + 5; its
    // worker exits with code 7 at T0 + 20 (the executor's Failed follows at once, without
    // words), released T0 + 25: failed, with "attempt 1 failed: worker 0 exited with code 7".
    Harness x(600, false, 1);
    const auto run = x.submit("f", 1);
    ASSERT_EQ(x.launched_at(run, 1), T0);
    x.emit(K::Started, T0 + 5, run);
    x.emit_exit(T0 + 20, run, 0, 7, 0);
    x.emit(K::Failed, T0 + 20, run, -1, 0);
    x.emit(K::Released, T0 + 25, run);
    x.at(T0 + 25);
    const json r = show(x, "f");
    EXPECT_EQ(r.at("state"), "failed");
    EXPECT_EQ(r.at("reason"), "attempt 1 failed: worker 0 exited with code 7") << r.dump();
}

TEST(ServiceExecEvents, TheLastAttemptsWorkerExitIsTheFailuresCause) {
    // max_failures 2. "g" (2 workers of 1 GPU) placed at T0, starts T0 + 5; worker 1 exits with
    // code 3 at T0 + 20 (Failed), worker 0 is then stopped by us (SIGTERM, exit -1 at T0 + 22:
    // not the cause), released T0 + 25, placed again at once (attempt 2), starts T0 + 30; at
    // T0 + 40 worker 0 is killed by signal 9 (not ours): the second failure, the run ends
    // failed with "attempt 2 failed: worker 0 was killed by signal 9 (SIGKILL)" (not attempt
    // 1's worker 1).
    Harness x(600, false, 2);
    const auto run = x.submit("g", 1, {{"workers", 2}});
    ASSERT_EQ(x.launched_at(run, 1), T0);
    x.emit(K::Started, T0 + 5, run);
    x.emit_exit(T0 + 20, run, 1, 3, 0);
    x.emit(K::Failed, T0 + 20, run, -1, 1);
    x.emit_exit(T0 + 22, run, 0, -1, 15);
    x.emit(K::Released, T0 + 25, run);
    x.at(T0 + 25);
    ASSERT_EQ(x.launched_at(run, 2), T0 + 25);
    x.emit(K::Started, T0 + 30, run);
    x.emit_exit(T0 + 40, run, 0, -1, 9);
    x.emit(K::Failed, T0 + 40, run, -1, 0);
    x.emit(K::Released, T0 + 45, run);
    x.at(T0 + 45);
    const json r = show(x, "g");
    EXPECT_EQ(r.at("state"), "failed");
    EXPECT_EQ(r.at("reason"), "attempt 2 failed: worker 0 was killed by signal 9 (SIGKILL)") << r.dump();
}

TEST(ServiceExecEvents, ARunFailedByALostMachineNamesIt) {
    // max_failures 1: "m" (2 GPUs) placed at T0, started T0 + 5; its machine is lost at T0 + 20
    // (the service fails the run: no worker's exit to tell), released T0 + 25: failed, with
    // "attempt 1 failed: machine NAME was lost".
    Harness x(600, false, 1);
    const auto run = x.submit("m", 2);
    ASSERT_EQ(x.launched_at(run, 1), T0);
    const std::int64_t machine = x.script().launched.at(0).run.placement.at(0).machine;
    x.emit(K::Started, T0 + 5, run);
    ExecEvent lost{K::MachineLost, T0 + 20};
    lost.machine = machine;
    x.push(lost);
    x.emit(K::Released, T0 + 25, run);
    x.at(T0 + 25);
    const json r = show(x, "m");
    EXPECT_EQ(r.at("state"), "failed");
    const json machines = x.service().machines_list(x.admin()).value().at("machines");
    ASSERT_EQ(machines.size(), 1u);
    EXPECT_EQ(r.at("reason"), "attempt 1 failed: machine " + machines[0].at("name").get<std::string>() + " was lost")
        << r.dump();
}
