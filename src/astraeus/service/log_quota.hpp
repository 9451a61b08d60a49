// Per-workspace log quota (docs/operations.md "Logs"): the bytes of a workspace's worker logs on
// the service's disk never exceed its quota, beside the per-worker cap (`local.log_cap_bytes`).
// Each attempt reserves its workers' caps before it starts; when the quota lacks room, the
// workspace's oldest logs of ended attempts are removed first (each replaced by a one-line note,
// not counted), and then a new attempt gets what is left (each worker quota-left / workers, down
// to 0: its output is read and dropped, a note in its log says so). An ended attempt's
// reservation becomes its files' real sizes.
// Layout: <root>/<workspace>/<run>/attempt-N/worker-K.log (the local executor's and the agents'
// copies alike); a workspace's folder is read once, at its first reservation (a restart counts
// what is already there, oldest by modification time first).
// Thread safety: none; the service calls it under its lock.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace astraeus::service {

class LogQuota {
public:
    /// `quota_bytes` per workspace (0: no quota, every worker gets `worker_cap_bytes`).
    LogQuota(std::uint64_t quota_bytes, std::uint64_t worker_cap_bytes)
        : quota_(quota_bytes), cap_(worker_cap_bytes) {}

    /// Reserves room for attempt `key` (a run's id: one live attempt per run) of `workspace`,
    /// whose workers write `logs` (one path per worker; all under the workspace's folder). A
    /// previous reservation of `key` is settled first. Removes the oldest settled logs while the
    /// room left is below workers x cap. Returns each worker's cap in bytes:
    /// min(cap, room / workers), 0 when no room is left.
    std::uint64_t reserve(const std::string& workspace, std::int64_t key, const std::vector<std::string>& logs);
    /// Attempt `key` ended: its reservation is replaced by its logs' sizes now. Unknown keys: no-op.
    void settle(std::int64_t key);
    /// Bytes counted for `workspace`: settled logs plus live reservations.
    std::uint64_t used(const std::string& workspace) const;
    /// Whether `path` is a log removed by the quota (its note is all that is left).
    bool removed(const std::string& path) const { return removed_.contains(path); }
    /// The one-line note that replaces a removed log.
    static std::string removed_note(const std::string& workspace, std::uint64_t quota_bytes);

private:
    struct Workspace {
        bool scanned = false;
        std::uint64_t used = 0;
        std::uint64_t next_seq = 0;
        std::map<std::uint64_t, std::pair<std::string, std::uint64_t>> settled;  ///< seq -> (path, bytes), oldest first
        std::map<std::string, std::uint64_t> seq_of;                             ///< path -> seq
    };
    struct Reservation {
        std::string workspace;
        std::vector<std::string> logs;
        std::uint64_t bytes = 0;
    };
    void scan(const std::string& workspace, Workspace& w, const std::string& any_log);
    void add_settled(Workspace& w, const std::string& path, std::uint64_t bytes);
    void remove_oldest(const std::string& workspace, Workspace& w);

    std::uint64_t quota_;
    std::uint64_t cap_;
    std::map<std::string, Workspace> ws_;
    std::map<std::int64_t, Reservation> live_;
    std::set<std::string> removed_;
};

}  // namespace astraeus::service
