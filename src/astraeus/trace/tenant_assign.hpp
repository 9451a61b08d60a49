// Giving tenants (virtual clusters) to a trace that has none, such as the RFold Philly arrivals
// (111,549 real jobs, no VC): each job draws a VC from P(vc | GPU-count bucket), estimated from
// a trace that has VCs (the DRE sample of Philly's cluster_job_log, 5,910 jobs in 11 VCs).
// Method and caveats: docs/formats/tenant-assignment.md.
// Buckets by GPU count: 1, 2, 3-4, 5-8, 9-16, 17+. A bucket with no job in the source uses the
// overall mix (all source jobs); the DRE sample has no 1-GPU job, so 1-GPU jobs get the overall
// mix. Probabilities are job counts, not GPU-time. Draws use astraeus::Rng (SplitMix64) with
// exact integer arithmetic: the same seed gives the same assignment on every platform.
// Thread safety: pure functions.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"

namespace astraeus {

/// The GPU-count buckets: bucket b holds jobs with kBucketMinGpus[b] <= gpus <
/// kBucketMinGpus[b + 1] (the last bucket is open-ended).
inline constexpr std::array<int, 6> kBucketMinGpus{1, 2, 3, 5, 9, 17};
inline constexpr std::size_t kGpuBuckets = kBucketMinGpus.size();

/// Index of the bucket of a job with `gpus` GPUs (gpus < 1 counts as bucket 0).
std::size_t gpu_bucket(int gpus);
/// "1", "2", "3-4", "5-8", "9-16", "17+".
std::string gpu_bucket_label(std::size_t bucket);

/// Job counts per (bucket, tenant) of a source trace.
struct TenantMix {
    std::vector<std::string> tenants;                           ///< source tenant order
    std::array<std::vector<std::int64_t>, kGpuBuckets> counts;  ///< [bucket][tenant] jobs
    std::vector<std::int64_t> overall;                          ///< [tenant] jobs, all buckets

    std::int64_t bucket_total(std::size_t bucket) const;
    std::int64_t total() const;
    /// P(tenant | bucket) as used by assign_tenants (the overall mix for an empty bucket).
    double probability(std::size_t bucket, std::size_t tenant) const;
};

/// Counts the jobs of `w` per GPU bucket and tenant; jobs without a tenant are ignored; tenants
/// with no job are left out.
TenantMix mix_from_workload(const Workload& w);

/// Returns `w` with every job's tenant drawn from `mix` given its GPU bucket (seeded by
/// `seed`, one draw per job in job order). The result's tenants are the drawn VCs in
/// first-appearance order, weight 1 (any tenants `w` had are replaced). Error: an empty mix.
Result<Workload> assign_tenants(Workload w, const TenantMix& mix, std::uint64_t seed);

}  // namespace astraeus
