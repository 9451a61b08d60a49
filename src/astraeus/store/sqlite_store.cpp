// The SQLite store (SQLiteCpp): the only place that uses SQLite. WAL journal, synchronous=FULL
// (a commit is on disk when apply() returns: nothing acknowledged is lost after kill -9 or a
// power cut), foreign keys on, a busy timeout so that `astraeus admin` can write while the
// server runs. Schema migrations: `schema_version` holds the version; each migration runs once
// in its own transaction.
#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <functional>

#include "astraeus/store/failpoint.hpp"
#include "astraeus/store/sql_text.hpp"
#include "astraeus/store/store.hpp"

namespace astraeus::store {

namespace {

const auto kMigrations = migrations();
const int kVersion = static_cast<int>(kMigrations.size());

/// One result row of a statement, as the shared row mapping reads it (sql_text.hpp).
struct SqliteRow {
    SQLite::Statement& q;
    std::int64_t i64(int c) const { return q.getColumn(c).getInt64(); }
    int i32(int c) const { return q.getColumn(c).getInt(); }
    double f64(int c) const { return q.getColumn(c).getDouble(); }
    std::string str(int c) const { return q.getColumn(c).getString(); }
    bool null(int c) const { return q.getColumn(c).isNull(); }
};

template <class F>
auto guarded(const char* what, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const std::exception& e) {
        return fail(std::string("store: ") + what + ": " + e.what());
    }
}

class SqliteStore final : public Store {
public:
    explicit SqliteStore(const std::string& path, bool read_only = false)
        : path_(path), db_(path, read_only ? SQLite::OPEN_READONLY : SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
        db_.setBusyTimeout(10000);
        if (read_only) return;
        db_.exec("PRAGMA journal_mode=WAL");
        db_.exec("PRAGMA synchronous=FULL");
        db_.exec("PRAGMA foreign_keys=ON");
    }

    /// A read-only connection to the same file (WAL: it reads the last commit, never waits for
    /// the writer's transaction).
    Result<std::unique_ptr<Store>> open_reader() const override {
        try {
            return std::unique_ptr<Store>(std::make_unique<SqliteStore>(path_, true));
        } catch (const std::exception& e) {
            return fail("cannot open a second connection to " + path_ + ": " + e.what());
        }
    }

    /// PRAGMA quick_check (every page's structure, no index contents): "" when the file is
    /// sound, else its first problems (at most 5 lines).
    std::string quick_check() {
        SQLite::Statement q(db_, "PRAGMA quick_check(5)");
        std::string out;
        while (q.executeStep()) {
            const std::string line = q.getColumn(0).getString();
            if (line == "ok") return {};
            out += (out.empty() ? "" : "; ") + line;
        }
        return out.empty() ? std::string("no answer") : out;
    }

    Result<void> migrate() {
        return guarded("migrate", [&]() -> Result<void> {
            db_.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
            int v = current_version();
            if (v > kVersion)
                return fail("the data directory's schema version " + std::to_string(v) +
                            " is newer than this program's (" + std::to_string(kVersion) + ")");
            for (; v < kVersion; ++v) {
                SQLite::Transaction tx(db_);
                db_.exec(kMigrations[v]);
                db_.exec("DELETE FROM schema_version");
                SQLite::Statement q(db_, "INSERT INTO schema_version (version) VALUES (?)");
                q.bind(1, v + 1);
                q.exec();
                failpoint("store.migrate.before_commit");
                tx.commit();
                failpoint("store.migrate.after_commit");
            }
            return {};
        });
    }

    /// A read-only store's check: the schema is one this program knows (no migration).
    Result<void> check_version(const std::string& path) {
        return guarded("open", [&]() -> Result<void> {
            if (!db_.tableExists("schema_version"))
                return fail(path + ": not an Astraeus store (no schema_version table)");
            const int v = current_version();
            if (v != kVersion)
                return fail(path + ": schema version " + std::to_string(v) + ", this program reads " +
                            std::to_string(kVersion) + " (start `astraeus serve` once to migrate)");
            return {};
        });
    }

    int schema_version() override {
        try {
            return current_version();
        } catch (const std::exception&) {
            return 0;
        }
    }

    Result<std::pair<Id, Id>> init(const std::string& org, const std::string& cluster) override {
        return guarded("init", [&]() -> Result<std::pair<Id, Id>> {
            SQLite::Transaction tx(db_);
            SQLite::Statement count(db_, "SELECT COUNT(*) FROM organizations");
            count.executeStep();
            if (count.getColumn(0).getInt64() > 0)
                return fail("the data directory is already initialised");
            SQLite::Statement a(db_, "INSERT INTO organizations (name) VALUES (?)");
            a.bind(1, org);
            a.exec();
            const Id org_id = db_.getLastInsertRowid();
            SQLite::Statement b(db_, "INSERT INTO clusters (org_id, name) VALUES (?, ?)");
            b.bind(1, org_id);
            b.bind(2, cluster);
            b.exec();
            const Id cluster_id = db_.getLastInsertRowid();
            failpoint("store.init.before_commit");
            tx.commit();
            failpoint("store.init.after_commit");
            return std::pair{org_id, cluster_id};
        });
    }

    Result<Id> add_pool(Id cluster_id, const std::string& name) override {
        return guarded("add pool", [&]() -> Result<Id> {
            SQLite::Statement q(db_, "SELECT id FROM pools WHERE cluster_id = ? AND name = ?");
            q.bind(1, cluster_id);
            q.bind(2, name);
            if (q.executeStep()) return q.getColumn(0).getInt64();
            SQLite::Statement a(db_, "INSERT INTO pools (cluster_id, name) VALUES (?, ?)");
            a.bind(1, cluster_id);
            a.bind(2, name);
            failpoint("store.add_pool.before_commit");
            a.exec();  // one statement: its own transaction
            failpoint("store.add_pool.after_commit");
            return db_.getLastInsertRowid();
        });
    }

    Result<Id> add_machine(Id pool_id, const std::string& name, int gpus) override {
        return guarded("add machine", [&]() -> Result<Id> {
            SQLite::Statement a(db_, "INSERT INTO machines (pool_id, name, gpus) VALUES (?, ?, ?)");
            a.bind(1, pool_id);
            a.bind(2, name);
            a.bind(3, gpus);
            failpoint("store.add_machine.before_commit");
            a.exec();  // one statement: its own transaction
            failpoint("store.add_machine.after_commit");
            return db_.getLastInsertRowid();
        });
    }

    Result<Id> register_machine(Id pool_id, const std::string& name, int gpus,
                                const std::string& addr) override {
        return guarded("register machine", [&]() -> Result<Id> {
            SQLite::Transaction tx(db_);
            SQLite::Statement q(db_, "SELECT id, pool_id, gpus FROM machines WHERE name = ?");
            q.bind(1, name);
            if (q.executeStep()) {
                const Id id = q.getColumn(0).getInt64();
                if (q.getColumn(1).getInt64() != pool_id)
                    return fail("machine '" + name + "' is already a machine of another pool");
                if (q.getColumn(2).getInt() != gpus)
                    return fail("machine '" + name + "' is registered with " +
                                std::to_string(q.getColumn(2).getInt()) + " GPUs, not " +
                                std::to_string(gpus) + " (use another --name, or the same GPUs)");
                SQLite::Statement u(db_, "UPDATE machines SET addr = ? WHERE id = ?");
                u.bind(1, addr);
                u.bind(2, id);
                u.exec();
                tx.commit();
                return id;
            }
            SQLite::Statement a(db_,
                                "INSERT INTO machines (pool_id, name, gpus, up, from_agent, addr) "
                                "VALUES (?, ?, ?, 1, 1, ?)");
            a.bind(1, pool_id);
            a.bind(2, name);
            a.bind(3, gpus);
            a.bind(4, addr);
            a.exec();
            const Id id = db_.getLastInsertRowid();
            tx.commit();
            return id;
        });
    }

    Result<std::string> bind_agent_token(Id token_id, const std::string& name) override {
        return guarded("bind agent token", [&]() -> Result<std::string> {
            SQLite::Transaction tx(db_);
            // A machine name belongs to one token: another token cannot claim it (the first
            // binding wins; a token bound already keeps its own name, checked by the caller).
            SQLite::Statement held(db_, "SELECT token_id FROM agent_token_machines WHERE machine = ? AND token_id != ?");
            held.bind(1, name);
            held.bind(2, token_id);
            SQLite::Statement mine(db_, "SELECT machine FROM agent_token_machines WHERE token_id = ?");
            mine.bind(1, token_id);
            if (!mine.executeStep() && held.executeStep())
                return fail("machine name bound to another agent token: " + name);
            SQLite::Statement a(db_, "INSERT OR IGNORE INTO agent_token_machines (token_id, machine) VALUES (?, ?)");
            a.bind(1, token_id);
            a.bind(2, name);
            a.exec();
            SQLite::Statement q(db_, "SELECT machine FROM agent_token_machines WHERE token_id = ?");
            q.bind(1, token_id);
            if (!q.executeStep()) return fail("token " + std::to_string(token_id) + " has no machine after binding");
            std::string bound = q.getColumn(0).getString();
            tx.commit();
            return bound;
        });
    }

    Result<Id> set_workspace(Id org_id, Id cluster_id, const std::string& name,
                             double weight) override {
        return guarded("workspace", [&]() -> Result<Id> {
            SQLite::Transaction tx(db_);
            SQLite::Statement a(db_,
                                "INSERT INTO workspaces (org_id, name) VALUES (?, ?) "
                                "ON CONFLICT (org_id, name) DO NOTHING");
            a.bind(1, org_id);
            a.bind(2, name);
            a.exec();
            SQLite::Statement q(db_, "SELECT id FROM workspaces WHERE org_id = ? AND name = ?");
            q.bind(1, org_id);
            q.bind(2, name);
            q.executeStep();
            const Id id = q.getColumn(0).getInt64();
            SQLite::Statement w(db_,
                                "INSERT INTO workspace_weights (workspace_id, cluster_id, weight) "
                                "VALUES (?, ?, ?) ON CONFLICT (workspace_id, cluster_id) DO "
                                "UPDATE SET weight = excluded.weight");
            w.bind(1, id);
            w.bind(2, cluster_id);
            w.bind(3, weight);
            w.exec();
            failpoint("store.workspace.before_commit");
            tx.commit();
            failpoint("store.workspace.after_commit");
            return id;
        });
    }

    Result<Id> add_token(const TokenRec& t) override {
        return guarded("add token", [&]() -> Result<Id> {
            SQLite::Statement a(db_,
                                "INSERT INTO tokens (name, scope, org_id, workspace_id, "
                                "cluster_id, hash, created_s, revoked) VALUES (?,?,?,?,?,?,?,0)");
            a.bind(1, t.name);
            a.bind(2, to_string(t.scope));
            a.bind(3, t.org_id);
            a.bind(4, t.workspace_id);
            a.bind(5, t.cluster_id);
            a.bind(6, t.hash);
            a.bind(7, t.created_s);
            failpoint("store.add_token.before_commit");
            a.exec();  // one statement: its own transaction
            failpoint("store.add_token.after_commit");
            return db_.getLastInsertRowid();
        });
    }

    Result<void> revoke_token(Id id) override {
        return guarded("revoke token", [&]() -> Result<void> {
            SQLite::Transaction tx(db_);
            SQLite::Statement a(db_, "UPDATE tokens SET revoked = 1 WHERE id = ?");
            a.bind(1, id);
            const int changed = a.exec();
            if (changed == 0) return fail("no token with id " + std::to_string(id));
            SQLite::Statement d(db_, "DELETE FROM sessions WHERE token_id = ?");
            d.bind(1, id);
            d.exec();
            failpoint("store.revoke_token.before_commit");
            tx.commit();
            failpoint("store.revoke_token.after_commit");
            return {};
        });
    }

    Result<Id> add_session(const SessionRec& s, int max_per_token, Seconds now_s) override {
        return guarded("add session", [&]() -> Result<Id> {
            if (max_per_token < 1) return fail("max_per_token must be at least 1");
            SQLite::Transaction tx(db_);
            SQLite::Statement expired(db_, "DELETE FROM sessions WHERE expires_s <= ?");
            expired.bind(1, now_s);
            expired.exec();
            // The newest max_per_token - 1 of the token's sessions stay; the new one makes max.
            SQLite::Statement oldest(db_,
                                     "DELETE FROM sessions WHERE token_id = ?1 AND id NOT IN (SELECT id FROM "
                                     "sessions WHERE token_id = ?1 ORDER BY created_s DESC, id DESC LIMIT ?2)");
            oldest.bind(1, s.token_id);
            oldest.bind(2, max_per_token - 1);
            oldest.exec();
            SQLite::Statement a(db_, "INSERT INTO sessions (token_id, hash, created_s, expires_s) VALUES (?,?,?,?)");
            a.bind(1, s.token_id);
            a.bind(2, s.hash);
            a.bind(3, s.created_s);
            a.bind(4, s.expires_s);
            a.exec();
            const Id id = db_.getLastInsertRowid();
            failpoint("store.add_session.before_commit");
            tx.commit();
            failpoint("store.add_session.after_commit");
            return id;
        });
    }

    Result<std::optional<std::pair<SessionRec, TokenRec>>> session_by_hash(const std::string& hash) override {
        using Out = std::optional<std::pair<SessionRec, TokenRec>>;
        return guarded("session", [&]() -> Result<Out> {
            SQLite::Statement q(db_, std::string(kSessionSelect) + " WHERE hash = ?");
            q.bind(1, hash);
            if (!q.executeStep()) return Out{};
            SessionRec s = session_of(SqliteRow{q});
            SQLite::Statement t(db_, std::string(kTokenSelect) + " WHERE id = ?");
            t.bind(1, s.token_id);
            if (!t.executeStep()) return fail("session " + std::to_string(s.id) + " has no token");
            return Out{std::pair{std::move(s), token_of(SqliteRow{t})}};
        });
    }

    Result<bool> delete_session(const std::string& hash) override {
        return guarded("delete session", [&]() -> Result<bool> {
            SQLite::Statement d(db_, "DELETE FROM sessions WHERE hash = ?");
            d.bind(1, hash);
            return d.exec() > 0;  // one statement: its own transaction
        });
    }

    Result<std::vector<SessionRec>> sessions(Id token_id) override {
        return guarded("sessions", [&]() -> Result<std::vector<SessionRec>> {
            SQLite::Statement q(db_, std::string(kSessionSelect) + " WHERE token_id = ? ORDER BY created_s, id");
            q.bind(1, token_id);
            std::vector<SessionRec> out;
            while (q.executeStep()) out.push_back(session_of(SqliteRow{q}));
            return out;
        });
    }

    Result<std::vector<OrgRec>> orgs() override {
        return guarded("orgs", [&]() -> Result<std::vector<OrgRec>> {
            std::vector<OrgRec> out;
            SQLite::Statement q(db_, "SELECT id, name FROM organizations ORDER BY id");
            while (q.executeStep()) out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString()});
            return out;
        });
    }

    Result<std::vector<ClusterRec>> clusters() override {
        return guarded("clusters", [&]() -> Result<std::vector<ClusterRec>> {
            std::vector<ClusterRec> out;
            SQLite::Statement q(db_, "SELECT id, org_id, name FROM clusters ORDER BY id");
            while (q.executeStep())
                out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(),
                               q.getColumn(2).getString()});
            return out;
        });
    }

    Result<std::vector<PoolRec>> pools(Id cluster_id) override {
        return guarded("pools", [&]() -> Result<std::vector<PoolRec>> {
            std::vector<PoolRec> out;
            SQLite::Statement q(db_, "SELECT id, cluster_id, name FROM pools WHERE cluster_id = ? ORDER BY id");
            q.bind(1, cluster_id);
            while (q.executeStep())
                out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(),
                               q.getColumn(2).getString()});
            return out;
        });
    }

    Result<std::vector<MachineRec>> machines(Id cluster_id) override {
        return guarded("machines", [&]() -> Result<std::vector<MachineRec>> {
            std::vector<MachineRec> out;
            SQLite::Statement q(db_, kMachinesOfCluster);
            q.bind(1, cluster_id);
            while (q.executeStep()) out.push_back(machine_of(SqliteRow{q}));
            return out;
        });
    }

    Result<std::vector<WorkspaceRec>> workspaces(Id org_id, Id cluster_id) override {
        return guarded("workspaces", [&]() -> Result<std::vector<WorkspaceRec>> {
            std::vector<WorkspaceRec> out;
            SQLite::Statement q(db_, kWorkspacesOfOrg);
            q.bind(1, cluster_id);
            q.bind(2, org_id);
            while (q.executeStep()) out.push_back(workspace_of(SqliteRow{q}));
            return out;
        });
    }

    Result<std::vector<TokenRec>> tokens() override {
        return guarded("tokens", [&]() -> Result<std::vector<TokenRec>> {
            std::vector<TokenRec> out;
            SQLite::Statement q(db_, std::string(kTokenSelect) + " ORDER BY id");
            while (q.executeStep()) out.push_back(token_of(SqliteRow{q}));
            return out;
        });
    }

    Result<std::optional<TokenRec>> token_by_hash(const std::string& hash) override {
        return guarded("token", [&]() -> Result<std::optional<TokenRec>> {
            if (!token_q_) token_q_ = std::make_unique<SQLite::Statement>(db_, std::string(kTokenSelect) + " WHERE hash = ?");
            SQLite::Statement& q = *token_q_;
            q.reset();
            q.bind(1, hash);
            std::optional<TokenRec> out;
            if (q.executeStep()) out = token_of(SqliteRow{q});
            q.reset();
            return out;
        });
    }

    Result<std::vector<RunRec>> runs() override {
        return guarded("runs", [&]() -> Result<std::vector<RunRec>> {
            std::vector<RunRec> out;
            SQLite::Statement q(db_, kRunsSelect);
            while (q.executeStep()) out.push_back(run_of(SqliteRow{q}));
            SQLite::Statement w(db_, kWorkersSelect);
            attach_by_run(out, [&] { return w.executeStep(); }, [&] { return w.getColumn(0).getInt64(); },
                          [&](RunRec& r) { r.worker_list.push_back(worker_of(SqliteRow{w})); });
            SQLite::Statement a(db_, kAttemptsSelect);
            attach_by_run(out, [&] { return a.executeStep(); }, [&] { return a.getColumn(0).getInt64(); },
                          [&](RunRec& r) { r.attempt_list.push_back(attempt_of(SqliteRow{a})); });
            return out;
        });
    }

    Result<std::vector<GoodputRowRec>> goodput_rows() override {
        return guarded("goodput rows", [&]() -> Result<std::vector<GoodputRowRec>> {
            std::vector<GoodputRowRec> out;
            SQLite::Statement q(db_, kGoodputSelect);
            while (q.executeStep()) out.push_back(goodput_of(SqliteRow{q}));
            return out;
        });
    }

    Result<std::vector<AlertRec>> alerts() override {
        return guarded("alerts", [&]() -> Result<std::vector<AlertRec>> {
            std::vector<AlertRec> out;
            SQLite::Statement q(db_, kAlertsSelect);
            while (q.executeStep()) out.push_back(alert_of(SqliteRow{q}));
            return out;
        });
    }

    Result<std::vector<IdempotencyRec>> idempotency_keys() override {
        return guarded("idempotency keys", [&]() -> Result<std::vector<IdempotencyRec>> {
            std::vector<IdempotencyRec> out;
            SQLite::Statement q(db_, "SELECT token_id, key, body_sha256, run_id, status, created_s "
                                     "FROM idempotency_keys");
            while (q.executeStep())
                out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                               q.getColumn(2).getString(), q.getColumn(3).getInt64(),
                               q.getColumn(4).getInt(), "", q.getColumn(5).getInt64()});
            return out;
        });
    }

    Result<std::optional<IdempotencyRec>> idempotency_key(Id token_id, const std::string& key) override {
        return guarded("idempotency key", [&]() -> Result<std::optional<IdempotencyRec>> {
            SQLite::Statement q(db_, std::string(kIdempotencySelect) + " WHERE token_id = ? AND key = ?");
            q.bind(1, token_id);
            q.bind(2, key);
            if (!q.executeStep()) return std::optional<IdempotencyRec>{};
            return std::optional<IdempotencyRec>{idempotency_of(SqliteRow{q})};
        });
    }

    Result<std::optional<std::int64_t>> meta(const std::string& key) override {
        return guarded("meta", [&]() -> Result<std::optional<std::int64_t>> {
            SQLite::Statement q(db_, "SELECT value FROM meta WHERE key = ?");
            q.bind(1, key);
            std::optional<std::int64_t> out;
            if (q.executeStep()) out = q.getColumn(0).getInt64();
            return out;
        });
    }

    Result<void> apply(const Batch& b) override {
        if (b.empty()) return {};
        return guarded("write", [&]() -> Result<void> {
            SQLite::Transaction tx(db_);
            for (const RunRec& r : b.runs) write_run(r);
            if (!b.goodput.empty()) {
                SQLite::Statement& q = prepared(goodput_add_q_, kGoodputAdd);
                for (const GoodputRowRec& g : b.goodput) {
                    q.bind(1, g.run_id);
                    q.bind(2, g.machine_id);
                    q.bind(3, g.hour);
                    q.bind(4, g.category);
                    q.bind(5, g.held ? 1 : 0);
                    q.bind(6, g.gpu_s);
                    q.exec();
                    q.reset();
                }
            }
            if (!b.meta.empty()) {
                SQLite::Statement& q = prepared(meta_upsert_q_, kMetaUpsert);
                for (const auto& [k, v] : b.meta) {
                    q.bind(1, k);
                    q.bind(2, v);
                    q.exec();
                    q.reset();
                }
            }
            if (!b.idempotency.empty()) {
                SQLite::Statement q(db_, kIdempotencyInsert);
                for (const IdempotencyRec& k : b.idempotency) {
                    q.bind(1, k.token_id);
                    q.bind(2, k.key);
                    q.bind(3, k.body_sha256);
                    q.bind(4, k.run_id);
                    q.bind(5, k.status);
                    q.bind(6, k.reply);
                    q.bind(7, k.created_s);
                    q.exec();
                    q.reset();
                }
            }
            if (b.prune_idempotency_before) {
                SQLite::Statement q(db_, "DELETE FROM idempotency_keys WHERE created_s < ?");
                q.bind(1, *b.prune_idempotency_before);
                q.exec();
            }
            if (b.alerts) {
                db_.exec("DELETE FROM alerts");
                SQLite::Statement q(db_, kAlertUpsert);
                for (const AlertRec& a : *b.alerts) {
                    q.bind(1, a.name);
                    q.bind(2, a.scope);
                    q.bind(3, a.target);
                    q.bind(4, a.state);
                    q.bind(5, a.since);
                    q.bind(6, a.value);
                    q.exec();
                    q.reset();
                }
            }
            if (b.prune_before_hour) {
                SQLite::Statement q(db_, "DELETE FROM goodput_hourly WHERE hour < ?");
                q.bind(1, *b.prune_before_hour);
                q.exec();
            }
            for (const auto& [id, up] : b.machine_up) {
                SQLite::Statement q(db_, "UPDATE machines SET up = ? WHERE id = ?");
                q.bind(1, up ? 1 : 0);
                q.bind(2, id);
                q.exec();
            }
            for (const auto& [id, drained] : b.machine_drained) {
                SQLite::Statement q(db_, "UPDATE machines SET drained = ? WHERE id = ?");
                q.bind(1, drained ? 1 : 0);
                q.bind(2, id);
                q.exec();
            }
            for (const auto& [id, t] : b.machine_heartbeat) {
                SQLite::Statement q(db_, "UPDATE machines SET last_heartbeat_s = ? WHERE id = ?");
                q.bind(1, t);
                q.bind(2, id);
                q.exec();
            }
            failpoint("store.apply.before_commit");
            tx.commit();
            failpoint("store.apply.after_commit");
            return {};
        });
    }

private:
    int current_version() {
        SQLite::Statement q(db_, "SELECT version FROM schema_version");
        return q.executeStep() ? q.getColumn(0).getInt() : 0;
    }

    /// The statement of `sql`, prepared once per connection and kept in `slot` (parsing the
    /// upserts again at every commit was about a third of a submission's CPU); reset and its
    /// bindings cleared, also after a write that failed half-way.
    SQLite::Statement& prepared(std::unique_ptr<SQLite::Statement>& slot, const char* sql) {
        if (!slot) slot = std::make_unique<SQLite::Statement>(db_, sql);
        slot->reset();
        slot->clearBindings();
        return *slot;
    }

    void write_run(const RunRec& r) {
        SQLite::Statement& q = prepared(run_upsert_q_, kRunUpsert);
        int c = 1;
        q.bind(c++, r.id);
        q.bind(c++, r.workspace_id);
        q.bind(c++, r.pool_id);
        q.bind(c++, r.name);
        q.bind(c++, r.workers);
        q.bind(c++, r.gpus_per_worker);
        q.bind(c++, r.time_limit_s);
        q.bind(c++, r.sim_duration_s);
        q.bind(c++, r.command);
        q.bind(c++, r.image);
        q.bind(c++, r.state);
        q.bind(c++, r.reason);
        q.bind(c++, r.stop_cause);
        q.bind(c++, r.submitted_s);
        q.bind(c++, r.started_s);
        q.bind(c++, r.ended_s);
        q.bind(c++, r.phase_since_s);
        q.bind(c++, r.executed_s);
        q.bind(c++, r.lease_start_s);
        q.bind(c++, r.lease_end_s);
        q.bind(c++, r.attempts);
        q.exec();
        SQLite::Statement& w = prepared(worker_upsert_q_, kWorkerUpsert);
        for (const WorkerRec& k : r.worker_list) {
            w.bind(1, r.id);
            w.bind(2, k.index);
            w.bind(3, k.phase);
            w.bind(4, k.cause);
            w.bind(5, k.attempt);
            w.bind(6, k.parts);
            w.bind(7, k.level);
            w.bind(8, k.counted_s);
            w.bind(9, k.decided_s);
            w.bind(10, k.pending);
            w.exec();
            w.reset();
        }
        SQLite::Statement& a = prepared(attempt_upsert_q_, kAttemptUpsert);
        for (const AttemptRec& k : r.attempt_list) {
            a.bind(1, r.id);
            a.bind(2, k.number);
            a.bind(3, k.started_s);
            a.bind(4, k.ended_s);
            a.bind(5, k.outcome);
            a.exec();
            a.reset();
        }
    }

    std::string path_;
    SQLite::Database db_;
    std::unique_ptr<SQLite::Statement> token_q_;
    // The writes' statements (prepared()); declared after db_, so finalized before it closes.
    std::unique_ptr<SQLite::Statement> run_upsert_q_, worker_upsert_q_, attempt_upsert_q_, goodput_add_q_,
        meta_upsert_q_;
};

}  // namespace

Result<std::unique_ptr<Store>> open_sqlite_read_only(const std::string& data_dir) {
    const std::string path = data_dir + "/astraeus.db";
    std::error_code ec;
    if (!std::filesystem::is_directory(data_dir, ec))
        return fail(data_dir + ": no such data directory");
    if (!std::filesystem::is_regular_file(path, ec))
        return fail(path + ": no Astraeus store there (is --data-dir the service's data directory?)");
    try {
        auto s = std::make_unique<SqliteStore>(path, true);
        if (auto ok = s->check_version(path); !ok) return std::unexpected(ok.error());
        return std::unique_ptr<Store>(std::move(s));
    } catch (const std::exception& e) {
        return fail("cannot open the store " + path + " read-only: " + e.what());
    }
}

Result<std::unique_ptr<Store>> open_sqlite(const std::string& data_dir) {
    try {
        if (auto ok = create_data_dir(data_dir); !ok) return std::unexpected(ok.error());
        if (auto ok = private_store_file(data_dir + "/astraeus.db"); !ok) return std::unexpected(ok.error());
        const std::string path = data_dir + "/astraeus.db";
        auto s = std::make_unique<SqliteStore>(path);
        // A damaged file (pages overwritten, cut short) is refused before anything reads or
        // writes it: serving from it would show some tables silently empty (docs/operations.md,
        // "A damaged store").
        std::string damage;
        try {
            damage = s->quick_check();
        } catch (const std::exception& e) {
            damage = e.what();
        }
        if (!damage.empty())
            return fail(path + ": the store is damaged (PRAGMA quick_check: " + damage.substr(0, 500) +
                        "); nothing was changed. Restore it from a backup or recover it with sqlite3 "
                        "(docs/operations.md, \"A damaged store\")");
        if (auto ok = s->migrate(); !ok) return std::unexpected(ok.error());
        return std::unique_ptr<Store>(std::move(s));
    } catch (const std::exception& e) {
        return fail("cannot open the store " + data_dir + "/astraeus.db: " + e.what() +
                    " (a damaged file: docs/operations.md, \"A damaged store\")");
    }
}

}  // namespace astraeus::store
