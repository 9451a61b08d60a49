// Fuzz target of the service configuration (service/config.hpp, `astraeus serve --config`).
#include <cstdint>
#include <string>

#include "astraeus/service/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)astraeus::service::parse_config(text, "fuzz.json");
    return 0;
}
