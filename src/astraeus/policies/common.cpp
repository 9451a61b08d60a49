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

}  // namespace astraeus::policy_detail
