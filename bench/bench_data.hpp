// Inputs shared by the benchmarks: the main job's Philly workload, and `must` for setup steps
// (a failed setup is a message and exit 1, never a benchmark of nothing).
#pragma once
#include <cstdlib>
#include <iostream>
#include <string>

#include "astraeus/config/tenant_config.hpp"
#include "astraeus/trace/read_trace.hpp"
#include "astraeus/trace/tenant_assign.hpp"
#include "astraeus/trace/tenants.hpp"

namespace astraeus::bench {

inline const std::string kData = ASTRAEUS_DATA_DIR;

template <class T>
T must(Result<T> r) {
    if (!r) {
        std::cerr << "bench setup: " << r.error().message << "\n";
        std::exit(1);
    }
    return std::move(*r);
}

/// The main job's workload: 111,549 Philly jobs, VCs drawn from the DRE sample's mix (seed 1),
/// the production share weights. Read once per process.
inline const Workload& philly() {
    static const Workload w = [] {
        auto arrivals = must(read_trace(kData + "/philly/philly_trace.csv.gz", "rfold-philly"));
        auto sample = must(read_trace(kData + "/philly/sampled_jobs.json.gz", "philly-joblog"));
        auto assigned = must(assign_tenants(std::move(arrivals), mix_from_workload(sample), 1));
        auto weights = must(
            read_tenant_config(kData + "/astraea-artifact/philly-share-production.csv", ""));
        return must(apply_tenants(std::move(assigned), weights, UnknownTenant::Error, "philly"));
    }();
    return w;
}

}  // namespace astraeus::bench
