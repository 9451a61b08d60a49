#include <algorithm>
#include <map>

#include "astraeus/store/store.hpp"

namespace astraeus::store {

void merge_batch(Batch& into, Batch&& more) {
    std::map<Id, std::size_t> at;
    for (std::size_t i = 0; i < into.runs.size(); ++i) at[into.runs[i].id] = i;
    for (RunRec& r : more.runs) {
        auto it = at.find(r.id);
        if (it != at.end()) {
            into.runs[it->second] = std::move(r);
        } else {
            at[r.id] = into.runs.size();
            into.runs.push_back(std::move(r));
        }
    }
    for (GoodputRowRec& g : more.goodput) into.goodput.push_back(g);
    for (auto& [k, v] : more.meta) {
        auto it = std::find_if(into.meta.begin(), into.meta.end(), [&](const auto& m) { return m.first == k; });
        if (it != into.meta.end()) it->second = v;
        else into.meta.emplace_back(k, v);
    }
    if (more.alerts) into.alerts = std::move(more.alerts);
    if (more.prune_before_hour)
        into.prune_before_hour = std::max(into.prune_before_hour.value_or(*more.prune_before_hour), *more.prune_before_hour);
    for (auto& m : more.machine_up) into.machine_up.push_back(m);
    for (auto& m : more.machine_drained) into.machine_drained.push_back(m);
    // Heartbeats: only the last of each machine matters.
    for (auto& [id, t] : more.machine_heartbeat) {
        auto it = std::find_if(into.machine_heartbeat.begin(), into.machine_heartbeat.end(),
                               [&](const auto& h) { return h.first == id; });
        if (it != into.machine_heartbeat.end()) it->second = t;
        else into.machine_heartbeat.emplace_back(id, t);
    }
    for (IdempotencyRec& k : more.idempotency) into.idempotency.push_back(std::move(k));
    if (more.prune_idempotency_before)
        into.prune_idempotency_before =
            std::max(into.prune_idempotency_before.value_or(*more.prune_idempotency_before), *more.prune_idempotency_before);
}

}  // namespace astraeus::store
