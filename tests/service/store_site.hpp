// A place for a store in the tests, on either implementation: a temporary data directory
// (SQLite) or a fresh database on the PostgreSQL of ASTRAEUS_TEST_PG (a libpq connection string
// of a superuser, e.g. from scripts/postgres-test-server.sh), created at construction and
// dropped at destruction. open() may be called again (a restart on the same state).
// Store tests are parameterised on Backend; PostgreSQL ones skip when ASTRAEUS_TEST_PG is unset.
#pragma once
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "astraeus/store/pg_store.hpp"
#include "astraeus/store/store.hpp"

namespace astraeus::store_test {

enum class Backend { Sqlite, Postgres };

inline std::string backend_name(Backend b) { return b == Backend::Sqlite ? "Sqlite" : "Postgres"; }

/// ASTRAEUS_TEST_PG, or "" when unset.
inline std::string test_pg() {
    const char* v = std::getenv("ASTRAEUS_TEST_PG");
    return v == nullptr ? std::string() : std::string(v);
}

/// Runs one SQL command on the server of `conninfo`; "" or libpq's error.
inline std::string pg_command(const std::string& conninfo, const std::string& sql) {
    PGconn* c = PQconnectdb(conninfo.c_str());
    std::string err;
    if (PQstatus(c) != CONNECTION_OK) {
        err = PQerrorMessage(c);
    } else {
        PGresult* r = PQexec(c, sql.c_str());
        if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) err = PQresultErrorMessage(r);
        PQclear(r);
    }
    PQfinish(c);
    return err;
}

struct StoreSite {
    Backend backend;
    std::filesystem::path dir;  ///< SQLite: the data directory
    std::string conninfo;       ///< PostgreSQL: the test database's connection string
    std::string dbname;
    std::string error;          ///< why the site could not be made ("" when it was)

    explicit StoreSite(Backend b) : backend(b) {
        static std::atomic<int> serial{0};
        const std::string tag = std::to_string(::getpid()) + "_" + std::to_string(serial++);
        if (b == Backend::Sqlite) {
            dir = std::filesystem::temp_directory_path() / ("astraeus-store-" + tag);
            std::filesystem::remove_all(dir);
            return;
        }
        dbname = "astraeus_test_" + tag;
        error = pg_command(test_pg(), "CREATE DATABASE " + dbname);
        conninfo = test_pg() + " dbname=" + dbname;  // the later dbname wins
    }
    ~StoreSite() {
        if (backend == Backend::Sqlite) std::filesystem::remove_all(dir);
        else if (error.empty()) (void)pg_command(test_pg(), "DROP DATABASE IF EXISTS " + dbname + " WITH (FORCE)");
    }
    StoreSite(const StoreSite&) = delete;
    StoreSite& operator=(const StoreSite&) = delete;

    Result<std::unique_ptr<store::Store>> open() const {
        if (backend == Backend::Sqlite) return store::open_sqlite(dir.string());
        return store::open_postgresql(conninfo);
    }
};

}  // namespace astraeus::store_test

/// In a TEST_P on Backend: skips a PostgreSQL case without ASTRAEUS_TEST_PG, fails when its
/// database cannot be created.
#define ASTRAEUS_STORE_SITE(site)                                                                         \
    if (GetParam() == ::astraeus::store_test::Backend::Postgres && ::astraeus::store_test::test_pg().empty())   \
        GTEST_SKIP() << "ASTRAEUS_TEST_PG is not set (scripts/postgres-test-server.sh start prints it)"; \
    ::astraeus::store_test::StoreSite site(GetParam());                                                      \
    ASSERT_EQ(site.error, "") << "cannot create the test database"
