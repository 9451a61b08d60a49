// Tenant-level Long-Term GPU-time Fairness ledger (ASTRAEA, Ye et al., IEEE TPDS 2022;
// spec/astraea.md section 2). GPU-seconds accrue into the current bucket (entitled W = Q_u * dt,
// demand, utilized U, deserved D = min(demand, W)); long-term values are sums over the last
// `window` closed buckets. Integers throughout. Thread safety: not thread-safe.
#pragma once
#include <vector>

#include "astraeus/base/time.hpp"

namespace astraeus {

struct TenantServiceSums {
    GpuSeconds entitled = 0;  ///< W_u
    GpuSeconds demand = 0;
    GpuSeconds utilized = 0;  ///< U_u
    GpuSeconds deserved = 0;  ///< D_u
};

class TenantLedger {
public:
    explicit TenantLedger(int window_buckets = 24);
    /// Adds dt_s seconds at the given rates (GPUs): W += quota*dt, demand += demand*dt,
    /// U += used*dt, D += min(demand, quota)*dt.
    /// (Inline: the simulator calls it for every tenant at every instant.)
    void accrue(int quota_gpus, int demand_gpus, int used_gpus, Seconds dt_s) {
        current_.entitled += GpuSeconds{quota_gpus} * dt_s;
        current_.demand += GpuSeconds{demand_gpus} * dt_s;
        current_.utilized += GpuSeconds{used_gpus} * dt_s;
        current_.deserved += GpuSeconds{demand_gpus < quota_gpus ? demand_gpus : quota_gpus} * dt_s;
    }
    /// Closes the current bucket (pushes it into the window) and starts an empty one.
    void close_bucket();
    /// Sums over the last `window` closed buckets, plus `current_fraction` (0..1) of the
    /// current bucket and (1 - current_fraction) of the oldest bucket in the window when the
    /// window is full (pro rata sliding window; 0 gives the compat "closed buckets only").
    TenantServiceSums window(double current_fraction = 0.0) const;
    const TenantServiceSums& current() const { return current_; }
    /// Sums since the ledger began (closed buckets and the current one): the tenant's service
    /// over a whole run.
    TenantServiceSums lifetime() const;
    /// The closed buckets still in the window, oldest first (at most `window` of them): the
    /// window's history, e.g. for the fairness page.
    std::vector<TenantServiceSums> closed_buckets() const;

    /// R_u = U / W (1 when W = 0): the scheduling index of phase 1.
    static double scheduling_index(const TenantServiceSums& s);
    /// F_u = U / D (1 when D = 0): the reported tenant fairness.
    static double fairness(const TenantServiceSums& s);

private:
    std::vector<TenantServiceSums> ring_;  ///< closed buckets, ring of size window_buckets
    std::size_t next_ = 0;                 ///< ring slot the next closed bucket goes to
    std::size_t closed_ = 0;               ///< buckets closed so far
    TenantServiceSums sums_;               ///< sum over the ring
    TenantServiceSums current_;
    TenantServiceSums closed_total_;       ///< every bucket closed so far
};

}  // namespace astraeus
