// A follower replica's Service (docs/operations.md "Replicas"): open_snapshot, the state of a
// read-only store loaded as open() does but writing nothing (read_only_: load() adds, reconciles
// and resumes nothing, commit() writes nothing, catch_up() and minute_work() return at once,
// writes answer 503). Reloaded every follower_refresh_s by follower_snapshots.hpp.
#include <algorithm>

#include "astraeus/service/service.hpp"
#include "astraeus/service/snapshot_executor.hpp"

namespace astraeus::service {

Result<std::unique_ptr<Service>> Service::open_snapshot(ServiceConfig config, std::unique_ptr<store::Store> store,
                                                        bool agent_machines) {
    auto last = store->meta("last_event_s");
    if (!last) return std::unexpected(last.error());
    // The leader's clock, as open() sets it (never behind the stored one at time_scale > 1).
    const Seconds real = Clock::real_now();
    const Seconds base = config.time_scale == 1.0 ? real : std::max(real, last->value_or(0));
    const double scale = config.time_scale;
    std::unique_ptr<Service> s(new Service(std::move(config), std::move(store), std::make_unique<SnapshotExecutor>(),
                                           Clock(base, scale)));
    s->read_only_ = true;
    s->agent_machines_ = agent_machines;
    if (auto ok = s->load(); !ok) return std::unexpected(ok.error());
    return s;
}

}  // namespace astraeus::service
