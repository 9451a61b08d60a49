// Base64 (RFC 4648 section 4, the standard alphabet with '=' padding): arbitrary bytes inside JSON
// strings (the node agents ship workers' log bytes this way, docs/agents.md "Logs").
// Thread safety: pure functions.
#pragma once
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"

namespace astraeus {

/// `bytes` in base64, padded: 4 characters per 3 bytes, rounded up.
std::string base64_encode(std::string_view bytes);
/// The bytes of padded base64 `text`; an error naming the first offending character position
/// when it is not base64 (length not a multiple of 4, a character outside the alphabet, padding
/// anywhere but at the end).
Result<std::string> base64_decode(std::string_view text);

}  // namespace astraeus
