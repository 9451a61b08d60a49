#include "astraeus/service/pending_index.hpp"

#include <algorithm>
#include <cassert>
#include <limits>

namespace astraeus::service {

void PendingIndex::add_tenant() {
    by_tenant_.emplace_back();
    starving_of_.emplace_back();
    gangs_.emplace_back();
    fresh_of_.push_back(0);
}

void PendingIndex::add_job(int u, int gpus, Seconds submit_s) {
    tenant_.push_back(u);
    gpus_.push_back(gpus);
    submit_.push_back(submit_s);
    wait_begin_.push_back(0);
    seq_.push_back(0);
    pending_.push_back(0);
    starving_.push_back(0);
    fresh_.push_back(0);
}

template <class Before>
void PendingIndex::erase_sorted(std::vector<int>& v, int j, Before before) {
    auto it = std::lower_bound(v.begin(), v.end(), j, before);
    assert(it != v.end() && *it == j);
    v.erase(it);
}

void PendingIndex::join(int j, Seconds wait_begin_s, bool fresh) {
    const int u = tenant_[j];
    pending_[j] = 1;
    seq_[j] = ++next_seq_;
    wait_begin_[j] = wait_begin_s;
    all_.push_back(j);
    by_tenant_[u].push_back(j);
    // Runs mostly begin to wait in time order: at the end, in O(1) (else O(log n)).
    waiting_.emplace_hint(waiting_.end(), wait_begin_s, j);
    ++gangs_[u][gpus_[j]];
    fresh_[j] = fresh ? 1 : 0;
    fresh_of_[u] += fresh_[j];
}

bool PendingIndex::detach(int j) {
    const int u = tenant_[j];
    const bool was_starving = starving_[j] != 0;
    if (!was_starving) waiting_.erase({wait_begin_[j], j});
    starving_[j] = 0;
    auto g = gangs_[u].find(gpus_[j]);
    if (--g->second == 0) gangs_[u].erase(g);
    fresh_of_[u] -= fresh_[j];
    fresh_[j] = 0;
    pending_[j] = 0;
    return was_starving;
}

void PendingIndex::leave(int j) {
    const int u = tenant_[j];
    auto by_join = [this](int a, int b) { return join_order(a, b); };
    erase_sorted(all_, j, by_join);
    erase_sorted(by_tenant_[u], j, by_join);
    // The starving list's order needs the job's keys, still in place after detach().
    if (detach(j))
        erase_sorted(starving_of_[u], j, [this](int a, int b) { return starving_order(a, b); });
}

void PendingIndex::leave_all(std::span<const int> js) {
    if (js.size() < 4) {  // a few erases from the middle cost less than a pass over the lists
        for (int j : js) leave(j);
        return;
    }
    std::vector<char> touched(by_tenant_.size(), 0);
    for (int j : js) {
        detach(j);
        touched[tenant_[j]] = 1;
    }
    auto gone = [this](int j) { return pending_[j] == 0; };
    std::erase_if(all_, gone);
    for (std::size_t u = 0; u < touched.size(); ++u) {
        if (!touched[u]) continue;
        std::erase_if(by_tenant_[u], gone);
        std::erase_if(starving_of_[u], [this](int j) { return starving_[j] == 0; });
    }
}

void PendingIndex::set_fresh(int j, bool fresh) {
    if (!pending_[j]) return;
    fresh_of_[tenant_[j]] += (fresh ? 1 : 0) - fresh_[j];
    fresh_[j] = fresh ? 1 : 0;
}

void PendingIndex::promote(Seconds now, Seconds starvation_s) {
    const Seconds due = now - starvation_s;  // starving: began to wait at or before this
    if (promoted_ && now < promoted_at_) {
        // The clock went back: the runs no longer starving wait again.
        for (auto& list : starving_of_)
            std::erase_if(list, [&](int j) {
                if (wait_begin_[j] <= due) return false;
                starving_[j] = 0;
                waiting_.insert({wait_begin_[j], j});
                return true;
            });
    }
    promoted_ = true;
    promoted_at_ = now;
    // The newly starving runs, by tenant, each tenant's batch merged into its sorted list.
    batch_.clear();
    while (!waiting_.empty() && waiting_.begin()->first <= due) {
        const int j = waiting_.begin()->second;
        waiting_.erase(waiting_.begin());
        starving_[j] = 1;
        batch_.push_back(j);
    }
    if (batch_.empty()) return;
    auto before = [this](int a, int b) { return starving_order(a, b); };
    std::sort(batch_.begin(), batch_.end(), [&](int a, int b) {
        return tenant_[a] != tenant_[b] ? tenant_[a] < tenant_[b] : before(a, b);
    });
    for (auto from = batch_.begin(); from != batch_.end();) {
        const int u = tenant_[*from];
        auto to = std::find_if(from, batch_.end(), [&](int j) { return tenant_[j] != u; });
        std::vector<int>& list = starving_of_[u];
        const auto old = static_cast<std::ptrdiff_t>(list.size());
        list.insert(list.end(), from, to);
        std::inplace_merge(list.begin(), list.begin() + old, list.end(), before);
        from = to;
    }
}

int PendingIndex::min_gpus(std::size_t u) const {
    return gangs_[u].empty() ? std::numeric_limits<int>::max() : gangs_[u].begin()->first;
}

std::optional<Seconds> PendingIndex::first_wait_after(Seconds after) const {
    auto it = waiting_.upper_bound({after, std::numeric_limits<int>::max()});
    if (it == waiting_.end()) return std::nullopt;
    return it->first;
}

}  // namespace astraeus::service
