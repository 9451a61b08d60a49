// Launch latency of the local executor (docs/performance.md, "Launch latency"): from the
// scheduler's decision handed to Executor::launch to every worker's program running (execve
// succeeded, the gang barrier's "up"), for gangs of 1 and 4 workers running `sleep 30`, then
// stopped with the checkpoint signal and reaped before the next launch. Prints p50, p99 and max.
// usage: astraeus_bench_launch [LAUNCHES] [sandbox] [LOG_MIB] [HEAP_MIB]
//   LAUNCHES: per gang size (default 200); sandbox: the sandbox on (as root); LOG_MIB: then one
//   worker writes that much to stdout (the log path's throughput; default 500, 0: none);
//   HEAP_MIB: this process first allocates and touches that much heap (a service's), and the
//   first 4-worker launch prints each namespace init's private memory (/proc/PID/smaps_rollup).
//   ASTRAEUS_BENCH_INIT=none: without astraeus-init (the inits stay copies of this process).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "astraeus/exec/local_executor.hpp"
#include "astraeus/exec/sandbox/sandbox.hpp"

namespace {

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const std::size_t i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

/// "Rss R kB, Pss P kB, private C kB" of a process (smaps_rollup; private: Private_Clean +
/// Private_Dirty).
std::string memory_of(const std::string& pid) {
    std::ifstream in("/proc/" + pid + "/smaps_rollup");
    std::string line;
    long rss = 0, pss = 0, priv = 0;
    auto kb = [&] { return std::atol(line.c_str() + line.find(':') + 1); };
    while (std::getline(in, line)) {
        if (line.rfind("Rss:", 0) == 0) rss = kb();
        else if (line.rfind("Pss:", 0) == 0) pss = kb();
        else if (line.rfind("Private_Clean:", 0) == 0 || line.rfind("Private_Dirty:", 0) == 0) priv += kb();
    }
    return "Rss " + std::to_string(rss) + " kB, Pss " + std::to_string(pss) + " kB, private " + std::to_string(priv) + " kB";
}

/// Prints every child of this process (the namespaces' inits): its program and private memory.
void print_inits() {
    namespace fs = std::filesystem;
    for (const auto& t : fs::directory_iterator("/proc/self/task")) {
        std::ifstream in(t.path() / "children");
        std::string pid;
        while (in >> pid) {
            std::error_code ec;
            const auto exe = fs::read_symlink("/proc/" + pid + "/exe", ec);
            std::printf("  init %s (%s): %s\n", pid.c_str(), exe.filename().c_str(), memory_of(pid).c_str());
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const int launches = argc > 1 ? std::atoi(argv[1]) : 200;
    const bool boxed = argc > 2 && std::string(argv[2]) == "sandbox";
    const int log_mb = argc > 3 ? std::atoi(argv[3]) : 500;
    const int heap_mb = argc > 4 ? std::atoi(argv[4]) : 0;
    std::vector<char> heap(static_cast<std::size_t>(heap_mb) << 20);
    for (std::size_t i = 0; i < heap.size(); i += 4096) heap[i] = static_cast<char>(i);
    const char* init_env = std::getenv("ASTRAEUS_BENCH_INIT");
    namespace fs = std::filesystem;
    namespace sb = astraeus::exec::sandbox;
    const fs::path dir = fs::path("/var/tmp") / ("astraeus-bench-launch-" + std::to_string(::getpid()));
    auto config = [&] {
        astraeus::exec::LocalExecutorConfig c;
        c.runs_dir = dir.string();
        c.runner.grace_s = 5;
        c.runner.allow_root = !boxed;  // a benchmark machine may run it as root
        c.runner.init_program = ASTRAEUS_INIT;  // built beside the service, not beside the bench
        if (init_env && std::strcmp(init_env, "none") == 0) c.runner.init_program = "/nonexistent/astraeus-init";
        if (boxed) {
            auto probe = std::make_shared<sb::Probe>(sb::probe(c.sandbox, "bench-" + std::to_string(::getpid())));
            if (!probe->full()) {
                std::fprintf(stderr, "bench_launch: the sandbox is not complete here: %s\n", probe->missing().c_str());
                std::exit(2);
            }
            c.runner.sandbox = probe;
            c.runner.hide = {dir.string()};
        }
        return c;
    };
    std::printf("sandbox %s\n", boxed ? "on" : "off");
    for (int workers : {1, 4}) {
        astraeus::exec::LocalExecutor ex(config(), nullptr);
        std::vector<double> ms;
        for (int i = 0; i < launches; ++i) {
            astraeus::exec::ExecRun r;
            r.run = i + 1;
            r.workers = workers;
            r.attempt = 1;
            r.run_name = "bench-" + std::to_string(i);
            r.workspace = "bench";
            r.argv = {"sleep", "30"};
            for (int w = 0; w < workers; ++w) r.placement.push_back({1, "m", {w}});
            const auto t0 = std::chrono::steady_clock::now();
            ex.launch(0, r);
            const auto t1 = std::chrono::steady_clock::now();
            ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
            if (heap_mb > 0 && workers == 4 && i == 0) {
                std::printf("heap %d MiB; this process: %s\n", heap_mb, memory_of("self").c_str());
                print_inits();
                // The service goes on writing its heap: a page an init still maps is copied.
                for (std::size_t k = 0; k < heap.size(); k += 4096) heap[k] = static_cast<char>(k + 1);
                std::printf("after this process rewrote its heap: %s\n", memory_of("self").c_str());
                print_inits();
            }
            // The gang is up when launch returns (the Started event is queued): check it.
            astraeus::exec::ExecEvent e;
            bool started = false;
            while (ex.pop_due(astraeus::exec::kNever, e)) started = started || e.kind == astraeus::exec::ExecEvent::Kind::Started;
            if (!started) {
                std::fprintf(stderr, "bench_launch: launch %d did not start\n", i);
                return 1;
            }
            ex.stop(0, r.run);
            for (;;) {  // wait for StopDone: every process gone
                bool done = false;
                while (ex.pop_due(astraeus::exec::kNever, e)) done = done || e.kind == astraeus::exec::ExecEvent::Kind::StopDone;
                if (done) break;
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
            ex.forget(r.run);
        }
        std::printf("workers=%d launches=%d  decision->running p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", workers,
                    launches, percentile(ms, 0.5), percentile(ms, 0.99), *std::max_element(ms.begin(), ms.end()));
    }
    // The log path: a gang of LOG_WORKERS (env ASTRAEUS_BENCH_LOG_WORKERS, default 1) each writing
    // log_mb MiB to stdout at once; per worker: its log's size over the time to the Finished event.
    const char* lw = std::getenv("ASTRAEUS_BENCH_LOG_WORKERS");
    const int log_workers = lw ? std::max(1, std::atoi(lw)) : 1;
    if (boxed && log_mb > 0) {
        auto c = config();
        c.runner.log_cap_bytes = (static_cast<std::uint64_t>(log_mb) + 1) << 20;
        astraeus::exec::LocalExecutor ex(c, nullptr);
        astraeus::exec::ExecRun r;
        r.run = 100000;
        r.workers = log_workers;
        r.attempt = 1;
        r.run_name = "bench-log";
        r.workspace = "bench";
        r.argv = {"head", "-c", std::to_string(log_mb) + "M", "/dev/zero"};
        for (int w = 0; w < log_workers; ++w) r.placement.push_back({1, "m", {w}});
        const auto t0 = std::chrono::steady_clock::now();
        ex.launch(0, r);
        astraeus::exec::ExecEvent e;
        for (bool done = false; !done;) {
            while (ex.pop_due(astraeus::exec::kNever, e)) done = done || e.kind == astraeus::exec::ExecEvent::Kind::Finished;
            if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::uintmax_t least = ~std::uintmax_t{0};
        for (int w = 0; w < log_workers; ++w) least = std::min(least, fs::file_size(ex.log_path("bench", "bench-log", 1, w)));
        std::printf("log: %d worker(s) each writing %d MiB at once, all done in %.2f s: %.0f MB/s per worker (smallest "
                    "log file %ju bytes)\n",
                    log_workers, log_mb, s, static_cast<double>(least) / 1e6 / s, least);
    }
    fs::remove_all(dir);
    return 0;
}
