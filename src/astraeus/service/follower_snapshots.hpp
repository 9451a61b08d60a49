// A follower replica's reads (issue 23, docs/operations.md "Replicas"): the service's state
// loaded read-only from the database (Service::open_snapshot over a read-only connection:
// store/read_only_store.hpp, PostgreSQL's default_transaction_read_only), reloaded every
// follower_refresh_s in a thread and swapped atomically; requests read the snapshot current when
// they start, which lives as long as they hold it. A failed reload keeps the previous snapshot
// (its age grows) and is retried at the next period, the connection made again.
// Thread safety: current(), age_ms(), last_error() are thread-safe; start/stop from one thread.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "astraeus/base/error.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/store/read_only_store.hpp"

namespace astraeus::service {

class Service;

class FollowerSnapshots {
public:
    /// `open_store`: opens the read-only connection (at the first load, and again after a load
    /// failed); `agent_machines`: the leader runs node agents (Service::open_snapshot).
    FollowerSnapshots(ServiceConfig cfg, std::function<Result<std::unique_ptr<store::Store>>()> open_store,
                      bool agent_machines);
    ~FollowerSnapshots();
    /// Loads once now (an error is kept in last_error(), not returned), then every
    /// cfg.follower_refresh_s in a thread until stop().
    void start();
    void stop();
    /// The snapshot to read now; null until a load succeeded.
    std::shared_ptr<Service> current() const;
    /// Milliseconds since the current snapshot's reads began: its data is at most this old
    /// (-1 when there is none).
    std::int64_t age_ms() const;
    /// Why the last load failed ("" when it succeeded).
    std::string last_error() const;
    /// Loads that succeeded so far.
    long loads() const;

private:
    void load_once();

    ServiceConfig cfg_;
    std::function<Result<std::unique_ptr<store::Store>>()> open_store_;
    bool agent_machines_;
    std::shared_ptr<store::SharedStore> shared_;  ///< the connection (only the loader replaces it)
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stopping_ = false;
    std::shared_ptr<Service> current_;
    std::chrono::steady_clock::time_point read_at_{};
    std::string error_;
    long loads_ = 0;
    std::thread th_;
};

}  // namespace astraeus::service
