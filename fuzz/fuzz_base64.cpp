// Fuzz target of base64 (base/base64.hpp), which decodes the agents' log chunks. Properties:
// any bytes encode and decode back to themselves; text that decodes encodes back to the same
// bytes' canonical form, which decodes to the same bytes.
#include <cstdint>
#include <string>
#include <string_view>

#include "astraeus/base/base64.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    const std::string enc = astraeus::base64_encode(in);
    auto back = astraeus::base64_decode(enc);
    if (!back || *back != in) __builtin_trap();  // a round trip of any bytes
    if (enc.size() != (size + 2) / 3 * 4) __builtin_trap();
    auto dec = astraeus::base64_decode(in);
    if (dec) {
        auto again = astraeus::base64_decode(astraeus::base64_encode(*dec));
        if (!again || *again != *dec) __builtin_trap();
        if (dec->size() > size) __builtin_trap();  // decoding never grows
    }
    return 0;
}
