// Fuzz target of the goodput event log (goodput_io/event_log.hpp): the input is a whole log,
// replayed as `astraeus goodput replay` does (every line parsed, checked and applied, then the
// count finished with its alerts).
#include <cstdint>
#include <sstream>
#include <string>

#include "astraeus/goodput_io/event_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    astraeus::goodput::Replayer replayer;
    (void)astraeus::goodput::replay_stream(in, "fuzz.jsonl", replayer);
    return 0;
}
