// Fuzz target of RFC 3339 times (goodput_io/rfc3339.hpp): parse; an accepted time formats back
// to a string that parses to the same second (round trip), and has an ISO week label.
#include <cstdint>
#include <string_view>

#include "astraeus/goodput_io/rfc3339.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto t = astraeus::goodput::parse_rfc3339(text);
    if (!t) return 0;
    const std::string back = astraeus::goodput::format_rfc3339(*t);
    auto again = astraeus::goodput::parse_rfc3339(back);
    if (!again || *again != *t) __builtin_trap();
    (void)astraeus::goodput::iso_week_label(*t);
    return 0;
}
