#include "astraeus/accounting/tenant_ledger.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace astraeus {
namespace {

void add(TenantServiceSums& a, const TenantServiceSums& b, GpuSeconds sign = 1) {
    a.entitled += sign * b.entitled;
    a.demand += sign * b.demand;
    a.utilized += sign * b.utilized;
    a.deserved += sign * b.deserved;
}

GpuSeconds scaled(GpuSeconds v, double f) {
    return static_cast<GpuSeconds>(std::llround(static_cast<double>(v) * f));
}

}  // namespace

TenantLedger::TenantLedger(int window_buckets)
    : ring_(static_cast<std::size_t>(std::max(window_buckets, 1))) {
    assert(window_buckets >= 1);
}

void TenantLedger::close_bucket() {
    if (closed_ >= ring_.size()) add(sums_, ring_[next_], -1);
    ring_[next_] = current_;
    add(sums_, current_);
    add(closed_total_, current_);
    next_ = (next_ + 1) % ring_.size();
    ++closed_;
    current_ = {};
}

TenantServiceSums TenantLedger::window(double current_fraction) const {
    TenantServiceSums s = sums_;
    if (current_fraction <= 0.0) return s;
    add(s, current_);
    if (closed_ >= ring_.size()) {
        const TenantServiceSums& oldest = ring_[next_];
        const double keep = 1.0 - current_fraction;
        s.entitled -= oldest.entitled - scaled(oldest.entitled, keep);
        s.demand -= oldest.demand - scaled(oldest.demand, keep);
        s.utilized -= oldest.utilized - scaled(oldest.utilized, keep);
        s.deserved -= oldest.deserved - scaled(oldest.deserved, keep);
    }
    return s;
}

std::vector<TenantServiceSums> TenantLedger::closed_buckets() const {
    std::vector<TenantServiceSums> out;
    const std::size_t n = std::min(closed_, ring_.size());
    // The oldest kept bucket is at next_ when the ring is full, at 0 before.
    const std::size_t first = closed_ >= ring_.size() ? next_ : 0;
    for (std::size_t k = 0; k < n; ++k) out.push_back(ring_[(first + k) % ring_.size()]);
    return out;
}

TenantServiceSums TenantLedger::lifetime() const {
    TenantServiceSums s = closed_total_;
    add(s, current_);
    return s;
}

double TenantLedger::scheduling_index(const TenantServiceSums& s) {
    return s.entitled == 0 ? 1.0
                           : static_cast<double>(s.utilized) / static_cast<double>(s.entitled);
}

double TenantLedger::fairness(const TenantServiceSums& s) {
    return s.deserved == 0 ? 1.0
                           : static_cast<double>(s.utilized) / static_cast<double>(s.deserved);
}

}  // namespace astraeus
