// Fuzz target of GET /v1/runs/{run}/logs's parameters (service/request_parse.hpp
// parse_logs_query) and of GET /v1/runs's (parse_runs_query): the first two bytes are the run's
// workers (1..256) and attempts (1..256), the rest a query string split and percent-decoded by
// cpp-httplib as the server does. Properties of accepted parameters: each within its range.
#include <httplib.h>

#include <cstdint>
#include <string>

#include "astraeus/service/request_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const int workers = 1 + data[0];
    const int attempts = 1 + data[1];
    const std::string query(reinterpret_cast<const char*>(data + 2), size - 2);
    httplib::Params multi;
    httplib::detail::parse_query_text(query, multi);
    astraeus::service::Params q;
    for (const auto& [k, v] : multi) q[k] = v;
    auto l = astraeus::service::parse_logs_query(q, workers, attempts);
    if (l && (l->worker < 0 || l->worker >= workers || l->attempt < 1 || l->attempt > attempts || l->offset < 0 ||
              l->offset > (std::int64_t{1} << 40) || l->limit < 1 || l->limit > (4 << 20)))
        __builtin_trap();
    auto r = astraeus::service::parse_runs_query(q);
    if (r && (r->limit < 1 || r->limit > astraeus::service::kMaxRunsPage || r->name.size() > 63)) __builtin_trap();
    if (r && r->has_cursor &&
        astraeus::service::parse_runs_query({{"cursor", astraeus::service::runs_cursor(r->cursor_submitted_s, r->cursor_id)}})
                ->cursor_id != r->cursor_id)
        __builtin_trap();  // a cursor reads back as written
    return 0;
}
