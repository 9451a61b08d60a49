// Fuzz target of one trace reader (ASTRAEUS_FUZZ_FORMAT: reference, philly-joblog, helios,
// rfold, native): the input is the trace file's bytes (gzip is read transparently); format
// detection runs on it too. A reader may refuse the input (an error value), never crash, hang
// or leak.
#include <cstdint>
#include <string>

#include "astraeus/trace/read_trace.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string format = ASTRAEUS_FUZZ_FORMAT;
    const std::string path =
        astraeus::fuzz::write_input(data, size, format == "philly-joblog" ? ".json" : ".csv");
    (void)astraeus::detect_trace_format(path);
    astraeus::SkipCounts skips;
    auto w = astraeus::read_trace(path, format, &skips);
    if (format == "rfold") (void)astraeus::read_trace(path, "rfold-philly", &skips);
    (void)w;
    return 0;
}
