// The PostgreSQL store (libpq; store/pg_store.hpp): the only place that uses libpq. Statements
// are the SQLite store's (store/sql_text.hpp) with `$n` parameters, prepared once per connection
// and sent with text parameters; each Batch is one transaction (BEGIN ... COMMIT), durable at
// COMMIT with the server's default synchronous_commit = on. Schema migrations as the SQLite
// store's: `schema_version` holds the version, each migration runs once in its own transaction,
// under a session advisory lock so that two servers starting at once do not both migrate.
#include "astraeus/store/pg_store.hpp"
#include "astraeus/store/pg_connect.hpp"

#include <libpq-fe.h>

#include <charconv>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <map>
#include <string_view>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "astraeus/store/failpoint.hpp"
#include "astraeus/store/sql_text.hpp"

namespace astraeus::store {
namespace {

/// The advisory lock keys of schema migrations and of the one server of a database (arbitrary
/// but fixed).
constexpr const char* kMigrationLock = "4702924307018942802";
constexpr const char* kServeLock = "4702924307018942803";
constexpr const char* kDeposed =
    "another `astraeus serve` took this database while this one's connection was lost: restart this one";

struct ResultFree {
    void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultFree>;

struct ConnFree {
    void operator()(PGconn* c) const { PQfinish(c); }
};


/// One parameter as PostgreSQL's text input.
template <class T>
std::string text(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
        return v;
    } else if constexpr (std::is_same_v<T, bool>) {
        return v ? "1" : "0";
    } else if constexpr (std::is_floating_point_v<T>) {
        char buf[64];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(v));  // shortest exact
        (void)ec;
        return std::string(buf, end);
    } else {
        static_assert(std::is_integral_v<T>);
        return std::to_string(v);
    }
}

/// Row `i` of a result, as the shared row mapping reads it (sql_text.hpp).
struct PgRow {
    const PGresult* r;
    int i;
    std::int64_t i64(int c) const { return std::strtoll(PQgetvalue(r, i, c), nullptr, 10); }
    int i32(int c) const { return static_cast<int>(i64(c)); }
    double f64(int c) const { return std::strtod(PQgetvalue(r, i, c), nullptr); }
    std::string str(int c) const { return std::string(PQgetvalue(r, i, c), static_cast<std::size_t>(PQgetlength(r, i, c))); }
    bool null(int c) const { return PQgetisnull(r, i, c) != 0; }
};

template <class F>
auto guarded(const char* what, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const std::exception& e) {
        if (std::string_view(e.what()).starts_with("fenced:")) return fail(e.what());  // as it is: the service exits on it
        return fail(std::string("store: ") + what + ": " + e.what());
    }
}

std::int64_t one_i64(const PgResult& r) {
    if (PQntuples(r.get()) == 0) throw std::runtime_error("no row where one was expected");
    return PgRow{r.get(), 0}.i64(0);
}
long changed(const PgResult& r) { return std::strtol(PQcmdTuples(r.get()), nullptr, 10); }

template <class F>
auto all(const PgResult& r, F&& f) {
    std::vector<decltype(f(PgRow{r.get(), 0}))> out;
    const int n = PQntuples(r.get());
    out.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) out.push_back(f(PgRow{r.get(), i}));
    return out;
}

template <class F>
void attach(std::vector<RunRec>& runs, const PgResult& r, F&& add) {
    const int n = PQntuples(r.get());
    int i = -1;
    attach_by_run(runs, [&] { return ++i < n; }, [&] { return PgRow{r.get(), i}.i64(0); },
                  [&](RunRec& run) { add(run, PgRow{r.get(), i}); });
}

class PgStore final : public Store {
public:
    PgStore(PGconn* c, std::string conninfo) : conninfo_(std::move(conninfo)), conn_(c) { quiet(); }

    /// A read-only session on the same database (as a follower's).
    Result<std::unique_ptr<Store>> open_reader() const override {
        auto connected = connect_postgresql(conninfo_, "astraeus-auth", /*read_only=*/true);
        if (!connected) return std::unexpected(connected.error());
        return std::unique_ptr<Store>(std::make_unique<PgStore>(*connected, conninfo_));
    }

    /// Takes the one-server lock (pg_try_advisory_lock, session level); false when another
    /// session holds it.
    bool take_serve_lock() {
        PgResult r = checked(PQexec(conn_.get(), (std::string("SELECT pg_try_advisory_lock(") + kServeLock + ")").c_str()),
                             conn_.get());
        serve_lock_ = PQntuples(r.get()) == 1 && std::string(PQgetvalue(r.get(), 0, 0)) == "t";
        return serve_lock_;
    }

    Result<void> migrate() {
        return guarded("migrate", [&]() -> Result<void> {
            exec_script(std::string("SELECT pg_advisory_lock(") + kMigrationLock + ")");
            struct Unlock {
                PgStore& s;
                ~Unlock() { PQclear(PQexec(s.conn_.get(), (std::string("SELECT pg_advisory_unlock(") + kMigrationLock + ")").c_str())); }
            } unlock{*this};
            exec_script("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)");
            const auto steps = migrations();
            const int latest = static_cast<int>(steps.size());
            int v = current_version();
            if (v > latest)
                return fail("the database's schema version " + std::to_string(v) + " is newer than this program's (" +
                            std::to_string(latest) + ")");
            for (; v < latest; ++v) {
                Tx tx(*this);
                exec_script(postgres_dialect(steps[static_cast<std::size_t>(v)]));
                exec_script("DELETE FROM schema_version");
                exec("INSERT INTO schema_version (version) VALUES (?)", v + 1);
                failpoint("store.migrate.before_commit");
                tx.commit();
                failpoint("store.migrate.after_commit");
            }
            return {};
        });
    }

    void set_fencing_generation(std::int64_t g) override { fence_ = g; }

    int schema_version() override {
        try {
            reconnect_if_lost();
            return current_version();
        } catch (const std::exception&) {
            return 0;
        }
    }

    Result<std::pair<Id, Id>> init(const std::string& org, const std::string& cluster) override {
        return guarded("init", [&]() -> Result<std::pair<Id, Id>> {
            Tx tx(*this);
            if (one_i64(exec("SELECT COUNT(*) FROM organizations")) > 0)
                return fail("the database is already initialised");
            const Id org_id = one_i64(exec("INSERT INTO organizations (name) VALUES (?) RETURNING id", org));
            const Id cluster_id =
                one_i64(exec("INSERT INTO clusters (org_id, name) VALUES (?, ?) RETURNING id", org_id, cluster));
            failpoint("store.init.before_commit");
            tx.commit();
            failpoint("store.init.after_commit");
            return std::pair{org_id, cluster_id};
        });
    }

    Result<Id> add_pool(Id cluster_id, const std::string& name) override {
        return guarded("add pool", [&]() -> Result<Id> {
            PgResult q = exec("SELECT id FROM pools WHERE cluster_id = ? AND name = ?", cluster_id, name);
            if (PQntuples(q.get()) > 0) return one_i64(q);
            failpoint("store.add_pool.before_commit");
            const Id id = one_i64(exec("INSERT INTO pools (cluster_id, name) VALUES (?, ?) RETURNING id", cluster_id, name));
            failpoint("store.add_pool.after_commit");  // one statement: its own transaction
            return id;
        });
    }

    Result<Id> add_machine(Id pool_id, const std::string& name, int gpus) override {
        return guarded("add machine", [&]() -> Result<Id> {
            failpoint("store.add_machine.before_commit");
            const Id id = one_i64(
                exec("INSERT INTO machines (pool_id, name, gpus) VALUES (?, ?, ?) RETURNING id", pool_id, name, gpus));
            failpoint("store.add_machine.after_commit");
            return id;
        });
    }

    Result<Id> register_machine(Id pool_id, const std::string& name, int gpus, const std::string& addr) override {
        return guarded("register machine", [&]() -> Result<Id> {
            Tx tx(*this);
            PgResult q = exec("SELECT id, pool_id, gpus FROM machines WHERE name = ? FOR UPDATE", name);
            if (PQntuples(q.get()) > 0) {
                const PgRow row{q.get(), 0};
                const Id id = row.i64(0);
                if (row.i64(1) != pool_id) return fail("machine '" + name + "' is already a machine of another pool");
                if (row.i32(2) != gpus)
                    return fail("machine '" + name + "' is registered with " + std::to_string(row.i32(2)) +
                                " GPUs, not " + std::to_string(gpus) + " (use another --name, or the same GPUs)");
                exec("UPDATE machines SET addr = ? WHERE id = ?", addr, id);
                tx.commit();
                return id;
            }
            const Id id = one_i64(exec("INSERT INTO machines (pool_id, name, gpus, up, from_agent, addr) "
                                       "VALUES (?, ?, ?, 1, 1, ?) RETURNING id",
                                       pool_id, name, gpus, addr));
            tx.commit();
            return id;
        });
    }

    Result<std::string> bind_agent_token(Id token_id, const std::string& name) override {
        return guarded("bind agent token", [&]() -> Result<std::string> {
            Tx tx(*this);
            PgResult mine = exec("SELECT machine FROM agent_token_machines WHERE token_id = ?", token_id);
            PgResult held =
                exec("SELECT token_id FROM agent_token_machines WHERE machine = ? AND token_id != ?", name, token_id);
            if (PQntuples(mine.get()) == 0 && PQntuples(held.get()) > 0)
                return fail("machine name bound to another agent token: " + name);
            exec("INSERT INTO agent_token_machines (token_id, machine) VALUES (?, ?) ON CONFLICT DO NOTHING", token_id,
                 name);
            PgResult q = exec("SELECT machine FROM agent_token_machines WHERE token_id = ?", token_id);
            if (PQntuples(q.get()) == 0) return fail("token " + std::to_string(token_id) + " has no machine after binding");
            std::string bound = PgRow{q.get(), 0}.str(0);
            tx.commit();
            return bound;
        });
    }

    Result<Id> set_workspace(Id org_id, Id cluster_id, const std::string& name, double weight) override {
        return guarded("workspace", [&]() -> Result<Id> {
            Tx tx(*this);
            exec("INSERT INTO workspaces (org_id, name) VALUES (?, ?) ON CONFLICT (org_id, name) DO NOTHING", org_id, name);
            const Id id = one_i64(exec("SELECT id FROM workspaces WHERE org_id = ? AND name = ?", org_id, name));
            exec("INSERT INTO workspace_weights (workspace_id, cluster_id, weight) VALUES (?, ?, ?) ON CONFLICT "
                 "(workspace_id, cluster_id) DO UPDATE SET weight = excluded.weight",
                 id, cluster_id, weight);
            failpoint("store.workspace.before_commit");
            tx.commit();
            failpoint("store.workspace.after_commit");
            return id;
        });
    }

    Result<Id> add_token(const TokenRec& t) override {
        return guarded("add token", [&]() -> Result<Id> {
            failpoint("store.add_token.before_commit");
            const Id id = one_i64(exec("INSERT INTO tokens (name, scope, org_id, workspace_id, cluster_id, hash, "
                                       "created_s, revoked) VALUES (?,?,?,?,?,?,?,0) RETURNING id",
                                       t.name, std::string(to_string(t.scope)), t.org_id, t.workspace_id,
                                       t.cluster_id, t.hash, t.created_s));
            failpoint("store.add_token.after_commit");  // one statement: its own transaction
            return id;
        });
    }

    Result<void> revoke_token(Id id) override {
        return guarded("revoke token", [&]() -> Result<void> {
            Tx tx(*this);
            if (changed(exec("UPDATE tokens SET revoked = 1 WHERE id = ?", id)) == 0)
                return fail("no token with id " + std::to_string(id));
            exec("DELETE FROM sessions WHERE token_id = ?", id);
            failpoint("store.revoke_token.before_commit");
            tx.commit();
            failpoint("store.revoke_token.after_commit");
            return {};
        });
    }

    Result<Id> add_session(const SessionRec& s, int max_per_token, Seconds now_s) override {
        return guarded("add session", [&]() -> Result<Id> {
            if (max_per_token < 1) return fail("max_per_token must be at least 1");
            Tx tx(*this);
            exec("DELETE FROM sessions WHERE expires_s <= ?", now_s);
            // The newest max_per_token - 1 of the token's sessions stay; the new one makes max.
            exec("DELETE FROM sessions WHERE token_id = ?1 AND id NOT IN (SELECT id FROM sessions WHERE token_id = ?1 "
                 "ORDER BY created_s DESC, id DESC LIMIT ?2)",
                 s.token_id, max_per_token - 1);
            const Id id = one_i64(exec("INSERT INTO sessions (token_id, hash, created_s, expires_s) VALUES (?,?,?,?) "
                                       "RETURNING id",
                                       s.token_id, s.hash, s.created_s, s.expires_s));
            failpoint("store.add_session.before_commit");
            tx.commit();
            failpoint("store.add_session.after_commit");
            return id;
        });
    }

    Result<std::optional<std::pair<SessionRec, TokenRec>>> session_by_hash(const std::string& hash) override {
        using Out = std::optional<std::pair<SessionRec, TokenRec>>;
        return guarded("session", [&]() -> Result<Out> {
            PgResult q = exec(std::string(kSessionSelect) + " WHERE hash = ?", hash);
            if (PQntuples(q.get()) == 0) return Out{};
            SessionRec s = session_of(PgRow{q.get(), 0});
            PgResult t = exec(std::string(kTokenSelect) + " WHERE id = ?", s.token_id);
            if (PQntuples(t.get()) == 0) return fail("session " + std::to_string(s.id) + " has no token");
            return Out{std::pair{std::move(s), token_of(PgRow{t.get(), 0})}};
        });
    }

    Result<bool> delete_session(const std::string& hash) override {
        return guarded("delete session", [&]() -> Result<bool> {
            return changed(exec("DELETE FROM sessions WHERE hash = ?", hash)) > 0;
        });
    }

    Result<std::vector<SessionRec>> sessions(Id token_id) override {
        return guarded("sessions", [&]() -> Result<std::vector<SessionRec>> {
            return all(exec(std::string(kSessionSelect) + " WHERE token_id = ? ORDER BY created_s, id", token_id),
                       [](const PgRow& r) { return session_of(r); });
        });
    }

    Result<std::vector<OrgRec>> orgs() override {
        return guarded("orgs", [&]() -> Result<std::vector<OrgRec>> {
            return all(exec("SELECT id, name FROM organizations ORDER BY id"),
                       [](const PgRow& r) { return OrgRec{r.i64(0), r.str(1)}; });
        });
    }

    Result<std::vector<ClusterRec>> clusters() override {
        return guarded("clusters", [&]() -> Result<std::vector<ClusterRec>> {
            return all(exec("SELECT id, org_id, name FROM clusters ORDER BY id"),
                       [](const PgRow& r) { return ClusterRec{r.i64(0), r.i64(1), r.str(2)}; });
        });
    }

    Result<std::vector<PoolRec>> pools(Id cluster_id) override {
        return guarded("pools", [&]() -> Result<std::vector<PoolRec>> {
            return all(exec("SELECT id, cluster_id, name FROM pools WHERE cluster_id = ? ORDER BY id", cluster_id),
                       [](const PgRow& r) { return PoolRec{r.i64(0), r.i64(1), r.str(2)}; });
        });
    }

    Result<std::vector<MachineRec>> machines(Id cluster_id) override {
        return guarded("machines", [&]() -> Result<std::vector<MachineRec>> {
            return all(exec(kMachinesOfCluster, cluster_id), [](const PgRow& r) { return machine_of(r); });
        });
    }

    Result<std::vector<WorkspaceRec>> workspaces(Id org_id, Id cluster_id) override {
        return guarded("workspaces", [&]() -> Result<std::vector<WorkspaceRec>> {
            return all(exec(kWorkspacesOfOrg, cluster_id, org_id), [](const PgRow& r) { return workspace_of(r); });
        });
    }

    Result<std::vector<TokenRec>> tokens() override {
        return guarded("tokens", [&]() -> Result<std::vector<TokenRec>> {
            return all(exec(std::string(kTokenSelect) + " ORDER BY id"), [](const PgRow& r) { return token_of(r); });
        });
    }

    Result<std::optional<TokenRec>> token_by_hash(const std::string& hash) override {
        return guarded("token", [&]() -> Result<std::optional<TokenRec>> {
            PgResult q = exec(std::string(kTokenSelect) + " WHERE hash = ?", hash);
            std::optional<TokenRec> out;
            if (PQntuples(q.get()) > 0) out = token_of(PgRow{q.get(), 0});
            return out;
        });
    }

    Result<std::vector<RunRec>> runs() override {
        return guarded("runs", [&]() -> Result<std::vector<RunRec>> {
            // One snapshot for the three reads: a run and its workers as of one commit.
            Tx tx(*this, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
            std::vector<RunRec> out = all(exec(kRunsSelect), [](const PgRow& r) { return run_of(r); });
            attach(out, exec(kWorkersSelect), [](RunRec& run, const PgRow& r) { run.worker_list.push_back(worker_of(r)); });
            attach(out, exec(kAttemptsSelect), [](RunRec& run, const PgRow& r) { run.attempt_list.push_back(attempt_of(r)); });
            tx.commit();
            return out;
        });
    }

    Result<std::vector<GoodputRowRec>> goodput_rows() override {
        return guarded("goodput rows", [&]() -> Result<std::vector<GoodputRowRec>> {
            return all(exec(kGoodputSelect), [](const PgRow& r) { return goodput_of(r); });
        });
    }

    Result<std::vector<AlertRec>> alerts() override {
        return guarded("alerts", [&]() -> Result<std::vector<AlertRec>> {
            return all(exec(kAlertsSelect), [](const PgRow& r) { return alert_of(r); });
        });
    }

    Result<std::optional<std::int64_t>> meta(const std::string& key) override {
        return guarded("meta", [&]() -> Result<std::optional<std::int64_t>> {
            PgResult q = exec("SELECT value FROM meta WHERE key = ?", key);
            std::optional<std::int64_t> out;
            if (PQntuples(q.get()) > 0) out = PgRow{q.get(), 0}.i64(0);
            return out;
        });
    }

    Result<std::vector<IdempotencyRec>> idempotency_keys() override {
        return guarded("idempotency keys", [&]() -> Result<std::vector<IdempotencyRec>> {
            return all(exec("SELECT token_id, key, body_sha256, run_id, status, '', created_s FROM idempotency_keys"),
                       [](const PgRow& r) { return idempotency_of(r); });
        });
    }

    Result<std::optional<IdempotencyRec>> idempotency_key(Id token_id, const std::string& key) override {
        return guarded("idempotency key", [&]() -> Result<std::optional<IdempotencyRec>> {
            PgResult q = exec(std::string(kIdempotencySelect) + " WHERE token_id = ? AND key = ?", token_id, key);
            if (PQntuples(q.get()) == 0) return std::optional<IdempotencyRec>{};
            return std::optional<IdempotencyRec>{idempotency_of(PgRow{q.get(), 0})};
        });
    }

    Result<void> apply(const Batch& b) override {
        if (b.empty()) return {};
        return guarded("write", [&]() -> Result<void> {
            Tx tx(*this);
            for (const RunRec& r : b.runs) write_run(r);
            for (const GoodputRowRec& g : b.goodput)
                exec(kGoodputAdd, g.run_id, g.machine_id, g.hour, g.category, g.held, g.gpu_s);
            for (const auto& [k, v] : b.meta) exec(kMetaUpsert, k, v);
            for (const IdempotencyRec& k : b.idempotency)
                exec(kIdempotencyInsert, k.token_id, k.key, k.body_sha256, k.run_id, k.status, k.reply, k.created_s);
            if (b.prune_idempotency_before)
                exec("DELETE FROM idempotency_keys WHERE created_s < ?", *b.prune_idempotency_before);
            if (b.alerts) {
                exec("DELETE FROM alerts");
                for (const AlertRec& a : *b.alerts) exec(kAlertUpsert, a.name, a.scope, a.target, a.state, a.since, a.value);
            }
            if (b.prune_before_hour) exec("DELETE FROM goodput_hourly WHERE hour < ?", *b.prune_before_hour);
            for (const auto& [id, up] : b.machine_up) exec("UPDATE machines SET up = ? WHERE id = ?", up, id);
            for (const auto& [id, drained] : b.machine_drained)
                exec("UPDATE machines SET drained = ? WHERE id = ?", drained, id);
            for (const auto& [id, t] : b.machine_heartbeat)
                exec("UPDATE machines SET last_heartbeat_s = ? WHERE id = ?", t, id);
            failpoint("store.apply.before_commit");
            tx.commit();
            failpoint("store.apply.after_commit");
            return {};
        });
    }

private:
    /// A transaction: BEGIN at construction, ROLLBACK at destruction unless committed.
    class Tx {
    public:
        explicit Tx(PgStore& s, const char* begin = "BEGIN") : s_(s) {
            s_.once_more_if_lost([&] { s_.exec_script(begin); return 0; });
            s_.in_tx_ = true;
            if (s_.fence_ > 0 && std::string_view(begin) == "BEGIN") s_.check_fence();
        }
        void commit() {
            s_.exec_script("COMMIT");
            done_ = true;
            s_.in_tx_ = false;
        }
        ~Tx() {
            if (!done_) PQclear(PQexec(s_.conn_.get(), "ROLLBACK"));
            s_.in_tx_ = false;
        }
        Tx(const Tx&) = delete;
        Tx& operator=(const Tx&) = delete;

    private:
        PgStore& s_;
        bool done_ = false;
    };

    void quiet() {
        // No NOTICE lines on the service's stderr (CREATE TABLE IF NOT EXISTS says "exists").
        PQsetNoticeProcessor(conn_.get(), [](void*, const char*) {}, nullptr);
    }

    /// A connection found broken is reset once (the prepared statements go with it).
    void reconnect_if_lost() {
        if (!conn_) throw std::runtime_error(kDeposed);
        if (PQstatus(conn_.get()) == CONNECTION_OK) return;
        PQreset(conn_.get());
        prepared_.clear();
        if (PQstatus(conn_.get()) != CONNECTION_OK)
            throw std::runtime_error("the connection to PostgreSQL is lost and cannot be made again: " +
                                     pq_message(PQerrorMessage(conn_.get())));
        quiet();
        if (serve_lock_ && !take_serve_lock()) {
            conn_.reset();  // never write beside another server: every later call fails
            throw std::runtime_error(kDeposed);
        }
    }

    static PgResult checked(PGresult* r, PGconn* c) {
        PgResult out(r);
        const ExecStatusType st = r == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(r);
        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
            throw std::runtime_error(pq_message(r != nullptr ? PQresultErrorMessage(r) : PQerrorMessage(c)));
        return out;
    }

    /// Runs `sql` (one or more statements, no parameters).
    void exec_script(const std::string& sql) { checked(PQexec(conn_.get(), sql.c_str()), conn_.get()); }

    /// Runs statement `sql` (SQLite's `?` parameters) with `args` as its parameters, prepared
    /// once per connection.
    /// Runs `f` (a read outside a transaction, or a BEGIN); when it failed because the
    /// connection was lost (a restarted database, a cut), connects again and runs it once more:
    /// it changed nothing the first time. Never inside a transaction (its first part is gone: the
    /// error goes up and the service retries the batch), nor for a write outside one (it may
    /// have committed before the connection broke).
    template <class F>
    auto once_more_if_lost(F&& f) -> decltype(f()) {
        if (!in_tx_) reconnect_if_lost();
        try {
            return f();
        } catch (const std::exception&) {
            if (in_tx_ || !conn_ || PQstatus(conn_.get()) == CONNECTION_OK) throw;
            reconnect_if_lost();
            return f();
        }
    }

    template <class... A>
    PgResult exec(const std::string& sql, const A&... args) {
        if (in_tx_) return exec_now(sql, args...);
        if (!sql.starts_with("SELECT")) {
            reconnect_if_lost();
            return exec_now(sql, args...);
        }
        return once_more_if_lost([&] { return exec_now(sql, args...); });
    }

    template <class... A>
    PgResult exec_now(const std::string& sql, const A&... args) {
        auto it = prepared_.find(sql);
        if (it == prepared_.end()) {
            std::string name = "s" + std::to_string(prepared_.size());
            checked(PQprepare(conn_.get(), name.c_str(), numbered_params(sql).c_str(), 0, nullptr), conn_.get());
            it = prepared_.emplace(sql, std::move(name)).first;
        }
        const std::vector<std::string> values{text(args)...};
        std::vector<const char*> ptrs;
        for (const std::string& v : values) ptrs.push_back(v.c_str());
        return checked(PQexecPrepared(conn_.get(), it->second.c_str(), static_cast<int>(ptrs.size()),
                                      ptrs.empty() ? nullptr : ptrs.data(), nullptr, nullptr, 0),
                       conn_.get());
    }

    /// In a write transaction: locks the lease row FOR SHARE (a take-over, which locks it FOR
    /// UPDATE, waits for this transaction) and throws "fenced: ..." when its generation is not ours.
    void check_fence() {
        PgResult q = exec_now("SELECT generation, holder FROM astraeus_leader_lease WHERE id = 1 FOR SHARE");
        const std::int64_t g = PQntuples(q.get()) == 1 ? PgRow{q.get(), 0}.i64(0) : -1;
        if (g != fence_)
            throw std::runtime_error("fenced: this replica led with lease generation " + std::to_string(fence_) +
                                     " but the lease is at generation " + std::to_string(g) +
                                     (PQntuples(q.get()) == 1 ? " (held by " + PgRow{q.get(), 0}.str(1) + ")" : "") +
                                     ": another replica took over, this one's writes are refused");
    }

    int current_version() {
        PgResult q = exec("SELECT version FROM schema_version");
        return PQntuples(q.get()) > 0 ? PgRow{q.get(), 0}.i32(0) : 0;
    }

    void write_run(const RunRec& r) {
        exec(kRunUpsert, r.id, r.workspace_id, r.pool_id, r.name, r.workers, r.gpus_per_worker, r.time_limit_s,
             r.sim_duration_s, r.command, r.image, r.state, r.reason, r.stop_cause, r.submitted_s, r.started_s,
             r.ended_s, r.phase_since_s, r.executed_s, r.lease_start_s, r.lease_end_s, r.attempts);
        for (const WorkerRec& k : r.worker_list)
            exec(kWorkerUpsert, r.id, k.index, k.phase, k.cause, k.attempt, k.parts, k.level, k.counted_s,
                 k.decided_s, k.pending);
        for (const AttemptRec& k : r.attempt_list) exec(kAttemptUpsert, r.id, k.number, k.started_s, k.ended_s, k.outcome);
    }

    std::string conninfo_;
    std::unique_ptr<PGconn, ConnFree> conn_;
    std::map<std::string, std::string> prepared_;  ///< statement text -> prepared name
    bool in_tx_ = false;
    bool serve_lock_ = false;  ///< holds (and must hold) the one-server lock
    std::int64_t fence_ = 0;   ///< the lease generation writes are fenced with (0: none)
};

}  // namespace

Result<std::unique_ptr<Store>> open_postgresql(const std::string& conninfo, bool serve_lock) {
    // The conninfo is expanded from "dbname"; a connection that cannot be made in 10 s fails
    // (unless the conninfo sets its own connect_timeout).
    auto connected = connect_postgresql(conninfo, "astraeus");
    if (!connected) return std::unexpected(connected.error());
    PGconn* c = *connected;
    auto s = std::make_unique<PgStore>(c, conninfo);
    try {
        // A server killed a moment ago still holds the lock until PostgreSQL sees its
        // connection closed (milliseconds): ask for up to 5 s before refusing.
        bool got = !serve_lock;
        for (int i = 0; i < 50 && !got; ++i) {
            if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
            got = s->take_serve_lock();
        }
        if (!got)
            return fail("another `astraeus serve` is using this database (one server per database: "
                        "docs/operations.md, \"PostgreSQL\")");
    } catch (const std::exception& e) {
        return fail(std::string("cannot take the server lock: ") + e.what());
    }
    if (auto ok = s->migrate(); !ok) return std::unexpected(ok.error());
    return std::unique_ptr<Store>(std::move(s));
}

Result<std::unique_ptr<Store>> open_postgresql_read_only(const std::string& conninfo) {
    auto connected = connect_postgresql(conninfo, "astraeus-follower", /*read_only=*/true);
    if (!connected) return std::unexpected(connected.error());
    auto s = std::make_unique<PgStore>(*connected, conninfo);
    const int have = s->schema_version();
    const int latest = static_cast<int>(migrations().size());
    if (have != latest)
        return fail("the database's schema version is " + std::to_string(have) + ", this program's " +
                    std::to_string(latest) + " (the leader migrates it)");
    return std::unique_ptr<Store>(std::move(s));
}

}  // namespace astraeus::store
