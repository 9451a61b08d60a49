// Submitting runs to the live service's core (issue 18): Service::submit, the code behind
// POST /v1/runs after the HTTP layer (parse, workspace and pool checks, per-workspace limits,
// the run's index entries, the goodput count's workers, the store transaction with
// synchronous=FULL), on the simulated executor with a one-machine pool so that every run but
// the first waits (the backlog grows by one per submission).
// Prints, for each backlog size N: the time of all N submissions and of the last 1,000 of them
// (submitted while N - 1,000 runs were pending), per run.
// Usage: astraeus_bench_service_submit [DATA_PARENT_DIR (default /dev/shm)] [N...]
//   (default N: 1000 20000 100000; the store goes to a fresh folder under DATA_PARENT_DIR).
// docs/performance.md, "Submitting with a large backlog".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>
#include <string>
#include <vector>

#include "astraeus/service/service.hpp"
#include "astraeus/service/sim_executor.hpp"
#include "astraeus/service/token.hpp"
#include "astraeus/store/store.hpp"

namespace {

using namespace astraeus;
using Clock = std::chrono::steady_clock;

int run_one(const std::string& parent, int n) {
    const std::string dir = parent + "/astraeus-bench-submit-" + std::to_string(::getpid()) + "-" + std::to_string(n);
    std::filesystem::remove_all(dir);
    auto st = store::open_sqlite(dir);
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
    const auto t0 = Clock::now();
    auto tail0 = t0;
    for (int i = 0; i < n; ++i) {
        if (i == n - 1000) tail0 = Clock::now();
        const std::string body = R"({"name":"r)" + std::to_string(i) +
                                 R"(","workers":1,"gpus_per_worker":8,"sim_duration_s":3600})";
        auto r = (*svc)->submit(*caller, body);
        if (!r) return std::fprintf(stderr, "submit %d: %d %s\n", i, r.error().status, r.error().message.c_str()), 1;
    }
    const auto t1 = Clock::now();
    const double all_s = std::chrono::duration<double>(t1 - t0).count();
    const double tail_s = std::chrono::duration<double>(t1 - tail0).count();
    std::printf("%8d runs: %8.3f s in all, %7.1f us per run; the last 1,000 (backlog %d): %7.1f us per run\n", n,
                all_s, 1e6 * all_s / n, n - 1000, 1e6 * tail_s / 1000);
    std::fflush(stdout);
    svc->reset();
    std::filesystem::remove_all(dir);
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
