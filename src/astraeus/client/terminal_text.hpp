// Server-supplied text made safe for a terminal (issue 14): `astra` prints names, commands,
// images and messages that any workspace can set, and an escape sequence in them must not reach
// another user's terminal. Thread safety: a pure function.
#pragma once
#include <string>
#include <string_view>

namespace astraeus::client {

/// `s` with every control character escaped: C0 (U+0000..U+001F, newline and tab included),
/// DEL and C1 (U+0080..U+009F) as \xNN (\n, \t, \r, \e for the common ones) and bytes that
/// are not UTF-8 as \xNN; backslashes stay as they are. Printable UTF-8 is kept.
std::string terminal_safe(std::string_view s);

}  // namespace astraeus::client
