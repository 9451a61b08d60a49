// The service side of a scheduling round (service/round_adapter.hpp, the code `astraeus serve`
// runs for every submission, stop, lease end and executor event), sized by parameters:
//   BM_ServiceRound/gpus/runs/steady/fifo: one pool of gpus / 8 machines x 8 GPUs, four
//     workspaces, `runs` runs of 1-32 GPUs submitted at once. Fresh (steady = 0): the events
//     begin right after the submissions. Steady (steady = 1): the clock first moves 4 h in lease
//     steps (leases end, rounds run), so that the backlog has waited past the starvation
//     threshold (T_starve = 4 h) and every run waiting since the start is starving. Each
//     iteration is then one event as the service sees it: 10 s pass, leases that ended are
//     ended, the oldest running run finishes and a new one arrives, and a round runs and is applied.
//   BM_ServiceSubmit/gpus/runs: the time to submit `runs` pending runs to an empty pool (no
//     round in between, as a burst of POST /runs between two rounds), per run.
// Sizes: --size=GPUS/RUNS (repeatable; default 1000/1000, 10000/20000, 100000/100000),
// --events=N (iterations of BM_ServiceRound, default 200), then Google Benchmark's own flags.
// docs/performance.md, "Service under load".
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "astraeus/policies/registry.hpp"
#include "astraeus/service/round_adapter.hpp"

namespace {

using astraeus::Seconds;
using astraeus::service::Decision;
using astraeus::service::RoundAdapter;

constexpr int kGangs[] = {1, 2, 4, 8, 16, 32, 8, 16};  // workers x GPUs of the load client's shapes
constexpr Seconds kStart = 1'800'000'000;

std::unique_ptr<RoundAdapter> make_pool(int gpus, const std::string& policy) {
    auto opt = astraeus::policy_options(policy, astraeus::AstraeaOptions{});
    if (!opt) return nullptr;
    auto made = RoundAdapter::make(astraeus::ClusterSpec::uniform(gpus / 8, 8), *opt, "consolidate");
    if (!made) return nullptr;
    (*made)->set_tenants({{"ml", 1.0}, {"cv", 1.0}, {"nlp", 2.0}, {"rl", 1.0}});
    return std::move(*made);
}

/// The bench's view of the pool: runs submitted, running (by job index) and lease ends.
struct Driver {
    explicit Driver(RoundAdapter& a) : ad(a) {}
    RoundAdapter& ad;
    std::mt19937_64 rng{1};
    Seconds t = kStart;
    int submitted = 0;
    std::set<int> running;
    std::vector<Seconds> lease_end;              ///< per job (valid while running)
    std::set<std::pair<Seconds, int>> ends;      ///< (lease end, job) of the running runs
    std::uint32_t digest = 2166136261u;          ///< FNV-1a of every decision, in order

    void fold(std::int64_t v) {
        for (int b = 0; b < 8; ++b) digest = (digest ^ static_cast<std::uint8_t>(v >> (8 * b))) * 16777619u;
    }

    void submit() {
        auto j = ad.submit(submitted % 4, kGangs[rng() % std::size(kGangs)], t,
                           600 + static_cast<Seconds>(rng() % 6600));
        ++submitted;
        if (j && static_cast<std::size_t>(*j) >= lease_end.size()) lease_end.resize(*j + 1, 0);
    }
    void stopped(int j) {
        if (running.erase(j) != 0) ends.erase({lease_end[j], j});
    }
    std::size_t apply(const std::vector<Decision>& ds) {
        for (const Decision& d : ds) {
            fold(static_cast<int>(d.kind));
            fold(d.job);
            fold(d.lease_end_s);
            fold(d.renewal);
            for (const auto& part : d.placement.parts) {
                fold(part.machine);
                fold(part.gpus);
            }
            stopped(d.job);
            if (d.kind != Decision::Kind::Start) continue;
            running.insert(d.job);
            lease_end[d.job] = d.lease_end_s;
            ends.insert({d.lease_end_s, d.job});
        }
        return ds.size();
    }
    /// Moves the clock to t, ends the leases due and runs a round; the decisions applied.
    std::size_t step(Seconds to, bool finish_one) {
        t = to;
        ad.advance(t);
        while (!ends.empty() && ends.begin()->first <= t) {
            const int j = ends.begin()->second;
            stopped(j);
            ad.lease_end(j, t);
        }
        if (finish_one && !running.empty()) {
            const int j = *running.begin();
            stopped(j);
            ad.remove(j, t);
            submit();
        }
        return apply(ad.round(t));
    }
};

void BM_ServiceRound(benchmark::State& state) {
    const int gpus = static_cast<int>(state.range(0));
    const int runs = static_cast<int>(state.range(1));
    const bool steady = state.range(2) != 0;
    const std::string policy = state.range(3) == 0 ? "astraea" : "fifo";
    auto pool = make_pool(gpus, policy);
    if (!pool) {
        state.SkipWithError("no pool");
        return;
    }
    Driver d(*pool);
    d.ad.advance(d.t);
    for (int i = 0; i < runs; ++i) d.submit();
    d.apply(d.ad.round(d.t));
    if (steady)  // 8 leases of 30 min: every run waiting since the start has waited T_starve
        for (int k = 1; k <= 8; ++k) d.step(kStart + k * 1800, false);
    std::size_t rounds = 0, decisions = 0;
    for (auto _ : state) {
        decisions += d.step(d.t + 10, true);
        ++rounds;
    }
    state.counters["decisions_per_round"] =
        rounds ? static_cast<double>(decisions) / static_cast<double>(rounds) : 0.0;
    state.counters["running"] = static_cast<double>(d.running.size());
    state.counters["free_gpus"] = d.ad.free_gpus();
    // The same events give the same decisions: equal digests before and after a change.
    state.counters["digest"] = static_cast<double>(d.digest);
}

void BM_ServiceSubmit(benchmark::State& state) {
    const int gpus = static_cast<int>(state.range(0));
    const int runs = static_cast<int>(state.range(1));
    for (auto _ : state) {
        state.PauseTiming();
        auto pool = make_pool(gpus, "astraea");
        Driver d(*pool);
        d.ad.advance(d.t);
        state.ResumeTiming();
        for (int i = 0; i < runs; ++i) d.submit();
        state.PauseTiming();
        pool.reset();
        state.ResumeTiming();
    }
    state.counters["per_run"] = benchmark::Counter(
        runs, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::pair<int, int>> sizes;
    int events = 200;
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
        int g = 0, r = 0;
        if (std::sscanf(argv[i], "--size=%d/%d", &g, &r) == 2 && g >= 8 && r > 0)
            sizes.push_back({g, r});
        else if (std::strncmp(argv[i], "--events=", 9) == 0)
            events = std::max(1, std::atoi(argv[i] + 9));
        else
            rest.push_back(argv[i]);
    }
    if (sizes.empty()) sizes = {{1000, 1000}, {10000, 20000}, {100000, 100000}};
    for (const auto& [g, r] : sizes) {
        for (int fifo : {0, 1})
            for (int steady : {0, 1})
                benchmark::RegisterBenchmark("BM_ServiceRound", BM_ServiceRound)
                    ->Args({g, r, steady, fifo})
                    ->ArgNames({"gpus", "runs", "steady", "fifo"})
                    ->Iterations(events)
                    ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark("BM_ServiceSubmit", BM_ServiceSubmit)
            ->Args({g, r})
            ->ArgNames({"gpus", "runs"})
            ->Iterations(std::max(1, 100000 / r))
            ->Unit(benchmark::kMillisecond);
    }
    int n = static_cast<int>(rest.size());
    benchmark::Initialize(&n, rest.data());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
