// The worker runner with real processes: exit codes, the exact environment, capped logs, the
// checkpoint signal and SIGKILL after the grace, leftovers of a group killed with their leader
// and reaped (no zombies), a program that cannot start, a working directory that cannot be
// entered (its own message), progress files, a worker that outlives the thread that launched it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "astraeus/exec/sandbox/sandbox.hpp"
#include "astraeus/exec/worker_runner.hpp"

namespace fs = std::filesystem;
using astraeus::Result;
using astraeus::exec::RunnerConfig;
using astraeus::exec::WorkerRunner;
using astraeus::exec::WorkerSpec;
using Kind = WorkerRunner::Report::Kind;

namespace {

/// The runner's config for these tests: as root (CI machines), root is allowed explicitly.
RunnerConfig test_config() {
    RunnerConfig c;
    c.allow_root = true;
    return c;
}

class Runner : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("astraeus-runner-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    WorkerSpec spec(std::vector<std::string> argv) {
        WorkerSpec s;
        s.argv = std::move(argv);
        s.env = {{"PATH", "/usr/bin:/bin"}};
        s.workdir = dir_.string();
        s.log_path = (dir_ / "w.log").string();
        return s;
    }
    /// Polls until the worker is gone (at most `seconds`); every report on the way.
    std::vector<WorkerRunner::Report> until_gone(WorkerRunner& r, WorkerRunner::Handle h, double seconds = 10) {
        std::vector<WorkerRunner::Report> all;
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (!r.gone(h) && std::chrono::steady_clock::now() < end)
            for (const auto& rep : r.poll(20)) all.push_back(rep);
        return all;
    }
    std::string read(const fs::path& p) {
        std::ifstream in(p);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    static const WorkerRunner::Report* find(const std::vector<WorkerRunner::Report>& v, Kind k) {
        for (const auto& r : v)
            if (r.kind == k) return &r;
        return nullptr;
    }
    fs::path dir_;
};

TEST_F(Runner, ExitCodeLogAndExactEnvironment) {
    WorkerRunner r(test_config());
    auto s = spec({"sh", "-c", "env | sort; pwd; echo err >&2; exit 3"});
    s.env["FOO"] = "a b";
    auto h = r.launch(s);
    ASSERT_TRUE(h) << h.error().message;
    EXPECT_TRUE(r.started(*h));
    const auto reps = until_gone(r, *h);
    const auto* ex = find(reps, Kind::Exited);
    ASSERT_NE(ex, nullptr);
    EXPECT_EQ(ex->exit_code, 3);
    EXPECT_EQ(ex->signal, 0);
    ASSERT_NE(find(reps, Kind::Gone), nullptr);
    // sh adds PWD, SHLVL and _ of its own; nothing of this process's environment leaks in.
    const std::string log = read(dir_ / "w.log");
    EXPECT_NE(log.find("FOO=a b\n"), std::string::npos) << log;
    EXPECT_NE(log.find("PATH=/usr/bin:/bin\n"), std::string::npos);
    EXPECT_EQ(log.find("HOME="), std::string::npos) << log;
    EXPECT_NE(log.find(dir_.string() + "\n"), std::string::npos);
    EXPECT_NE(log.find("err\n"), std::string::npos);
}

TEST_F(Runner, LogIsCappedAndTheWorkerIsNotBlocked) {
    RunnerConfig c = test_config();
    c.log_cap_bytes = 1024;
    WorkerRunner r(c);
    auto h = r.launch(spec({"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a; exit 0"}));
    ASSERT_TRUE(h);
    const auto reps = until_gone(r, *h);
    ASSERT_NE(find(reps, Kind::Exited), nullptr);
    EXPECT_EQ(find(reps, Kind::Exited)->exit_code, 0);
    const std::string log = read(dir_ / "w.log");
    EXPECT_EQ(log.substr(0, 1024), std::string(1024, 'a'));
    EXPECT_EQ(log.substr(1024), "\n[astraeus: log capped at 1024 bytes; later output dropped]\n");
}

TEST_F(Runner, CheckpointSignalThenCleanExit) {
    // "ready" comes from the child after its exec: a signal between the fork and the exec can be
    // taken by the shell's inherited trap and leave the child running until the grace's SIGKILL
    // (right for the runner, but not what this test checks).
    WorkerRunner r(test_config());
    auto h = r.launch(spec({"sh", "-c", "trap 'echo caught; exit 0' TERM; sh -c 'echo ready; exec sleep 100' & wait $!"}));
    ASSERT_TRUE(h);
    for (int i = 0; i < 200 && read(dir_ / "w.log").find("ready") == std::string::npos; ++i) r.poll(10);
    r.stop(*h);
    const auto t0 = std::chrono::steady_clock::now();
    const auto reps = until_gone(r, *h);
    const auto* ex = find(reps, Kind::Exited);
    ASSERT_NE(ex, nullptr);
    EXPECT_EQ(ex->exit_code, 0);
    EXPECT_TRUE(ex->we_signalled);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    EXPECT_NE(read(dir_ / "w.log").find("caught"), std::string::npos);
}

TEST_F(Runner, OutlivesTheThreadThatLaunchedIt) {
    // PR_SET_PDEATHSIG follows the thread that forked the worker: launched from a thread that
    // then ends (an HTTP handler, the scheduler loop at shutdown), the worker must still be there
    // for the checkpoint signal, not SIGKILLed with that thread.
    WorkerRunner r(test_config());
    Result<WorkerRunner::Handle> h = astraeus::fail("not launched");
    std::thread([&] {
        h = r.launch(spec({"sh", "-c", "trap 'echo caught; exit 0' TERM; sh -c 'echo ready; exec sleep 100' & wait $!"}));
    }).join();
    ASSERT_TRUE(h) << h.error().message;
    for (int i = 0; i < 200 && read(dir_ / "w.log").find("ready") == std::string::npos; ++i) r.poll(10);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a SIGKILL would have landed
    r.stop(*h);
    const auto reps = until_gone(r, *h);
    const auto* ex = find(reps, Kind::Exited);
    ASSERT_NE(ex, nullptr);
    EXPECT_EQ(ex->signal, 0);  // not killed
    EXPECT_EQ(ex->exit_code, 0);
    EXPECT_NE(read(dir_ / "w.log").find("caught"), std::string::npos);
}

TEST_F(Runner, SigkillAfterTheGrace) {
    RunnerConfig c = test_config();
    c.grace_s = 0.3;
    WorkerRunner r(c);
    auto h = r.launch(spec({"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"}));
    ASSERT_TRUE(h);
    for (int i = 0; i < 200 && read(dir_ / "w.log").find("ready") == std::string::npos; ++i) r.poll(10);
    const auto t0 = std::chrono::steady_clock::now();
    r.stop(*h);
    const auto reps = until_gone(r, *h);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto* ex = find(reps, Kind::Exited);
    ASSERT_NE(ex, nullptr);
    EXPECT_EQ(ex->signal, SIGKILL);
    EXPECT_GE(took, 0.3);
    EXPECT_LT(took, 3.0);
}

TEST_F(Runner, LeftoversDieWithTheirLeaderAndAreReaped) {
    WorkerRunner r(test_config());
    const fs::path pidfile = dir_ / "bg.pid";
    auto h = r.launch(spec({"sh", "-c", "sleep 100 & echo $! > " + pidfile.string() + "; exit 0"}));
    ASSERT_TRUE(h);
    const auto reps = until_gone(r, *h);
    ASSERT_NE(find(reps, Kind::Gone), nullptr);
    const pid_t bg = std::stoi(read(pidfile));
    // Gone, not a zombie: no /proc entry at all.
    EXPECT_FALSE(fs::exists("/proc/" + std::to_string(bg))) << "background process " << bg << " left";
}

TEST_F(Runner, AProgramThatCannotStart) {
    WorkerRunner r(test_config());
    auto h = r.launch(spec({"no-such-program-astraeus"}));
    ASSERT_TRUE(h);
    EXPECT_FALSE(r.started(*h));
    const auto reps = until_gone(r, *h);
    ASSERT_NE(find(reps, Kind::Exited), nullptr);
    EXPECT_EQ(find(reps, Kind::Exited)->exit_code, 127);
    EXPECT_NE(read(dir_ / "w.log").find("cannot run 'no-such-program-astraeus': No such file or directory"),
              std::string::npos);
}

TEST_F(Runner, AWorkingDirectoryThatCannotBeEnteredIsNotBlamedOnTheProgram) {
    WorkerRunner r(test_config());
    auto s = spec({"/bin/pwd"});
    s.workdir = (dir_ / "no-such-dir").string();
    auto h = r.launch(s);
    ASSERT_TRUE(h);
    EXPECT_FALSE(r.started(*h));
    const auto reps = until_gone(r, *h);
    ASSERT_NE(find(reps, Kind::Exited), nullptr);
    EXPECT_EQ(find(reps, Kind::Exited)->exit_code, 127);
    EXPECT_EQ(read(dir_ / "w.log"),
              "astraeus: cannot enter working directory '" + s.workdir + "': No such file or directory\n");
}

TEST_F(Runner, ProgressFile) {
    WorkerRunner r(test_config());
    auto s = spec({"sh", "-c", "for i in 1 2 3; do echo $i > p.tmp; mv p.tmp p; sleep 0.2; done"});
    s.progress_path = (dir_ / "p").string();
    auto h = r.launch(s);
    ASSERT_TRUE(h);
    std::vector<std::int64_t> steps;
    for (const auto& rep : until_gone(r, *h))
        if (rep.kind == Kind::Progress) steps.push_back(rep.step);
    EXPECT_EQ(steps, (std::vector<std::int64_t>{1, 2, 3}));
}

TEST_F(Runner, NeverRootUnlessConfigured) {
    if (::geteuid() != 0) {
        // Not root: workers run as this user whatever the config says.
        WorkerRunner r(RunnerConfig{});
        auto h = r.launch(spec({"sh", "-c", "id -u"}));
        ASSERT_TRUE(h);
        until_gone(r, *h);
        EXPECT_EQ(read(dir_ / "w.log"), std::to_string(::geteuid()) + "\n");
        return;
    }
    {
        WorkerRunner r(RunnerConfig{});
        auto h = r.launch(spec({"true"}));
        ASSERT_FALSE(h);
        EXPECT_NE(h.error().message.find("refusing to run workers as root"), std::string::npos);
    }
    {
        RunnerConfig c;
        c.run_as_user = "no-such-user-astraeus";
        WorkerRunner r(c);
        auto h = r.launch(spec({"true"}));
        ASSERT_FALSE(h);
        EXPECT_NE(h.error().message.find("no Unix user named 'no-such-user-astraeus'"), std::string::npos);
    }
    RunnerConfig c;
    c.run_as_user = "nobody";
    WorkerRunner r(c);
    auto s = spec({"sh", "-c", "id -u; id -g; echo $USER $HOME"});
    s.workdir = "/";
    s.env["HOME"] = "/root";
    auto h = r.launch(s);
    ASSERT_TRUE(h) << h.error().message;
    until_gone(r, *h);
    EXPECT_EQ(read(dir_ / "w.log"), "65534\n65534\nnobody /nonexistent\n");
}

// The sandbox (exec/sandbox/sandbox.hpp), as root only: the worker runs as its workspace's uid
// (uid_base + id), in its own pid namespace (it is not pid 1's parent's view: ps sees 2
// processes) and cgroup; a child that left its process group with setsid dies with the attempt;
// the exit code passes through the namespace's init; the cgroup is removed once it is empty.
TEST_F(Runner, SandboxedWorkerIsConfinedAndNothingOutlivesIt) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    namespace sb = astraeus::exec::sandbox;
    sb::SandboxConfig cfg;
    auto probe = std::make_shared<sb::Probe>(sb::probe(cfg, "unit-" + std::to_string(::getpid())));
    if (!probe->full()) GTEST_SKIP() << "sandbox incomplete here: " << probe->missing();
    RunnerConfig c;
    c.sandbox = probe;
    c.hide = {dir_.string()};
    c.init_program = ASTRAEUS_INIT;
    WorkerRunner r(c);
    auto s = spec({"sh", "-c", "setsid sleep 3017 < /dev/null > /dev/null 2>&1 & echo uid $(id -u); "
                               "echo procs $(ls -d /proc/[0-9]* | wc -l); exit 5"});
    s.sandbox.on = true;
    auto id = sb::identity_for(cfg, false, "", "ws", 7);
    ASSERT_TRUE(id.has_value());
    s.sandbox.id = *id;
    s.sandbox.cgroup = "unit-test-" + std::to_string(::getpid());
    s.sandbox.limits.pids_max = 32;
    s.sandbox.keep = {dir_.string()};
    auto h = r.launch(s);
    ASSERT_TRUE(h.has_value()) << h.error().message;
    const auto reps = until_gone(r, *h);
    const auto* ex = find(reps, Kind::Exited);
    ASSERT_NE(ex, nullptr);
    EXPECT_EQ(ex->exit_code, 5);  // through the init
    ASSERT_NE(find(reps, Kind::Gone), nullptr);
    const std::string log = read(dir_ / "w.log");
    EXPECT_NE(log.find("uid 3000007"), std::string::npos) << log;
    // Its pid namespace: init, sh, the setsid'ed sleep, the substitution's subshell and ls (the
    // machine's hundreds of processes are not there).
    const auto at = log.find("procs ");
    ASSERT_NE(at, std::string::npos) << log;
    EXPECT_LE(std::atoi(log.c_str() + at + 6), 6) << log;
    EXPECT_NE(std::system("pgrep -f '^sleep 3017$' > /dev/null"), 0) << "the setsid child outlived its worker";
    EXPECT_FALSE(fs::exists(probe->v2_parent + "/" + s.sandbox.cgroup)) << "its cgroup was not removed";
}

// A sandboxed worker drops its identity in a process cloned from the multi-threaded service;
// glibc's setgroups/setgid/setuid there broadcast the change to the threads glibc believes it
// has (the service's, copied at the clone) and waited forever for one that was being created
// at that instant (seen: bench_launch hung in setxid_mark_thread, the init and its worker both
// in futex_wait). The identity is now changed by the system calls themselves. Here another
// thread starts and ends threads without pause while 40 sandboxed workers are launched one
// after the other: every launch returns and every worker exits 0 (before the fix, a launch
// hung within a few; a hang fails the test at 120 s instead of blocking ctest).
TEST_F(Runner, SandboxedLaunchesNeverHangWhileTheServiceStartsThreads) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    namespace sb = astraeus::exec::sandbox;
    sb::SandboxConfig cfg;
    auto probe = std::make_shared<sb::Probe>(sb::probe(cfg, "unit-churn-" + std::to_string(::getpid())));
    if (!probe->full()) GTEST_SKIP() << "sandbox incomplete here: " << probe->missing();
    auto id = sb::identity_for(cfg, false, "", "ws", 8);
    ASSERT_TRUE(id.has_value());
    std::atomic<bool> stop{false};
    std::thread churn([&] {
        while (!stop) std::thread([] {}).join();
    });
    std::mutex mu;
    std::condition_variable cv;
    int done = 0, exited_zero = 0;
    bool finished = false;
    std::thread launches([&] {
        RunnerConfig c;
        c.sandbox = probe;
        c.hide = {dir_.string()};
        c.init_program = ASTRAEUS_INIT;
        WorkerRunner r(c);
        for (int k = 0; k < 40; ++k) {
            auto s = spec({"true"});
            std::string log = "w";
            log += std::to_string(k);
            log += ".log";
            s.log_path = (dir_ / log).string();
            s.sandbox.on = true;
            s.sandbox.id = *id;
            s.sandbox.cgroup = "unit-churn-";
            s.sandbox.cgroup += std::to_string(::getpid());
            s.sandbox.cgroup += '-';
            s.sandbox.cgroup += std::to_string(k);
            s.sandbox.keep = {dir_.string()};
            auto h = r.launch(s);
            if (h) {
                const auto reps = until_gone(r, *h);
                const auto* ex = find(reps, Kind::Exited);
                std::lock_guard<std::mutex> l(mu);
                exited_zero += ex && ex->exit_code == 0;
            }
            std::lock_guard<std::mutex> l(mu);
            ++done;
            cv.notify_all();
        }
        std::lock_guard<std::mutex> l(mu);
        finished = true;
        cv.notify_all();
    });
    std::unique_lock<std::mutex> l(mu);
    if (!cv.wait_for(l, std::chrono::seconds(120), [&] { return finished; })) {
        ADD_FAILURE() << "a sandboxed launch hung: " << done << " of 40 returned in 120 s";
        std::fflush(nullptr);
        std::_Exit(1);  // the hung launch cannot be joined
    }
    l.unlock();
    stop = true;
    churn.join();
    launches.join();
    EXPECT_EQ(done, 40);
    EXPECT_EQ(exited_zero, 40);
}

namespace {

/// The program a process runs (/proc/PID/exe), "" when gone.
std::string exe_of(pid_t pid) {
    std::error_code ec;
    return fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string();
}

/// The real uid of a process (/proc/PID/status), -1 when gone.
long uid_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("Uid:", 0) == 0) return std::atol(line.c_str() + 4);
    return -1;
}

/// The descriptors >= 3 a process holds ("fd -> target" each).
std::vector<std::string> fds_above_2(pid_t pid) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        const std::string n = e.path().filename().string();
        if (std::atoi(n.c_str()) < 3) continue;
        std::error_code ec2;
        out.push_back(n + " -> " + fs::read_symlink(e.path(), ec2).string());
    }
    return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

// A sandboxed gang of 4 launched at once (launch_all: every clone first, then every execve's
// confirmation): each worker runs (its own line in its own log), each namespace's init is
// astraeus-init (not a copy of this test program) under the workspace's uid once launch_all has
// returned, which the worker cannot inspect (/proc/1/environ: astraeus-init is not dumpable),
// and the checkpoint signal ends each worker with its status passed on (SIGTERM).
TEST_F(Runner, SandboxedGangOfFourRunsUnderTheSmallInit) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    namespace sb = astraeus::exec::sandbox;
    sb::SandboxConfig cfg;
    auto probe = std::make_shared<sb::Probe>(sb::probe(cfg, "unit-gang-" + std::to_string(::getpid())));
    if (!probe->full()) GTEST_SKIP() << "sandbox incomplete here: " << probe->missing();
    RunnerConfig c;
    c.sandbox = probe;
    c.hide = {dir_.string()};
    c.init_program = ASTRAEUS_INIT;
    c.grace_s = 10;
    WorkerRunner r(c);
    ASSERT_EQ(r.init_program(), ASTRAEUS_INIT);
    auto id = sb::identity_for(cfg, false, "", "ws", 9);
    ASSERT_TRUE(id.has_value());
    std::vector<WorkerSpec> specs;
    for (int k = 0; k < 4; ++k) {
        // The worker (the same uid as its init) cannot read its init's environment, once the test
        // has seen launch_all return (astraeus-init has taken the identity by then): "go".
        auto s = spec({"sh", "-c", "echo worker $RANK up; while [ ! -e '" + (dir_ / "go").string() +
                                       "' ]; do sleep 0.02; done; cat /proc/1/environ > /dev/null 2>&1 && "
                                       "echo init readable; echo checked; exec sleep 30"});
        s.env["RANK"] = std::to_string(k);
        s.log_path = (dir_ / ("w" + std::to_string(k) + ".log")).string();
        s.sandbox.on = true;
        s.sandbox.id = *id;
        s.sandbox.cgroup = "unit-gang-" + std::to_string(::getpid()) + "-" + std::to_string(k);
        s.sandbox.keep = {dir_.string()};
        specs.push_back(std::move(s));
    }
    std::vector<const WorkerSpec*> ptrs;
    for (const auto& s : specs) ptrs.push_back(&s);
    auto hs = r.launch_all(ptrs);
    ASSERT_EQ(hs.size(), 4u);
    std::vector<WorkerRunner::Handle> handles;
    for (auto& h : hs) {
        ASSERT_TRUE(h.has_value()) << h.error().message;
        EXPECT_TRUE(r.started(*h));
        handles.push_back(*h);
        const pid_t init = r.pid(*h);
        EXPECT_TRUE(ends_with(exe_of(init), "/astraeus-init")) << exe_of(init);
        EXPECT_EQ(uid_of(init), 3000009);  // astraeus-init took the workspace's identity
        // Nothing of this process's but the standard streams and the status pipe (the error pipe
        // closed, the cgroup files and astraeus-init's own descriptor closed at the exec).
        const auto fds = fds_above_2(init);
        ASSERT_EQ(fds.size(), 1u) << ::testing::PrintToString(fds);
        EXPECT_EQ(fds[0].find("pipe:"), fds[0].find(" -> ") + 4) << fds[0];
    }
    std::ofstream(dir_ / "go") << "go\n";
    ::chmod((dir_ / "go").c_str(), 0644);
    // Each worker's own lines (drained from its pipe by poll).
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto expected = [](int k) { return "worker " + std::to_string(k) + " up\nchecked\n"; };
    auto all_done = [&] {
        for (int k = 0; k < 4; ++k)
            if (read(dir_ / ("w" + std::to_string(k) + ".log")).find("checked") == std::string::npos) return false;
        return true;
    };
    while (!all_done() && std::chrono::steady_clock::now() < end) (void)r.poll(20);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(read(dir_ / ("w" + std::to_string(k) + ".log")), expected(k));
    for (auto h : handles) r.stop(h);
    std::vector<WorkerRunner::Report> reps;
    const auto end2 = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (r.live() > 0 && std::chrono::steady_clock::now() < end2)
        for (const auto& rep : r.poll(20)) reps.push_back(rep);
    int exited = 0, gone = 0;
    for (const auto& rep : reps) {
        if (rep.kind == Kind::Exited) {
            ++exited;
            EXPECT_EQ(rep.signal, SIGTERM) << "the checkpoint signal, passed on by astraeus-init";
            EXPECT_EQ(rep.exit_code, -1);
        }
        gone += rep.kind == Kind::Gone;
    }
    EXPECT_EQ(exited, 4);
    EXPECT_EQ(gone, 4);
}

// The stop through astraeus-init as through the init it replaced: the checkpoint signal reaches
// the worker (its trap runs and exits 7; 7 is passed on), and after a stop the init waits for
// every process of the namespace (a helper that ignores the signal finishes its write half a
// second after the worker has exited; left to itself, the init would have ended the namespace).
TEST_F(Runner, SandboxedStopReachesTheWorkerAndItsStatusIsPassedOn) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    namespace sb = astraeus::exec::sandbox;
    sb::SandboxConfig cfg;
    auto probe = std::make_shared<sb::Probe>(sb::probe(cfg, "unit-stop-" + std::to_string(::getpid())));
    if (!probe->full()) GTEST_SKIP() << "sandbox incomplete here: " << probe->missing();
    RunnerConfig c;
    c.sandbox = probe;
    c.hide = {dir_.string()};
    c.init_program = ASTRAEUS_INIT;
    c.grace_s = 20;
    WorkerRunner r(c);
    auto s = spec({"sh", "-c",
                   "(trap '' TERM; echo armed; sleep 0.5; echo helper done) & "
                   "trap 'echo got TERM; exit 7' TERM; echo ready; while :; do sleep 0.05; done"});
    s.sandbox.on = true;
    auto id = sb::identity_for(cfg, false, "", "ws", 10);
    ASSERT_TRUE(id.has_value());
    s.sandbox.id = *id;
    s.sandbox.cgroup = "unit-stop-" + std::to_string(::getpid());
    s.sandbox.keep = {dir_.string()};
    auto h = r.launch(s);
    ASSERT_TRUE(h.has_value()) << h.error().message;
    EXPECT_TRUE(ends_with(exe_of(r.pid(*h)), "/astraeus-init")) << exe_of(r.pid(*h));
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto both = [&] {  // the worker's trap and the helper's are set
        const std::string l = read(dir_ / "w.log");
        return l.find("ready") != std::string::npos && l.find("armed") != std::string::npos;
    };
    while (!both() && std::chrono::steady_clock::now() < end) (void)r.poll(20);
    ASSERT_TRUE(both()) << read(dir_ / "w.log");
    r.stop(*h);
    const auto reps = until_gone(r, *h, 20);
    const auto* ex = find(reps, Kind::Exited);
    ASSERT_NE(ex, nullptr);
    EXPECT_EQ(ex->exit_code, 7);
    EXPECT_EQ(ex->signal, 0);
    ASSERT_NE(find(reps, Kind::Gone), nullptr);
    const std::string log = read(dir_ / "w.log");
    EXPECT_NE(log.find("got TERM"), std::string::npos) << log;
    EXPECT_NE(log.find("helper done"), std::string::npos) << "the init did not wait for the namespace after the stop: " << log;
}

// A gang launched at once keeps each worker's own outcome: one runs, one whose program does
// not exist and one whose working directory does not exist fail with their own step in their
// own log, one with an empty command is refused alone; the others are not disturbed.
TEST_F(Runner, SandboxedGangReportsEachWorkersFailureOnItsOwn) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    namespace sb = astraeus::exec::sandbox;
    sb::SandboxConfig cfg;
    auto probe = std::make_shared<sb::Probe>(sb::probe(cfg, "unit-gangerr-" + std::to_string(::getpid())));
    if (!probe->full()) GTEST_SKIP() << "sandbox incomplete here: " << probe->missing();
    RunnerConfig c;
    c.sandbox = probe;
    c.hide = {dir_.string()};
    c.init_program = ASTRAEUS_INIT;
    WorkerRunner r(c);
    auto id = sb::identity_for(cfg, false, "", "ws", 12);
    ASSERT_TRUE(id.has_value());
    const std::vector<std::vector<std::string>> argvs = {{"sh", "-c", "exit 3"}, {"/nonexistent/prog"}, {"true"}, {}};
    std::vector<WorkerSpec> specs;
    for (std::size_t k = 0; k < argvs.size(); ++k) {
        auto s = spec(argvs[k]);
        s.log_path = (dir_ / ("w" + std::to_string(k) + ".log")).string();
        if (k == 2) s.workdir = (dir_ / "no-such-dir").string();
        s.sandbox.on = true;
        s.sandbox.id = *id;
        s.sandbox.cgroup = "unit-gangerr-" + std::to_string(::getpid()) + "-" + std::to_string(k);
        s.sandbox.keep = {dir_.string()};
        specs.push_back(std::move(s));
    }
    std::vector<const WorkerSpec*> ptrs;
    for (const auto& s : specs) ptrs.push_back(&s);
    auto hs = r.launch_all(ptrs);
    ASSERT_EQ(hs.size(), 4u);
    ASSERT_TRUE(hs[0] && hs[1] && hs[2]);
    ASSERT_FALSE(hs[3]);
    EXPECT_EQ(hs[3].error().message, "the worker's command is empty");
    EXPECT_TRUE(r.started(*hs[0]));
    EXPECT_FALSE(r.started(*hs[1]));
    EXPECT_FALSE(r.started(*hs[2]));
    std::map<WorkerRunner::Handle, int> codes;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (r.live() > 0 && std::chrono::steady_clock::now() < end)
        for (const auto& rep : r.poll(20))
            if (rep.kind == Kind::Exited) codes[rep.worker] = rep.exit_code;
    EXPECT_EQ(codes[*hs[0]], 3);
    EXPECT_EQ(codes[*hs[1]], 127);
    EXPECT_EQ(codes[*hs[2]], 127);
    EXPECT_EQ(read(dir_ / "w0.log"), "");
    EXPECT_EQ(read(dir_ / "w1.log"), "astraeus: cannot run '/nonexistent/prog': No such file or directory (working directory " +
                                         dir_.string() + ")\n");
    EXPECT_EQ(read(dir_ / "w2.log"), "astraeus: cannot enter working directory '" + (dir_ / "no-such-dir").string() +
                                         "': No such file or directory\n");
}

// Without astraeus-init (not found), the init stays a copy of this program and does its work
// itself: the worker's status is passed on all the same.
TEST_F(Runner, SandboxedWithoutTheSmallInitFallsBack) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    namespace sb = astraeus::exec::sandbox;
    sb::SandboxConfig cfg;
    auto probe = std::make_shared<sb::Probe>(sb::probe(cfg, "unit-noinit-" + std::to_string(::getpid())));
    if (!probe->full()) GTEST_SKIP() << "sandbox incomplete here: " << probe->missing();
    RunnerConfig c;
    c.sandbox = probe;
    c.hide = {dir_.string()};
    c.init_program = (dir_ / "no-such-astraeus-init").string();
    WorkerRunner r(c);
    EXPECT_EQ(r.init_program(), "");
    auto s = spec({"sh", "-c", "sleep 0.3; exit 4"});
    s.sandbox.on = true;
    auto id = sb::identity_for(cfg, false, "", "ws", 11);
    ASSERT_TRUE(id.has_value());
    s.sandbox.id = *id;
    s.sandbox.cgroup = "unit-noinit-" + std::to_string(::getpid());
    s.sandbox.keep = {dir_.string()};
    auto h = r.launch(s);
    ASSERT_TRUE(h.has_value()) << h.error().message;
    EXPECT_EQ(exe_of(r.pid(*h)), exe_of(::getpid())) << "the init is a copy of this program";
    const auto reps = until_gone(r, *h, 20);
    const auto* ex = find(reps, Kind::Exited);
    ASSERT_NE(ex, nullptr);
    EXPECT_EQ(ex->exit_code, 4);
}

TEST(RunnerParts, ParseProgressAndSignals) {
    EXPECT_EQ(astraeus::exec::parse_progress("1200\n"), 1200);
    EXPECT_EQ(astraeus::exec::parse_progress(" 7 "), 7);
    EXPECT_FALSE(astraeus::exec::parse_progress("12a"));
    EXPECT_FALSE(astraeus::exec::parse_progress(""));
    EXPECT_FALSE(astraeus::exec::parse_progress("-3"));
    EXPECT_EQ(astraeus::exec::signal_number("SIGTERM"), SIGTERM);
    EXPECT_EQ(astraeus::exec::signal_number("USR1"), SIGUSR1);
    EXPECT_EQ(astraeus::exec::signal_number("SIGKILL"), 0);
}

TEST(RunnerParts, ContractEnvironment) {
    astraeus::exec::WorkerIdentity id;
    id.run = "llm";
    id.workspace = "ml";
    id.worker = 1;
    id.workers = 2;
    id.attempt = 3;
    id.gpus = {2, 3};
    id.master_port = 41000;
    id.local_rank = 1;
    id.checkpoint_dir = "/c";
    id.progress_file = "/p";
    const auto env = astraeus::exec::worker_env(id, {{"RANK", "9"}, {"FOO", "x"}},
                                                {{"HOME", "/home/u"}, {"SECRET", "s"}});
    EXPECT_EQ(env.at("RANK"), "1");  // the contract wins over the run's env
    EXPECT_EQ(env.at("FOO"), "x");
    EXPECT_EQ(env.at("HOME"), "/home/u");
    EXPECT_FALSE(env.contains("SECRET"));
    EXPECT_EQ(env.at("PATH"), "/usr/local/bin:/usr/bin:/bin");
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "2,3");
    EXPECT_EQ(env.at("WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("LOCAL_RANK"), "1");
    EXPECT_EQ(env.at("NODE_RANK"), "1");
    EXPECT_EQ(env.at("MASTER_ADDR"), "127.0.0.1");
    EXPECT_EQ(env.at("MASTER_PORT"), "41000");
    EXPECT_EQ(env.at("ASTRAEUS_ATTEMPT"), "3");
    EXPECT_EQ(env.at("ASTRAEUS_WORKERS"), "2");
    EXPECT_EQ(env.at("ASTRAEUS_WORKER"), "1");
    EXPECT_EQ(env.at("ASTRAEUS_CHECKPOINT_DIR"), "/c");
    EXPECT_EQ(env.at("ASTRAEUS_PROGRESS_FILE"), "/p");
}

}  // namespace
