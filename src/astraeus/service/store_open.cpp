#include "astraeus/service/store_open.hpp"

#include "astraeus/store/pg_store.hpp"

namespace astraeus::service {

bool uses_postgresql(const ServiceConfig& c) { return !c.store_postgresql.empty(); }

Result<std::unique_ptr<store::Store>> open_configured_store(const ServiceConfig& c, const std::string& config_path,
                                                            bool serve) {
    if (!uses_postgresql(c)) return store::open_sqlite(c.data_dir);
    auto st = store::open_postgresql(c.store_postgresql, serve);
    if (!st) return fail((config_path.empty() ? std::string("config") : config_path) + ": store.postgresql: " + st.error().message);
    return st;
}

}  // namespace astraeus::service
