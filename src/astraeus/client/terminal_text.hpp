// The client's name for base/terminal_text.hpp (terminal_safe, utf8_valid), kept so that the
// client's files and tests read as before. Thread safety: pure functions.
#pragma once
#include "astraeus/base/terminal_text.hpp"

namespace astraeus::client {
using astraeus::terminal_safe;
using astraeus::utf8_valid;
}  // namespace astraeus::client
