// Benchmarks of the simulator (not tests). Results and commands: docs/performance.md.
//   cmake --preset release && cmake --build --preset release
//   ./build/release/bench/astraeus_bench
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <vector>

#include "astraeus/config/cluster_config.hpp"
#include "astraeus/config/tenant_config.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/sim/engine.hpp"
#include "bench_data.hpp"
#include "astraeus/trace/read_trace.hpp"
#include "astraeus/trace/reference_csv.hpp"
#include "astraeus/trace/slice.hpp"
#include "astraeus/trace/tenant_assign.hpp"

namespace astraeus {
namespace {

using bench::kData;
using bench::must;
using bench::philly;

const Workload& fake_job() {
    static const Workload w = [] {
        const std::string dir = kData + "/astraea-artifact/";
        auto tenants = must(read_tenant_config(dir + "share.csv", dir + "name.lst"));
        auto trace = must(read_reference_jobs(dir + "fake_job.csv"));
        return must(apply_tenants(std::move(trace), tenants, UnknownTenant::Drop, "fake_job"));
    }();
    return w;
}

/// The main job's workload: all 111,549 Philly jobs, VCs drawn (seed 1) from the DRE sample's
Workload busiest(int days) {
    auto window = must(busiest_days(philly(), days));
    return slice_window(philly(), window.from_s, window.to_s);
}

SimConfig philly_experiment(Mode mode, ClusterSpec cluster) {
    SimConfig c;
    c.cluster = std::move(cluster);
    c.options.mode = mode;
    c.options.lease_s = 900;
    c.options.starvation_s = 21600;
    c.options.delay_s = 300;
    if (mode == Mode::Compat) c.options.checkpoint_s = c.options.restore_s = 0;
    return c;
}

void run(benchmark::State& state, const Workload& w, const SimConfig& c) {
    std::size_t rounds = 0;
    for (auto _ : state) {
        auto r = simulate(w, c);
        if (!r) state.SkipWithError(r.error().message.c_str());
        rounds = static_cast<std::size_t>(r->rounds);
        benchmark::DoNotOptimize(r);
    }
    state.counters["jobs"] = static_cast<double>(w.jobs.size());
    state.counters["rounds"] = static_cast<double>(rounds);
}

// compat mode on the reference simulator's own input (it takes about 1.8 s in CPython).
void BM_CompatFakeJob(benchmark::State& state) {
    run(state, fake_job(), philly_experiment(Mode::Compat, ClusterSpec::uniform(40, 8)));
}
BENCHMARK(BM_CompatFakeJob)->Unit(benchmark::kMillisecond);

void BM_DefaultFakeJob(benchmark::State& state) {
    run(state, fake_job(), philly_experiment(Mode::Default, ClusterSpec::uniform(40, 8)));
}
BENCHMARK(BM_DefaultFakeJob)->Unit(benchmark::kMillisecond);

// The main job's first part: the whole Philly workload, Philly inventory, default mode.
void BM_DefaultPhillyFull(benchmark::State& state) {
    SimConfig c = philly_experiment(Mode::Default, must(resolve_cluster("philly")));
    c.options.lease_s = 1800;
    c.options.starvation_s = 4 * 3600;
    run(state, philly(), c);
}
BENCHMARK(BM_DefaultPhillyFull)->Unit(benchmark::kMillisecond)->Iterations(3);

// compat mode on the busiest 2 days of Philly, 15 tenants, 1120 GPUs.
void BM_CompatPhillyBusiest2Days(benchmark::State& state) {
    static const Workload w = busiest(2);
    run(state, w, philly_experiment(Mode::Compat, ClusterSpec::uniform(140, 8)));
}
BENCHMARK(BM_CompatPhillyBusiest2Days)->Unit(benchmark::kMillisecond)->Iterations(1);

// The main job's second part: the busiest 14 days on 1120 GPUs, default mode.
void BM_DefaultPhillyBusiest14Days(benchmark::State& state) {
    static const Workload w = busiest(14);
    run(state, w, philly_experiment(Mode::Default, ClusterSpec::uniform(140, 8)));
}
BENCHMARK(BM_DefaultPhillyBusiest14Days)->Unit(benchmark::kMillisecond)->Iterations(1);

// The baselines (docs/policies.md) on the whole Philly workload, as BM_DefaultPhillyFull runs
// ASTRAEA: Philly inventory, 30-minute leases (themis: its own 300 s), 4-hour starvation.
SimConfig philly_full_config(const std::string& policy) {
    SimConfig c = philly_experiment(Mode::Default, must(resolve_cluster("philly")));
    c.options.lease_s = 1800;
    c.options.starvation_s = 4 * 3600;
    c.options = must(policy_options(policy, c.options));
    return c;
}

void BM_PolicyPhillyFull(benchmark::State& state, const std::string& policy) {
    run(state, philly(), philly_full_config(policy));
}
BENCHMARK_CAPTURE(BM_PolicyPhillyFull, fifo, std::string("fifo"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_PolicyPhillyFull, yarn_cs, std::string("yarn-cs"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_PolicyPhillyFull, yarn_cs_elastic, std::string("yarn-cs-elastic"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_PolicyPhillyFull, drf, std::string("drf"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_PolicyPhillyFull, tiresias, std::string("tiresias"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_PolicyPhillyFull, themis, std::string("themis"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_PolicyPhillyFull, gandiva_fair, std::string("gandiva-fair"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_PolicyPhillyFull, srtf, std::string("srtf"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);

// The goal: the eight policies of the comparison on the whole Philly workload within
// 10 s of wall time on a 2-core machine, two simulations at a time (as `astraeus compare` runs
// each policy on its own thread). Wall time (UseRealTime); the workload is loaded beforehand.
void BM_EightPoliciesPhillyFullTwoAtATime(benchmark::State& state) {
    const std::vector<std::string> policies = {"astraea", "fifo",   "yarn-cs",      "drf",
                                               "tiresias", "themis", "gandiva-fair", "srtf"};
    std::vector<SimConfig> configs;
    for (const auto& p : policies) configs.push_back(philly_full_config(p));
    const Workload& w = philly();
    for (auto _ : state) {
        std::atomic<std::size_t> next{0};
        std::atomic<bool> failed{false};
        auto worker = [&] {
            for (std::size_t i = next++; i < configs.size(); i = next++) {
                auto r = simulate(w, configs[i]);
                if (!r) failed = true;
                benchmark::DoNotOptimize(r);
            }
        };
        std::thread a(worker), b(worker);
        a.join();
        b.join();
        if (failed) state.SkipWithError("a simulation failed");
    }
    state.counters["policies"] = static_cast<double>(policies.size());
}
BENCHMARK(BM_EightPoliciesPhillyFullTwoAtATime)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace
}  // namespace astraeus

BENCHMARK_MAIN();
