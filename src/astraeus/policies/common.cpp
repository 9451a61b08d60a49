#include "astraeus/policies/common.hpp"

namespace astraeus::policy_detail {

bool try_start(const RoundInput& in, ClusterState& cluster, const Placer& placer, int j,
               std::vector<Action>& actions) {
    if (cluster.free_gpus() < in.jobs[j].gpus) return false;
    auto p = place_job(in, cluster, placer, j);
    if (!p) return false;
    actions.push_back({Action::Kind::Start, j, std::move(*p)});
    return true;
}

int youngest_unmarked(const RoundInput& in, std::span<const int> running,
                      const std::vector<char>& mark) {
    int victim = -1;
    for (int r : running) {
        if (mark[r]) continue;
        if (victim < 0 || in.lease_start_s[r] > in.lease_start_s[victim] ||
            (in.lease_start_s[r] == in.lease_start_s[victim] && r > victim))
            victim = r;
    }
    return victim;
}

namespace {

/// std heap order for a min-heap: "a after b".
bool later(const std::pair<RankKey, std::uint64_t>& a, const std::pair<RankKey, std::uint64_t>& b) {
    return b.first < a.first;
}

}  // namespace

void PendingIndex::push(std::size_t group, int gpus, RankKey key, std::uint64_t seq) {
    auto& buckets = groups_[group];
    auto it = std::find_if(buckets.begin(), buckets.end(), [&](auto& b) { return b.gpus == gpus; });
    if (it == buckets.end()) {
        // Keep buckets by gang size, so that walks meet small gangs first.
        it = std::find_if(buckets.begin(), buckets.end(), [&](auto& b) { return b.gpus > gpus; });
        it = buckets.insert(it, Bucket{gpus, {}});
    }
    it->heap.push_back({key, seq});
    std::push_heap(it->heap.begin(), it->heap.end(), later);
    ++entries_;
}

int PendingIndex::top(const RoundInput& in, std::size_t group, std::size_t b) {
    auto& heap = groups_[group][b].heap;
    while (!heap.empty()) {
        const int j = heap.front().first.job;
        if (in.runs[j].status == RunStatus::Pending && in.pend_seq[j] == heap.front().second)
            return j;
        pop(group, b);
    }
    return -1;
}

void PendingIndex::pop(std::size_t group, std::size_t b) {
    auto& heap = groups_[group][b].heap;
    std::pop_heap(heap.begin(), heap.end(), later);
    heap.pop_back();
    --entries_;
}

void start_in_key_order(const RoundInput& in, ClusterState& cluster, const Placer& placer,
                        PendingIndex& index, std::size_t group, std::vector<char>& failed,
                        std::vector<Action>& actions) {
    auto& buckets = index.buckets(group);
    failed.assign(buckets.size(), 0);
    while (cluster.free_gpus() > 0) {
        std::size_t best = buckets.size();
        for (std::size_t b = 0; b < buckets.size(); ++b) {
            if (failed[b]) continue;
            if (buckets[b].gpus > cluster.free_gpus()) break;  // buckets by gang size
            if (index.top(in, group, b) < 0) {
                failed[b] = 1;
                continue;
            }
            if (best == buckets.size() || index.top_key(group, b) < index.top_key(group, best))
                best = b;
        }
        if (best == buckets.size()) return;
        if (try_start(in, cluster, placer, index.top_key(group, best).job, actions)) {
            index.pop(group, best);
        } else {
            failed[best] = 1;
        }
    }
}

}  // namespace astraeus::policy_detail
