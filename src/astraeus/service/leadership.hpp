// Leadership of several `astraeus serve` replicas on one PostgreSQL database (issue 23,
// docs/operations.md "Replicas"): the leader lease (store/lease.hpp) taken, renewed every
// lease_renew_s and watched. A replica that does not lead follows (serves reads: service/follower_snapshots.hpp) and
// tries again every lease_renew_s; once it leads, a thread renews the lease and stops the
// process (exit 3, log line leader.deposed) when another replica took it over; a second thread
// stops it when its lease may have expired: lease_duration_s (less a tenth, at most 0.5 s) after
// the last renewal that succeeded was *sent* (not answered), even while a renewal hangs on a
// database that stopped answering, so that it stops before a follower can take the lease over
// (the database's lease ends lease_duration_s after it wrote the renewal). Thread safety: view() and
// metrics_text() are thread-safe; the rest is called from serve's main thread.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "astraeus/base/error.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/store/lease.hpp"

namespace astraeus::service {

class Leadership {
public:
    /// Opens the lease of the PostgreSQL database `c.store_postgresql` for replica `c.replica`
    /// (default store::default_replica_id(c.data_dir), exclusive: serve holds the data directory's
    /// lock) advertising `c.address`. Errors as store::LeaderLease::open.
    static Result<std::unique_ptr<Leadership>> open(const ServiceConfig& c);
    ~Leadership();

    /// One acquire-or-renew step; true when this replica leads now. Errors (the database does
    /// not answer) count as not leading.
    bool try_lead();
    /// The lease as last seen (holder, its address, generation, age).
    store::LeaseView view() const;
    /// The generation this replica leads with (the fencing token; 0 before it leads).
    std::int64_t generation() const { return lease_->generation(); }
    const std::string& replica() const { return lease_->replica(); }
    double renew_s() const { return renew_s_; }

    /// Starts renewing every lease_renew_s; exits the process with code 3 when deposed.
    void keep_leading();
    /// Stops renewing and gives the lease up (a clean shutdown: a follower takes over at once).
    void release();

    /// Prometheus text: astraeus_leader{replica="..."} 1|0, astraeus_leader_generation,
    /// astraeus_leader_lease_age_seconds (seconds since the lease's last renewal, database clock).
    std::string metrics_text() const;

private:
    Leadership(std::unique_ptr<store::LeaderLease> l, double duration_s, double renew_s)
        : lease_(std::move(l)), duration_s_(duration_s), renew_s_(renew_s) {}
    void note(const store::LeaseView& v);

    std::unique_ptr<store::LeaderLease> lease_;
    double duration_s_, renew_s_;
    mutable std::mutex mu_;
    store::LeaseView last_;
    std::chrono::steady_clock::time_point seen_at_{};  ///< when last_ was read
    bool leading_ = false;
    std::condition_variable cv_;
    bool stopping_ = false;
    std::thread renewer_;
    std::thread watchdog_;
    /// Steady-clock nanoseconds until which this replica surely leads: the sending of the last
    /// renewal that succeeded + lease_duration_s - the margin (the database's lease ends later).
    std::atomic<std::int64_t> valid_until_ns_{0};
    std::string last_error_;  ///< under mu_: why the last renewal failed
    /// Runs one acquire-or-renew; on success while held, moves valid_until_ns_.
    Result<store::LeaseView> renew_timed(bool acquire);
};

}  // namespace astraeus::service
