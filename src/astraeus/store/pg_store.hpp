// The PostgreSQL store (libpq): the service's store in a PostgreSQL database, selected in the
// configuration with `"store": {"postgresql": "host=... port=... dbname=..."}` (docs/operations.md
// "PostgreSQL"). The same schema migrations as the SQLite store (store/sql_text.hpp, translated to
// PostgreSQL's types), the same transaction boundaries (a Batch is one transaction, committed
// with synchronous_commit on: durable when apply() returns) and the same errors.
#pragma once
#include <memory>
#include <string>

#include "astraeus/store/store.hpp"

namespace astraeus::store {

/// Connects to the PostgreSQL database `conninfo` (a libpq connection string or URI) and
/// creates or migrates its schema (serialised between processes by an advisory lock, so two
/// servers starting at once migrate once). An error when the server cannot be reached, refuses
/// the login, or holds a schema newer than this program's (the message is libpq's, which names
/// the host and port; the conninfo itself is not repeated: it may hold a password).
/// A lost connection is re-established at the next call (the call in progress fails).
Result<std::unique_ptr<Store>> open_postgresql(const std::string& conninfo);

}  // namespace astraeus::store
