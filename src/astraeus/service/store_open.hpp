// The store a service configuration names (`"store"` in config.hpp): SQLite in its data
// directory (the default) or a PostgreSQL database. Used by `astraeus serve` and `astraeus admin`.
#pragma once
#include <memory>
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/store/store.hpp"

namespace astraeus::service {

/// True when the configuration keeps its state in PostgreSQL (`store.postgresql` set).
bool uses_postgresql(const ServiceConfig& c);

/// Opens (creating and migrating) the store `c` names: PostgreSQL at `c.store_postgresql`, else
/// SQLite in `c.data_dir`. `config_path` names the configuration file in errors: a PostgreSQL
/// that cannot be reached fails with "<config_path>: store.postgresql: cannot connect to
/// PostgreSQL: <libpq's reason>". `serve`: take the database's one-server lock (store/pg_store.hpp;
/// an error while another server holds it). `astraeus serve` no longer does: replicas share a
/// database under the leader lease (service/leadership.hpp).
Result<std::unique_ptr<store::Store>> open_configured_store(const ServiceConfig& c, const std::string& config_path,
                                                            bool serve = false);

}  // namespace astraeus::service
