#include "astraeus/sim/job_lists.hpp"

#include <algorithm>
#include <cassert>

namespace astraeus::detail {

JobLists::JobLists(std::size_t lists, std::size_t jobs, bool tombstones)
    : lists_(lists), dead_(lists, 0), tombstones_(tombstones) {
    if (tombstones_) pos_.assign(jobs, 0);
}

void JobLists::push(std::size_t l, int j) {
    if (tombstones_) pos_[static_cast<std::size_t>(j)] = static_cast<std::uint32_t>(lists_[l].size());
    lists_[l].push_back(j);
}

void JobLists::remove(std::size_t l, int j) {
    std::vector<int>& v = lists_[l];
    if (!tombstones_) {
        auto it = std::find(v.begin(), v.end(), j);
        assert(it != v.end());
        v.erase(it);
        return;
    }
    const std::uint32_t p = pos_[static_cast<std::size_t>(j)];
    assert(p < v.size() && v[p] == j);
    if (p + 1 == v.size()) {
        v.pop_back();  // the newest entry: no tombstone needed
    } else {
        v[p] = kGone;
        ++dead_[l];
    }
    // Trailing tombstones go at once; mostly-gone lists are compacted (amortized O(1)).
    while (!v.empty() && v.back() == kGone) {
        v.pop_back();
        --dead_[l];
    }
    if (dead_[l] > 32 && 2 * dead_[l] > v.size()) compact(l);
}

const std::vector<int>& JobLists::live(std::size_t l) {
    if (dead_[l] > 0) compact(l);
    return lists_[l];
}

void JobLists::compact_all() {
    for (std::size_t l = 0; l < lists_.size(); ++l)
        if (dead_[l] > 0) compact(l);
}

void JobLists::compact(std::size_t l) {
    std::vector<int>& v = lists_[l];
    std::size_t out = 0;
    for (const int j : v) {
        if (j == kGone) continue;
        pos_[static_cast<std::size_t>(j)] = static_cast<std::uint32_t>(out);
        v[out++] = j;
    }
    v.resize(out);
    dead_[l] = 0;
}

}  // namespace astraeus::detail
