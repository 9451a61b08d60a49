// One PostgreSQL connection made the one way (the store's and the leader lease's): the conninfo
// expanded from "dbname", connect_timeout 10 s unless the conninfo sets its own, libpq's errors
// without their trailing newline.
#pragma once
#include <libpq-fe.h>

#include <string>

#include "astraeus/base/error.hpp"

namespace astraeus::store {

/// libpq's message without its trailing newline and spaces ("" for null).
std::string pq_message(const char* m);

/// A connection to `conninfo` named `application` (PostgreSQL's fallback_application_name), owned
/// by the caller (PQfinish). Errors: "cannot connect to PostgreSQL: <libpq's words>".
/// `read_only`: the session's transactions are read-only (PostgreSQL's
/// default_transaction_read_only, set at connection time, so also after a PQreset): the server
/// refuses any write ("cannot execute ... in a read-only transaction").
Result<PGconn*> connect_postgresql(const std::string& conninfo, const char* application, bool read_only = false);

}  // namespace astraeus::store
