// Fuzz target of query parameters: the input is a query string, split and percent-decoded by
// api::parse_target as the server does, then given to the parsers of GET /v1/runs, /v1/goodput and
// /v1/goodput/weekly (service/request_parse.hpp).
#include <cstdint>
#include <string>

#include "astraeus/api/http_request.hpp"
#include "astraeus/service/request_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string query(reinterpret_cast<const char*>(data), size);
    auto target = astraeus::api::parse_target("/v1/runs?" + query);
    if (!target) __builtin_trap();  // a path with any query is a valid target
    astraeus::service::Params q;
    for (const auto& [k, v] : target->query) q[k] = v;
    (void)astraeus::service::check_runs_query(q);
    const astraeus::Seconds now = 1'790'000'000;  // 2026-09
    auto w = astraeus::service::parse_goodput_window(q, now);
    // An accepted period is ordered and at most 400 days long (an empty one is valid).
    if (w && !(w->start <= w->end && w->end - w->start <= 400 * 86400)) __builtin_trap();
    auto wk = astraeus::service::parse_weekly_query(q);
    if (wk && (wk->weeks < 0 || wk->weeks > 56)) __builtin_trap();
    return 0;
}
