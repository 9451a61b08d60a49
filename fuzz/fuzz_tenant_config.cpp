// Fuzz target of the tenants file reader (config/tenant_config.hpp): the first byte picks the
// form (even: JSON {"tenants": [...]}, odd: CSV name,share with no names list); the rest is
// the file.
#include <cstdint>
#include <string>

#include "astraeus/config/tenant_config.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const bool json = data[0] % 2 == 0;
    const std::string path = astraeus::fuzz::write_input(data + 1, size - 1, json ? ".json" : ".csv");
    (void)astraeus::read_tenant_config(path, "");
    return 0;
}
