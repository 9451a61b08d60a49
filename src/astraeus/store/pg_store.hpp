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
/// A lost connection is made again: at once for a read or a transaction's BEGIN (sent again:
/// it changed nothing), at the next call after a write cut in the middle (that call fails;
/// a transaction cut is not written, and the service retries its batch).
/// `serve_lock`: also hold, for the connection's life, the database's "one server" advisory lock
/// (`astraeus serve` takes it; `admin` does not): an error when another server holds it. PostgreSQL
/// releases it when the holder's connection ends (a killed server's within moments: asked for
/// up to 5 s before refusing). After a reconnect the lock is taken again; if another server
/// took it meanwhile, every call fails (restart this one).
Result<std::unique_ptr<Store>> open_postgresql(const std::string& conninfo, bool serve_lock = false);

/// Connects to `conninfo` for reading only (a follower replica's snapshots): a session whose
/// transactions are read-only (PostgreSQL refuses every write on it, whatever the program asks),
/// no lock, no migration. An error when the server cannot be reached or the database's schema
/// is not this program's version (the leader migrates it; a follower tries again later).
Result<std::unique_ptr<Store>> open_postgresql_read_only(const std::string& conninfo);

}  // namespace astraeus::store
