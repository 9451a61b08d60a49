// RFC 3339 instants for the goodput API and CLI: "2026-10-01T00:00:00Z" and offsets
// ("2026-10-01T02:00:00+02:00"), fractional seconds dropped; ISO week labels ("2026-W40").
// Thread safety: pure functions.
#pragma once
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"

namespace astraeus::goodput {

/// Unix seconds of an RFC 3339 date-time; an error quoting the text otherwise.
Result<Seconds> parse_rfc3339(std::string_view text);
/// "YYYY-MM-DDTHH:MM:SSZ" of Unix seconds t.
std::string format_rfc3339(Seconds t);
/// ISO 8601 week label of the week containing t: "2026-W40".
std::string iso_week_label(Seconds t);

}  // namespace astraeus::goodput
