// The service URL of `astraeus agent --api` (docs/agents.md "Putting agents on machines"): the
// server's origin, given either bare (http://scheduler:8080) or with the API's base path /v1, as
// `astra`'s ASTRALYX_API is (http://scheduler:8080/v1). The agent's requests name their full
// paths (/v1/agent/...), so /v1 is dropped here.
// Thread safety: a pure function.
#pragma once
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"

namespace astraeus::client {

/// "http[s]://HOST[:PORT]" from "http[s]://HOST[:PORT]" with an optional "/", "/v1" or "/v1/"
/// after it (HOST a name, an IPv4 address or a bracketed IPv6 one; PORT 1..65535). Any other
/// form (another scheme or path, user info, a query, an empty host, a bad port) is an error
/// naming the value and the expected form.
Result<std::string> parse_agent_api_url(std::string_view url);

}  // namespace astraeus::client
