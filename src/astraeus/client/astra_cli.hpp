// `astra`: the client command line of the Astraeus service (docs/api.md; the contract in
// spec/goodput.md "CLI"): `astra astraeus goodput ...` and `astra runs submit|list|show|stop`.
// Thread safety: run_astra builds its own state per call; calls are independent.
#pragma once
#include <iosfwd>

namespace astraeus::client {

/// Runs one `astra` command line: parses argv, calls the API named by `api_env`
/// (ASTRALYX_API) with the token `token_env` (ASTRALYX_TOKEN) (nullptr when unset), prints the
/// result on `out` and errors on `err`. Returns the exit code: 0 ok, 2 usage, configuration or
/// a 4xx answer (the server's "error" printed), 1 cannot connect, 5xx or an unreadable answer.
int run_astra(int argc, const char* const* argv, const char* api_env, const char* token_env,
              std::ostream& out, std::ostream& err);

}  // namespace astraeus::client
