#include "astraeus/trace/tenant_assign.hpp"

#include "astraeus/base/rng.hpp"
#include "astraeus/trace/tenants.hpp"

namespace astraeus {

std::size_t gpu_bucket(int gpus) {
    std::size_t b = 0;
    while (b + 1 < kGpuBuckets && gpus >= kBucketMinGpus[b + 1]) ++b;
    return b;
}

std::string gpu_bucket_label(std::size_t bucket) {
    const int lo = kBucketMinGpus[bucket];
    if (bucket + 1 == kGpuBuckets) return std::to_string(lo) + "+";
    const int hi = kBucketMinGpus[bucket + 1] - 1;
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

std::int64_t TenantMix::bucket_total(std::size_t bucket) const {
    std::int64_t t = 0;
    for (const auto c : counts[bucket]) t += c;
    return t;
}

std::int64_t TenantMix::total() const {
    std::int64_t t = 0;
    for (const auto c : overall) t += c;
    return t;
}

double TenantMix::probability(std::size_t bucket, std::size_t tenant) const {
    const std::int64_t bt = bucket_total(bucket);
    if (bt > 0) return static_cast<double>(counts[bucket][tenant]) / static_cast<double>(bt);
    const std::int64_t t = total();
    return t > 0 ? static_cast<double>(overall[tenant]) / static_cast<double>(t) : 0.0;
}

TenantMix mix_from_workload(const Workload& w) {
    TenantMix mix;
    std::vector<int> index(w.tenants.size(), -1);  // workload tenant -> mix tenant
    for (const Job& j : w.jobs) {
        if (j.tenant < 0 || j.tenant >= static_cast<int>(w.tenants.size())) continue;
        int& m = index[static_cast<std::size_t>(j.tenant)];
        if (m < 0) {
            m = static_cast<int>(mix.tenants.size());
            mix.tenants.push_back(w.tenants[static_cast<std::size_t>(j.tenant)].name);
            mix.overall.push_back(0);
            for (auto& c : mix.counts) c.push_back(0);
        }
        ++mix.counts[gpu_bucket(j.gpus)][static_cast<std::size_t>(m)];
        ++mix.overall[static_cast<std::size_t>(m)];
    }
    return mix;
}

Result<Workload> assign_tenants(Workload w, const TenantMix& mix, std::uint64_t seed) {
    if (mix.total() <= 0)
        return fail("tenant mix is empty: the source trace has no job with a tenant");
    Rng rng(seed);
    w.tenants.clear();
    w.share_order.clear();
    std::vector<int> index(mix.tenants.size(), -1);  // mix tenant -> result tenant
    for (Job& j : w.jobs) {
        const std::size_t b = gpu_bucket(j.gpus);
        const bool own = mix.bucket_total(b) > 0;
        const auto& counts = own ? mix.counts[b] : mix.overall;
        std::uint64_t r =
            rng.below(static_cast<std::uint64_t>(own ? mix.bucket_total(b) : mix.total()));
        std::size_t m = 0;
        while (r >= static_cast<std::uint64_t>(counts[m]))
            r -= static_cast<std::uint64_t>(counts[m++]);
        if (index[m] < 0) index[m] = intern_tenant(w, mix.tenants[m]);
        j.tenant = index[m];
    }
    return w;
}

}  // namespace astraeus
