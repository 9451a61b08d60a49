// Fuzz target of --cluster values (config/cluster_config.hpp): the input is tried as the value
// itself ("MxG", a preset name) and as a machine-list CSV file.
#include <cstdint>
#include <string>

#include "astraeus/config/cluster_config.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string value(reinterpret_cast<const char*>(data), size);
    // Only as a value when it cannot name a file (no '/' and not a preset that reads data/).
    if (value.find('/') == std::string::npos && value != "philly") (void)astraeus::resolve_cluster(value);
    const std::string path = astraeus::fuzz::write_input(data, size, ".csv");
    (void)astraeus::resolve_cluster(path);
    return 0;
}
