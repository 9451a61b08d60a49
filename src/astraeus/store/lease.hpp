// The leader lease of several `astraeus serve` replicas on one PostgreSQL database (issue 23):
// one row in table astraeus_leader_lease (holder replica id, its advertised address, generation,
// renewed_at and the holder's lease duration), judged by the DATABASE's clock only, so the
// replicas' clocks need not agree. A replica takes the lease when it is free or expired
// (now > renewed_at + duration_s) and renews it while it still holds its generation. Every
// take-over increments the generation: it is the fencing token that a deposed leader's late
// writes are checked against (store/pg_store.hpp, set_fencing_generation).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "astraeus/base/error.hpp"

namespace astraeus::store {

/// What one acquire/renew step saw, after it.
struct LeaseView {
    bool held = false;              ///< this replica holds the lease (its generation) now
    std::string holder;             ///< the holder's replica id ("" when never taken)
    std::string holder_address;     ///< the holder's advertised URL ("" when none given)
    std::int64_t generation = 0;    ///< the lease's generation (0: never taken)
    double age_s = 0;               ///< seconds since the holder last renewed (database clock)
    bool took_over = false;         ///< this step took the lease (a new generation)
};

/// The replica id when none is configured: "HOSTNAME:ABSOLUTE_DATA_DIR".
std::string default_replica_id(const std::string& data_dir);

class LeaderLease {
public:
    /// Connects to `conninfo` (its own connection, beside the store's) and creates the lease
    /// table and its one row when missing. `duration_s` > 0: how long a renewal holds.
    /// `id_is_exclusive`: no other live process can have this replica id (serve holds its data
    /// directory's lock, and the default id names that directory), so a lease still held under
    /// this id is a dead process's and is taken back at once (generation + 1) instead of after
    /// its expiry. Errors: the database cannot be reached ("cannot connect to PostgreSQL: ..."),
    /// bad arguments.
    static Result<std::unique_ptr<LeaderLease>> open(const std::string& conninfo, std::string replica,
                                                     std::string address, double duration_s,
                                                     bool id_is_exclusive = false);
    virtual ~LeaderLease() = default;

    /// One step, in one transaction (the row locked FOR UPDATE): renews the lease if this
    /// replica still holds its generation; else takes it when it is free or expired, with
    /// generation + 1. Never takes a lease that another replica holds unexpired. An error only
    /// when the database cannot be reached (the lease is then not renewed).
    virtual Result<LeaseView> acquire_or_renew() = 0;
    /// Renews only: `held` false when another replica has taken the lease (deposed) or it is
    /// not ours. Never takes it over.
    virtual Result<LeaseView> renew() = 0;
    /// Reads the lease without changing it.
    virtual Result<LeaseView> read() = 0;
    /// Gives the lease up when held (renewed_at set far back: a follower takes it at its next
    /// step instead of after the duration). For a clean shutdown.
    virtual void release() = 0;
    /// The generation this replica holds or last held (0: never).
    virtual std::int64_t generation() const = 0;
    virtual const std::string& replica() const = 0;
};

}  // namespace astraeus::store
