// Benchmarks of goodput accounting in the simulator (not tests): the whole Philly workload on
// the Philly inventory (the main job's step 2) without goodput, with goodput and the lifecycle
// models off (--lifecycle none: the count alone), and calibrated (the count and every model).
// Goal: with goodput within 2x of the run without it. Results and commands: docs/performance.md.
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DASTRAEUS_BENCH=ON
//   cmake --build build/bench --target astraeus_bench_goodput && ./build/bench/bench/astraeus_bench_goodput
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>

#include "astraeus/config/cluster_config.hpp"
#include "astraeus/config/tenant_config.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/sim/engine.hpp"
#include "bench_data.hpp"
#include "astraeus/sim/goodput_recorder.hpp"
#include "astraeus/trace/read_trace.hpp"
#include "astraeus/trace/tenant_assign.hpp"

namespace astraeus {
namespace {

using bench::must;
using bench::philly;

void run_full(benchmark::State& state, std::optional<LifecycleConfig> lc) {
    SimConfig c;
    c.cluster = must(resolve_cluster("philly"));
    c.cluster_name = "philly";
    c.options.lease_s = 1800;
    c.options.starvation_s = 4 * 3600;
    c.goodput = std::move(lc);
    std::size_t rows = 0;
    for (auto _ : state) {
        auto r = simulate(philly(), c);
        if (!r) {
            state.SkipWithError(r.error().message.c_str());
            return;
        }
        if (r->goodput) {
            // The report too: the table by workspace over the whole run.
            auto table = goodput_text(*r->goodput, goodput::By::Workspace, 0);
            benchmark::DoNotOptimize(table);
            rows = r->goodput->ledger.row_count();
        }
        benchmark::DoNotOptimize(r);
    }
    state.counters["jobs"] = static_cast<double>(philly().jobs.size());
    state.counters["ledger_rows"] = static_cast<double>(rows);
}

void BM_PhillyFullGoodputOff(benchmark::State& state) { run_full(state, std::nullopt); }
BENCHMARK(BM_PhillyFullGoodputOff)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_PhillyFullGoodputNone(benchmark::State& state) {
    run_full(state, LifecycleConfig::none());
}
BENCHMARK(BM_PhillyFullGoodputNone)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_PhillyFullGoodputCalibrated(benchmark::State& state) {
    run_full(state, LifecycleConfig{});
}
BENCHMARK(BM_PhillyFullGoodputCalibrated)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace astraeus

BENCHMARK_MAIN();
