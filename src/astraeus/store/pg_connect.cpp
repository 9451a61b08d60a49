#include "astraeus/store/pg_connect.hpp"

#include <string_view>

namespace astraeus::store {

std::string pq_message(const char* m) {
    std::string s = m == nullptr ? "" : m;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

Result<PGconn*> connect_postgresql(const std::string& conninfo, const char* application, bool read_only) {
    // `options` after `dbname` overrides the conninfo's own: keep those, add ours.
    std::string options;
    if (read_only) {
        if (PQconninfoOption* parsed = PQconninfoParse(conninfo.c_str(), nullptr)) {
            for (PQconninfoOption* o = parsed; o->keyword != nullptr; ++o)
                if (std::string_view(o->keyword) == "options" && o->val != nullptr) options = o->val;
            PQconninfoFree(parsed);
        }
        options += (options.empty() ? "" : " ") + std::string("-c default_transaction_read_only=on");
    }
    const char* const keys[] = {"connect_timeout", "fallback_application_name", "dbname", read_only ? "options" : nullptr,
                                nullptr};
    const char* const values[] = {"10", application, conninfo.c_str(), read_only ? options.c_str() : nullptr, nullptr};
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
