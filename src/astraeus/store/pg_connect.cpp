#include "astraeus/store/pg_connect.hpp"

namespace astraeus::store {

std::string pq_message(const char* m) {
    std::string s = m == nullptr ? "" : m;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

Result<PGconn*> connect_postgresql(const std::string& conninfo, const char* application) {
    const char* const keys[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
    const char* const values[] = {"10", application, conninfo.c_str(), nullptr};
    PGconn* c = PQconnectdbParams(keys, values, 1);
    if (c == nullptr) return fail("cannot connect to PostgreSQL: out of memory");
    if (PQstatus(c) != CONNECTION_OK) {
        std::string m = pq_message(PQerrorMessage(c));
        PQfinish(c);
        return fail("cannot connect to PostgreSQL: " + m);
    }
    return c;
}

}  // namespace astraeus::store
