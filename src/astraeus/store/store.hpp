// The service's storage interface: tenancy (organisations, clusters, pools, machines,
// workspaces and their weights), API tokens (hashed), runs with their workers and attempts, the
// hourly goodput rows and alerts. SQLite implements it (store/sqlite_store.cpp, the default) and
// PostgreSQL (store/pg_store.hpp), with the same schema and statements (store/sql_text.hpp).
// Every state change of the service is one Batch written in
// one transaction, durable when apply() returns (the service replies only after that).
// Ids are positive integers; 0 = none. Thread safety: a Store is not thread-safe (the service
// serialises its calls).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"

namespace astraeus::store {

using Id = std::int64_t;

struct OrgRec {
    Id id = 0;
    std::string name;
};
struct ClusterRec {
    Id id = 0;
    Id org_id = 0;
    std::string name;
};
struct PoolRec {
    Id id = 0;
    Id cluster_id = 0;
    std::string name;
};
struct MachineRec {
    Id id = 0;
    Id pool_id = 0;
    std::string name;
    int gpus = 0;
    bool up = true;
    // Since schema 2 (node agents, docs/agents.md):
    bool from_agent = false;        ///< registered by an agent (not from the config)
    bool drained = false;           ///< no new placements; its workers were stopped
    Seconds last_heartbeat_s = -1;  ///< its agent's last heartbeat written to the store (-1: none)
    std::string addr;               ///< the address its workers reach each other on (agents)
};
/// A workspace (tenant) of an organisation and its weight on one cluster.
struct WorkspaceRec {
    Id id = 0;
    Id org_id = 0;
    std::string name;
    double weight = 1.0;  ///< on the cluster it was read for
};

enum class Scope : std::uint8_t { Workspace, OrgAdmin, Operator, Agent };
/// "workspace", "org-admin", "operator", "agent" (a node agent of `cluster_id`: the agent
/// endpoints only).
const char* to_string(Scope s);

struct TokenRec {
    Id id = 0;
    std::string name;
    Scope scope = Scope::Workspace;
    Id org_id = 0;
    Id workspace_id = 0;   ///< workspace tokens only
    Id cluster_id = 0;     ///< operator and agent tokens: their cluster
    std::string hash;      ///< SHA-256 hex of the token
    Seconds created_s = 0;
    bool revoked = false;
};

/// One worker of a run as the goodput count and the executor see it (goodput/lifecycle.hpp
/// phases and causes as integers). `parts` = "machine:gpus,machine:gpus" while holding GPUs.
struct WorkerRec {
    int index = 0;
    int phase = 0;
    int cause = 0;
    int attempt = 0;
    std::string parts;
    double level = -1;  ///< utilization level while running (-1: none)
    // The goodput count's place (service/pending_count.hpp): the hourly rows held this worker's
    // time up to counted_s when the record was written, `pending` (text) its time in
    // [counted_s, decided_s), and from decided_s on it was in the state above. -1: unknown
    // (records of schema < 6), the restart counts from the store's counted_to_s.
    Seconds counted_s = -1;
    Seconds decided_s = -1;
    std::string pending;
};

struct AttemptRec {
    int number = 0;
    Seconds started_s = 0;
    Seconds ended_s = -1;
    std::string outcome;  ///< "", "succeeded", "failed", "preempted", "stopped", "lease",
                          ///< "not started" (the resource manager did not start it: Withdrawn)
};

/// A run and everything the service needs to rebuild it after a restart.
struct RunRec {
    Id id = 0;
    Id workspace_id = 0;
    Id pool_id = 0;
    std::string name;
    int workers = 1;
    int gpus_per_worker = 1;
    Seconds time_limit_s = 0;       ///< 0: none
    Seconds sim_duration_s = 0;     ///< 0: none (the simulated executor's work)
    std::string command;
    std::string image;
    std::string state;              ///< pending, starting, running, stopping, succeeded, ...
    std::string reason;             ///< pending only
    std::string stop_cause;         ///< while stopping/failed-holding: owner, limit, preemption,
                                    ///< failure
    Seconds submitted_s = 0;
    Seconds started_s = -1;
    Seconds ended_s = -1;
    Seconds phase_since_s = 0;      ///< when the current state began
    Seconds executed_s = 0;         ///< work done before the current running stretch
    Seconds lease_start_s = -1;
    Seconds lease_end_s = -1;
    int attempts = 0;
    std::vector<WorkerRec> worker_list;
    std::vector<AttemptRec> attempt_list;
};

struct GoodputRowRec {
    Id run_id = 0;
    Id machine_id = -1;  ///< -1: not placed
    Seconds hour = 0;
    int category = 0;
    bool held = false;
    GpuSeconds gpu_s = 0;
};

struct AlertRec {
    std::string name;
    std::string scope;
    std::string target;
    std::string state;
    Seconds since = 0;
    double value = 0;
};

/// A submission's Idempotency-Key (docs/api.md "Idempotent submits", since schema 4): the first
/// reply to POST /v1/runs with `key` from token `token_id`, kept for a day.
struct IdempotencyRec {
    Id token_id = 0;
    std::string key;          ///< 1-255 printable ASCII bytes, as the client sent it
    std::string body_sha256;  ///< SHA-256 hex of the request body
    Id run_id = 0;            ///< the run it created
    int status = 201;         ///< the first reply's status
    std::string reply;        ///< the first reply's body (JSON text)
    Seconds created_s = 0;    ///< the service's clock
};

/// A web page's sign-in session (docs/security.md "Web sessions", since schema 5): the secret is
/// in the browser's HttpOnly cookie only; the store keeps its SHA-256. A session acts as the token
/// it was opened with (same scope) until it expires, is signed out, or the token is revoked.
struct SessionRec {
    Id id = 0;
    Id token_id = 0;
    std::string hash;       ///< SHA-256 hex of the session secret
    Seconds created_s = 0;  ///< real Unix seconds
    Seconds expires_s = 0;  ///< real Unix seconds; refused from then on
};

/// Everything one state change writes, applied in one transaction.
struct Batch {
    std::vector<RunRec> runs;               ///< upserted, with their workers and attempts
    std::vector<GoodputRowRec> goodput;     ///< added to the hourly rows (UPSERT add)
    std::vector<std::pair<std::string, std::int64_t>> meta;  ///< upserted
    std::optional<std::vector<AlertRec>> alerts;  ///< when set, replaces the alerts table
    std::optional<Seconds> prune_before_hour;     ///< deletes goodput rows of older hours
    std::vector<std::pair<Id, bool>> machine_up;  ///< machine state changes
    std::vector<std::pair<Id, bool>> machine_drained;     ///< drain / undrain
    std::vector<std::pair<Id, Seconds>> machine_heartbeat;  ///< last heartbeats
    std::vector<IdempotencyRec> idempotency;               ///< added (never replaced)
    std::optional<Seconds> prune_idempotency_before;       ///< deletes keys created before
    bool empty() const {
        return runs.empty() && goodput.empty() && meta.empty() && !alerts && !prune_before_hour &&
               machine_up.empty() && machine_drained.empty() && machine_heartbeat.empty() &&
               idempotency.empty() && !prune_idempotency_before;
    }
};

/// Appends the changes of `more` to `into`, so that applying `into` once gives the state that
/// applying the old `into` then `more` would: runs and metas replaced by id / key (the later
/// wins), goodput rows and machine changes appended (rows add up; changes apply in order),
/// alerts and prunes the later. The service keeps the batches its store refused in one (disk
/// full: docs/operations.md) and writes it when the store takes writes again.
void merge_batch(Batch& into, Batch&& more);

class Store {
public:
    virtual ~Store() = default;

    // --- tenancy (admin) ------------------------------------------------------------------
    /// Creates the organisation and its cluster (once); an error if one already exists.
    virtual Result<std::pair<Id, Id>> init(const std::string& org, const std::string& cluster) = 0;
    /// Adds pool `name` to the cluster (or returns the existing one's id).
    virtual Result<Id> add_pool(Id cluster_id, const std::string& name) = 0;
    virtual Result<Id> add_machine(Id pool_id, const std::string& name, int gpus) = 0;
    /// Adds a machine registered by a node agent (from_agent, up), or updates the address of
    /// the existing machine of that name; its id. An error when the name is a machine of
    /// another pool or has another GPU count (the message says which).
    virtual Result<Id> register_machine(Id pool_id, const std::string& name, int gpus,
                                        const std::string& addr) = 0;
    /// Binds agent token `token_id` to machine name `name` if it is bound to none yet (stored,
    /// durably); the name it is bound to: `name`, or the one of an earlier registration.
    virtual Result<std::string> bind_agent_token(Id token_id, const std::string& name) = 0;
    /// Adds (or re-weights) workspace `name` of the organisation, its weight on `cluster_id`.
    virtual Result<Id> set_workspace(Id org_id, Id cluster_id, const std::string& name,
                                     double weight) = 0;
    virtual Result<Id> add_token(const TokenRec& t) = 0;
    /// Marks a token revoked and deletes its web sessions (one transaction); an error for an
    /// unknown id.
    virtual Result<void> revoke_token(Id id) = 0;

    // --- web sessions (since schema 5) -------------------------------------------------------
    /// Adds session `s` (its id) in one transaction, after deleting every session expired at
    /// `now_s` and the oldest sessions of `s.token_id` beyond `max_per_token` - 1, so that a token
    /// never holds more than `max_per_token` (>= 1) sessions.
    virtual Result<Id> add_session(const SessionRec& s, int max_per_token, Seconds now_s) = 0;
    /// The session whose hash is `hash` with its token (revoked ones included), or none.
    virtual Result<std::optional<std::pair<SessionRec, TokenRec>>> session_by_hash(const std::string& hash) = 0;
    /// Deletes the session whose hash is `hash`; whether there was one.
    virtual Result<bool> delete_session(const std::string& hash) = 0;
    /// The sessions of token `token_id` (expired ones included), oldest first.
    virtual Result<std::vector<SessionRec>> sessions(Id token_id) = 0;

    // --- reads ------------------------------------------------------------------------------
    virtual Result<std::vector<OrgRec>> orgs() = 0;
    virtual Result<std::vector<ClusterRec>> clusters() = 0;
    virtual Result<std::vector<PoolRec>> pools(Id cluster_id) = 0;
    virtual Result<std::vector<MachineRec>> machines(Id cluster_id) = 0;
    /// Workspaces of the organisation with their weight on `cluster_id` (1 when none set).
    virtual Result<std::vector<WorkspaceRec>> workspaces(Id org_id, Id cluster_id) = 0;
    virtual Result<std::vector<TokenRec>> tokens() = 0;
    /// The token whose hash is `hash` (revoked ones included), or none.
    virtual Result<std::optional<TokenRec>> token_by_hash(const std::string& hash) = 0;
    /// A second connection to the same database, for reads (its writes fail): the service
    /// authenticates callers through it under a lock of its own, so that a call's token lookup
    /// never waits behind the writer's transaction. Errors: this store has none (a read-only view
    /// of another store, a test's), or the connection's.
    virtual Result<std::unique_ptr<Store>> open_reader() const { return fail("this store opens no second connection"); }
    /// Every run with its workers and attempts, by id.
    virtual Result<std::vector<RunRec>> runs() = 0;
    /// Every hourly goodput row (non-zero).
    virtual Result<std::vector<GoodputRowRec>> goodput_rows() = 0;
    virtual Result<std::vector<AlertRec>> alerts() = 0;
    virtual Result<std::optional<std::int64_t>> meta(const std::string& key) = 0;
    /// Every stored Idempotency-Key, without its reply text (`reply` empty).
    virtual Result<std::vector<IdempotencyRec>> idempotency_keys() = 0;
    /// The stored key `key` of token `token_id` with its reply, or none.
    virtual Result<std::optional<IdempotencyRec>> idempotency_key(Id token_id, const std::string& key) = 0;

    // --- the service's writes ---------------------------------------------------------------
    /// Applies the batch in one transaction: all of it, durably, or nothing (an error).
    virtual Result<void> apply(const Batch& b) = 0;
    /// The schema version in the store.
    virtual int schema_version() = 0;
    /// Fences this store's writes with the leader lease's generation `g` (store/lease.hpp; > 0):
    /// every later write transaction first locks the lease row (FOR SHARE, so no take-over
    /// commits across it) and is refused, with an error whose message starts "fenced:", when the
    /// lease's generation is no longer `g` (another replica took over). 0: unfenced (the default).
    /// SQLite (one server, no lease) ignores it.
    virtual void set_fencing_generation(std::int64_t g) { (void)g; }
};

/// True when `e` is a store error refusing a deposed leader's write (set_fencing_generation).
inline bool is_fenced(const Error& e) { return e.message.starts_with("fenced:"); }

/// Creates directory `data_dir` (its parents as usual) with mode 0700 when it does not exist;
/// an existing one with any group or other permission bit is made 0700 (an error when it cannot).
Result<void> create_data_dir(const std::string& data_dir);
/// Creates the file `path` with mode 0600 if absent; an existing one (and its -wal, -shm files)
/// readable by group or others is made 0600.
Result<void> private_store_file(const std::string& path);

/// Opens (creating and migrating) the SQLite store in directory `data_dir` (astraeus.db):
/// the directory is created 0700, the files 0600 (create_data_dir, private_store_file).
Result<std::unique_ptr<Store>> open_sqlite(const std::string& data_dir);

/// Opens the existing SQLite store of directory `data_dir` read-only (for exports): creates,
/// migrates and writes nothing; an error naming the path when the directory or its astraeus.db
/// is missing, or its schema version is not this program's. Its write calls fail.
Result<std::unique_ptr<Store>> open_sqlite_read_only(const std::string& data_dir);

}  // namespace astraeus::store
