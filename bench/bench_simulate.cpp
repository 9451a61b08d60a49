// Benchmarks of the simulator (not tests). Results and commands: docs/performance.md.
//   cmake --preset release && cmake --build --preset release
//   ./build/release/bench/astraeus_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include "astraeus/config/tenant_config.hpp"
#include "astraeus/sim/engine.hpp"
#include "astraeus/trace/reference_csv.hpp"

namespace astraeus {
namespace {

const Workload& fake_job() {
    static const Workload w = [] {
        const std::string dir = ASTRAEUS_DATA_DIR "/astraea-artifact/";
        auto tenants = read_tenant_config(dir + "share.csv", dir + "name.lst");
        auto trace = read_reference_jobs(dir + "fake_job.csv");
        return *apply_tenants(std::move(*trace), *tenants, UnknownTenant::Drop, "fake_job.csv");
    }();
    return w;
}

SimConfig philly_experiment(Mode mode) {
    SimConfig c;
    c.cluster = ClusterSpec::uniform(40, 8);
    c.options.mode = mode;
    c.options.lease_s = 900;
    c.options.starvation_s = 21600;
    c.options.delay_s = 300;
    if (mode == Mode::Compat) c.options.checkpoint_s = c.options.restore_s = 0;
    return c;
}

// compat mode on the reference simulator's own input (it takes about 1.8 s in CPython).
void BM_CompatFakeJob(benchmark::State& state) {
    const SimConfig c = philly_experiment(Mode::Compat);
    for (auto _ : state) {
        auto r = simulate(fake_job(), c);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(BM_CompatFakeJob)->Unit(benchmark::kMillisecond);

void BM_DefaultFakeJob(benchmark::State& state) {
    const SimConfig c = philly_experiment(Mode::Default);
    for (auto _ : state) {
        auto r = simulate(fake_job(), c);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(BM_DefaultFakeJob)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace astraeus

BENCHMARK_MAIN();
