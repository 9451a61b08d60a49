// Untrusted text made safe for a terminal (issue 14): `astra` prints names, commands, images and
// messages that any workspace can set, and `astraeus goodput replay`/`import-slurm` print run and
// workspace names from a log; an escape sequence in them must not reach the reader's terminal.
// In base/ so that the client and the command line both use it. Thread safety: pure functions.
#pragma once
#include <string>
#include <string_view>

namespace astraeus {

/// `s` with every control character escaped: C0 (U+0000..U+001F, newline and tab included),
/// DEL and C1 (U+0080..U+009F) as \xNN (\n, \t, \r, \e for the common ones) and bytes that
/// are not UTF-8 as \xNN; backslashes stay as they are. Printable UTF-8 is kept.
std::string terminal_safe(std::string_view s);

/// Whether `s` is well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code points
/// above U+10FFFF): what nlohmann::json needs to serialise a string without throwing.
bool utf8_valid(std::string_view s);

}  // namespace astraeus
