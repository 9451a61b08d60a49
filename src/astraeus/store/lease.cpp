// The leader lease (store/lease.hpp) on libpq, on its own connection. The row is locked FOR
// UPDATE for each step, so two replicas' steps are serialised by PostgreSQL and the pg_store's
// fenced writes (which lock it FOR SHARE) never commit across a take-over.
#include "astraeus/store/lease.hpp"
#include "astraeus/store/pg_connect.hpp"

#include <libpq-fe.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace astraeus::store {
namespace {

constexpr const char* kCreate =
    "BEGIN; SELECT pg_advisory_xact_lock(4702924307018942804);"  // two replicas starting at once
    "CREATE TABLE IF NOT EXISTS astraeus_leader_lease ("
    " id INTEGER PRIMARY KEY CHECK (id = 1),"
    " holder TEXT NOT NULL DEFAULT '',"
    " address TEXT NOT NULL DEFAULT '',"
    " generation BIGINT NOT NULL DEFAULT 0,"
    " renewed_at TIMESTAMPTZ NOT NULL DEFAULT 'epoch',"
    " duration_s DOUBLE PRECISION NOT NULL DEFAULT 0);"
    "INSERT INTO astraeus_leader_lease (id) VALUES (1) ON CONFLICT (id) DO NOTHING; COMMIT";


struct ResFree {
    void operator()(PGresult* r) const { PQclear(r); }
};
using Res = std::unique_ptr<PGresult, ResFree>;
struct ConnFree {
    void operator()(PGconn* c) const { PQfinish(c); }
};

class PgLease final : public LeaderLease {
public:
    PgLease(PGconn* c, std::string conninfo, std::string replica, std::string address, double duration_s,
            bool id_is_exclusive)
        : conn_(c), conninfo_(std::move(conninfo)), replica_(std::move(replica)), address_(std::move(address)),
          duration_s_(duration_s), exclusive_(id_is_exclusive) {}

    Result<LeaseView> acquire_or_renew() override { return step(true); }
    Result<LeaseView> renew() override { return step(false); }

    Result<LeaseView> read() override {
        try {
            reconnect_if_lost();
            return view_of(run("SELECT holder, address, generation, EXTRACT(EPOCH FROM clock_timestamp() - renewed_at) "
                               "FROM astraeus_leader_lease WHERE id = 1", {}));
        } catch (const std::exception& e) {
            return fail(std::string("leader lease: ") + e.what());
        }
    }

    void release() override {
        if (generation_ == 0) return;
        try {
            reconnect_if_lost();
            run("UPDATE astraeus_leader_lease SET renewed_at = 'epoch' WHERE id = 1 AND holder = $1 AND generation = $2",
                {replica_, std::to_string(generation_)});
        } catch (const std::exception&) {
        }
    }

    std::int64_t generation() const override { return generation_; }
    const std::string& replica() const override { return replica_; }

    void create() { run(kCreate, {}); }

private:
    Result<LeaseView> step(bool may_take) {
        try {
            reconnect_if_lost();
            run("BEGIN", {});
            struct Rollback {
                PgLease& l;
                bool done = false;
                ~Rollback() {
                    if (!done) PQclear(PQexec(l.conn_.get(), "ROLLBACK"));
                }
            } rb{*this};
            LeaseView v = view_of(run("SELECT holder, address, generation, "
                                      "EXTRACT(EPOCH FROM clock_timestamp() - renewed_at), duration_s "
                                      "FROM astraeus_leader_lease WHERE id = 1 FOR UPDATE",
                                      {}));
            const bool ours = generation_ > 0 && v.holder == replica_ && v.generation == generation_;
            const bool expired = v.holder.empty() || v.age_s > holder_duration_ || (exclusive_ && v.holder == replica_);
            if (ours) {
                run("UPDATE astraeus_leader_lease SET renewed_at = clock_timestamp(), duration_s = $1, address = $2 "
                    "WHERE id = 1",
                    {std::to_string(duration_s_), address_});
                v.held = true;
                v.age_s = 0;
            } else if (may_take && expired) {
                Res r = run("UPDATE astraeus_leader_lease SET holder = $1, address = $2, generation = generation + 1, "
                            "renewed_at = clock_timestamp(), duration_s = $3 WHERE id = 1 RETURNING generation",
                            {replica_, address_, std::to_string(duration_s_)});
                generation_ = std::strtoll(PQgetvalue(r.get(), 0, 0), nullptr, 10);
                v = LeaseView{true, replica_, address_, generation_, 0, true};
            }
            run("COMMIT", {});
            rb.done = true;
            return v;
        } catch (const std::exception& e) {
            return fail(std::string("leader lease: ") + e.what());
        }
    }

    LeaseView view_of(const Res& r) {
        if (PQntuples(r.get()) != 1) throw std::runtime_error("the lease row is missing");
        LeaseView v;
        v.holder = PQgetvalue(r.get(), 0, 0);
        v.holder_address = PQgetvalue(r.get(), 0, 1);
        v.generation = std::strtoll(PQgetvalue(r.get(), 0, 2), nullptr, 10);
        v.age_s = std::strtod(PQgetvalue(r.get(), 0, 3), nullptr);
        if (PQnfields(r.get()) > 4) holder_duration_ = std::strtod(PQgetvalue(r.get(), 0, 4), nullptr);
        v.held = generation_ > 0 && v.holder == replica_ && v.generation == generation_ && v.age_s <= duration_s_;
        return v;
    }

    Res run(const char* sql, const std::vector<std::string>& params) {
        std::vector<const char*> p;
        for (const auto& s : params) p.push_back(s.c_str());
        Res r(params.empty() ? PQexec(conn_.get(), sql)
                             : PQexecParams(conn_.get(), sql, static_cast<int>(p.size()), nullptr, p.data(), nullptr,
                                            nullptr, 0));
        const ExecStatusType st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
            throw std::runtime_error(pq_message(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_.get())));
        return r;
    }

    void reconnect_if_lost() {
        if (PQstatus(conn_.get()) == CONNECTION_OK) return;
        PQreset(conn_.get());
        if (PQstatus(conn_.get()) != CONNECTION_OK)
            throw std::runtime_error("cannot connect to PostgreSQL: " + pq_message(PQerrorMessage(conn_.get())));
    }

    std::unique_ptr<PGconn, ConnFree> conn_;
    std::string conninfo_, replica_, address_;
    double duration_s_;
    bool exclusive_;
    double holder_duration_ = 0;  ///< the current holder's promised duration (from its row)
    std::int64_t generation_ = 0;
};

}  // namespace

std::string default_replica_id(const std::string& data_dir) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    std::error_code ec;
    auto abs = std::filesystem::absolute(data_dir, ec);
    return std::string(host) + ":" + (ec ? data_dir : abs.lexically_normal().string());
}

Result<std::unique_ptr<LeaderLease>> LeaderLease::open(const std::string& conninfo, std::string replica,
                                                        std::string address, double duration_s,
                                                        bool id_is_exclusive) {
    if (replica.empty()) return fail("leader lease: the replica id is empty");
    if (!(duration_s > 0)) return fail("leader lease: lease_duration_s must be > 0");
    auto connected = connect_postgresql(conninfo, "astraeus-lease");
    if (!connected) return std::unexpected(connected.error());
    PGconn* c = *connected;
    PQclear(PQexec(c, "SET client_min_messages = warning"));
    auto l = std::make_unique<PgLease>(c, conninfo, std::move(replica), std::move(address), duration_s,
                                       id_is_exclusive);
    try {
        l->create();
    } catch (const std::exception& e) {
        return fail(std::string("leader lease: cannot create its table: ") + e.what());
    }
    return std::unique_ptr<LeaderLease>(std::move(l));
}

}  // namespace astraeus::store
