// The service's scheduling round (service/round_adapter.hpp, the code `astraeus serve` runs for
// every submission, stop, lease end and executor event) on the load benchmark's cluster: one
// pool of 125 machines x 8 GPUs (1,000 GPUs), four workspaces, 1,000 runs of 1-32 GPUs (about
// ten times the cluster). Each iteration is one event as the service sees it: 10 s pass, leases
// that ended are ended, a running run finishes and a new one arrives, then a round runs.
// docs/performance.md, "Service under load".
#include <benchmark/benchmark.h>

#include <map>
#include <random>

#include "astraeus/policies/registry.hpp"
#include "astraeus/service/round_adapter.hpp"

namespace {

using astraeus::Seconds;
using astraeus::service::Decision;
using astraeus::service::RoundAdapter;

void BM_ServiceRound(benchmark::State& state) {
    const int runs = static_cast<int>(state.range(0));
    const std::string policy = state.range(1) == 0 ? "astraea" : "fifo";
    auto opt = astraeus::policy_options(policy, astraeus::AstraeaOptions{});
    auto made = RoundAdapter::make(astraeus::ClusterSpec::uniform(125, 8), *opt, "consolidate");
    if (!made) {
        state.SkipWithError(made.error().message.c_str());
        return;
    }
    RoundAdapter& ad = **made;
    ad.set_tenants({{"ml", 1.0}, {"cv", 1.0}, {"nlp", 2.0}, {"rl", 1.0}});
    std::mt19937_64 rng(1);
    const int gangs[] = {1, 2, 4, 8, 16, 32, 8, 16};  // workers x GPUs of the load client's shapes
    std::vector<int> live;
    std::map<int, Seconds> lease_end;
    Seconds t = 1'800'000'000;
    ad.advance(t);
    auto submit = [&](int i) {
        auto j = ad.submit(i % 4, gangs[rng() % std::size(gangs)], t,
                           600 + static_cast<Seconds>(rng() % 6600));
        return j ? *j : -1;
    };
    auto apply = [&](const std::vector<Decision>& ds) {
        for (const Decision& d : ds)
            if (d.kind == Decision::Kind::Start) lease_end[d.job] = d.lease_end_s;
            else lease_end.erase(d.job);
    };
    for (int i = 0; i < runs; ++i) live.push_back(submit(i));
    apply(ad.round(t));
    int next = runs;
    std::size_t rounds = 0, decisions = 0;
    for (auto _ : state) {
        t += 10;
        ad.advance(t);
        for (auto it = lease_end.begin(); it != lease_end.end();) {
            if (it->second <= t && ad.is_running(it->first)) {
                ad.lease_end(it->first, t);
                it = lease_end.erase(it);
            } else {
                ++it;
            }
        }
        for (int& j : live)
            if (j >= 0 && ad.is_running(j)) {
                ad.remove(j, t);
                lease_end.erase(j);
                j = submit(next++);
                break;
            }
        const auto ds = ad.round(t);
        apply(ds);
        ++rounds;
        decisions += ds.size();
    }
    state.counters["decisions_per_round"] =
        rounds ? static_cast<double>(decisions) / static_cast<double>(rounds) : 0.0;
    state.counters["free_gpus"] = ad.free_gpus();
}
BENCHMARK(BM_ServiceRound)->Args({1000, 0})->Args({1000, 1})->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
