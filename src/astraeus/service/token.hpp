// API tokens (spec/goodput.md "Who sees what"; service contract): `astx_` + 43 base64url
// characters (32 random bytes from OpenSSL's RAND_bytes), shown once, stored as the SHA-256 hex
// of the whole token. The only place that uses OpenSSL. Thread safety: thread-safe.
#pragma once
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"

namespace astraeus::service {

/// A new random token (`prefix` + 43 base64url characters: 32 random bytes; "astx_..." for API
/// tokens); an error if the random generator fails.
Result<std::string> new_token(std::string_view prefix = "astx_");
/// Lower-case hex SHA-256 of `text` (64 characters).
std::string sha256_hex(std::string_view text);

}  // namespace astraeus::service
