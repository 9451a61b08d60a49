// Submitting runs to the live service's core (issue 18): Service::submit, the code behind
// POST /v1/runs after the HTTP layer (parse, workspace and pool checks, per-workspace limits,
// the run's index entries, the goodput count's workers, the store transaction with
// synchronous=FULL), on the simulated executor with a one-machine pool so that every run but
// the first waits (the backlog grows by one per submission).
// Prints, for each backlog size N: the time of all N submissions and of the last 1,000 of them
// (submitted while N - 1,000 runs were pending), per run, submissions per second and the p50 and
// p99 of one submission; then, per run, the bytes this process passed to write/pwrite and those
// calls (/proc/self/io: the WAL frames and the log line; socket sends are not counted, so this
// says nothing for PostgreSQL), the submitting thread's CPU time, and the slowest submission.
// ASTRAEUS_BENCH_TRACE=FILE writes FILE.N: one line per submission (index, seconds since the
// first, microseconds).
// Usage: astraeus_bench_service_submit [DATA_PARENT_DIR (default /dev/shm) | pg:CONNINFO] [N...]
//   (default N: 1000 20000 100000; the SQLite store goes to a fresh folder under DATA_PARENT_DIR;
//   with pg:CONNINFO, a libpq connection string of a user who may create databases, the
//   PostgreSQL store goes to a fresh database on that server, dropped afterwards).
// docs/performance.md, "Submitting with a large backlog".
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>
#include <vector>

#include "astraeus/service/service.hpp"
#include "astraeus/service/sim_executor.hpp"
#include "astraeus/service/token.hpp"
#include "astraeus/store/pg_store.hpp"
#include "astraeus/store/store.hpp"

namespace {

using namespace astraeus;
using Clock = std::chrono::steady_clock;

/// Runs `sql` on the server of `conninfo`; false (and says why) on an error.
bool pg_command(const std::string& conninfo, const std::string& sql) {
    PGconn* c = PQconnectdb(conninfo.c_str());
    bool ok = PQstatus(c) == CONNECTION_OK;
    if (ok) {
        PGresult* r = PQexec(c, sql.c_str());
        ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok) std::fprintf(stderr, "%s: %s", sql.c_str(), PQresultErrorMessage(r));
        PQclear(r);
    } else {
        std::fprintf(stderr, "%s", PQerrorMessage(c));
    }
    PQfinish(c);
    return ok;
}

/// What this process has written so far (/proc/self/io: wchar, the bytes passed to write and
/// pwrite, files and sockets alike; syscw, those calls).
struct Written {
    double bytes = 0, calls = 0;
};
Written written() {
    Written w;
    std::ifstream io("/proc/self/io");
    std::string key;
    double v = 0;
    while (io >> key >> v) {
        if (key == "wchar:") w.bytes = v;
        if (key == "syscw:") w.calls = v;
    }
    return w;
}

/// The calling thread's CPU time in microseconds (what it computed, whatever the machine's load).
double thread_cpu_us() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e6 * static_cast<double>(ts.tv_sec) + 1e-3 * static_cast<double>(ts.tv_nsec);
}

int run_one(const std::string& parent, int n) {
    const bool pg = parent.starts_with("pg:");
    const std::string tag = "astraeus_bench_submit_" + std::to_string(::getpid()) + "_" + std::to_string(n);
    const std::string dir = parent + "/" + tag;
    const std::string conninfo = pg ? parent.substr(3) : "";
    if (pg && !pg_command(conninfo, "CREATE DATABASE " + tag)) return 1;
    if (!pg) std::filesystem::remove_all(dir);
    auto st = pg ? store::open_postgresql(conninfo + " dbname=" + tag) : store::open_sqlite(dir);
    if (!st) return std::fprintf(stderr, "%s\n", st.error().message.c_str()), 1;
    service::ServiceConfig cfg;
    cfg.pools = {{"default", {{1, 8}}}};
    cfg.limits.pending_runs = 10'000'000;
    cfg.limits.submissions_per_minute = 1'000'000;
    store::Store* raw = st->get();
    auto svc = service::Service::open(cfg, std::move(*st), std::make_unique<service::SimExecutor>(cfg.executor));
    if (!svc) return std::fprintf(stderr, "%s\n", svc.error().message.c_str()), 1;
    auto orgs = raw->orgs();
    auto clusters = raw->clusters();
    auto ws = raw->set_workspace(orgs->front().id, clusters->front().id, "ml", 1.0);
    if (!ws) return std::fprintf(stderr, "%s\n", ws.error().message.c_str()), 1;
    store::TokenRec tok;
    tok.name = "bench";
    tok.scope = store::Scope::Workspace;
    tok.org_id = orgs->front().id;
    tok.workspace_id = *ws;
    tok.hash = service::sha256_hex("astx_bench");
    auto tid = raw->add_token(tok);
    if (!tid) return std::fprintf(stderr, "%s\n", tid.error().message.c_str()), 1;
    auto caller = (*svc)->authenticate("Bearer astx_bench");
    if (!caller) return std::fprintf(stderr, "auth: %s\n", caller.error().message.c_str()), 1;
    std::vector<double> each_us;
    each_us.reserve(static_cast<std::size_t>(n));
    // ASTRAEUS_BENCH_TRACE=FILE: one line per submission (index, seconds since the first, us).
    const char* trace_path = std::getenv("ASTRAEUS_BENCH_TRACE");
    std::FILE* trace = trace_path ? std::fopen((std::string(trace_path) + "." + std::to_string(n)).c_str(), "w") : nullptr;
    const auto t0 = Clock::now();
    auto tail0 = t0;
    const Written w0 = written();
    const double cpu0 = thread_cpu_us();
    Written wtail0 = w0;
    double cputail0 = cpu0;
    for (int i = 0; i < n; ++i) {
        if (i == n - 1000) wtail0 = written(), cputail0 = thread_cpu_us();
        const auto s0 = Clock::now();
        if (i == n - 1000) tail0 = s0;
        const std::string body = R"({"name":"r)" + std::to_string(i) +
                                 R"(","workers":1,"gpus_per_worker":8,"sim_duration_s":3600})";
        auto r = (*svc)->submit(*caller, body);
        if (!r) return std::fprintf(stderr, "submit %d: %d %s\n", i, r.error().status, r.error().message.c_str()), 1;
        each_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s0).count());
        if (trace) std::fprintf(trace, "%d %.3f %.0f\n", i, std::chrono::duration<double>(s0 - t0).count(), each_us.back());
    }
    if (trace) std::fclose(trace);
    const auto t1 = Clock::now();
    const Written w1 = written();
    const double cpu1 = thread_cpu_us();
    const double all_s = std::chrono::duration<double>(t1 - t0).count();
    const double tail_s = std::chrono::duration<double>(t1 - tail0).count();
    std::sort(each_us.begin(), each_us.end());
    const auto pct = [&](double q) { return each_us[static_cast<std::size_t>(q * static_cast<double>(each_us.size() - 1))]; };
    std::printf("%8d runs (%s): %8.3f s in all, %7.1f us per run (%.0f/s), p50 %.0f us, p99 %.0f us; the last 1,000 "
                "(backlog %d): %7.1f us per run\n",
                n, pg ? "PostgreSQL" : "SQLite", all_s, 1e6 * all_s / n, n / all_s, pct(0.5), pct(0.99), n - 1000,
                1e6 * tail_s / 1000);
    std::printf("%8d runs: per run %.0f bytes written in %.1f write calls, %.0f us CPU of the submitting thread; "
                "the last 1,000: %.0f bytes in %.1f calls, %.0f us CPU; slowest submission %.1f ms\n",
                n, (w1.bytes - w0.bytes) / n, (w1.calls - w0.calls) / n, (cpu1 - cpu0) / n,
                (w1.bytes - wtail0.bytes) / 1000, (w1.calls - wtail0.calls) / 1000, (cpu1 - cputail0) / 1000,
                each_us.back() / 1000);
    std::fflush(stdout);
    svc->reset();
    if (pg) (void)pg_command(conninfo, "DROP DATABASE " + tag + " WITH (FORCE)");
    else std::filesystem::remove_all(dir);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string parent = argc > 1 ? argv[1] : "/dev/shm";
    std::vector<int> sizes;
    for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {1000, 20000, 100000};
    for (int n : sizes)
        if (n < 1000 || run_one(parent, n) != 0) return 1;
    return 0;
}
