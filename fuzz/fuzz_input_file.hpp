// For fuzz targets of readers that take a path: writes the input to a file of this process
// (under /dev/shm when it exists, else /tmp) with a given suffix and returns its path; the file
// is reused (overwritten) input after input. Thread safety: one fuzzing thread.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace astraeus::fuzz {

inline std::string write_input(const std::uint8_t* data, std::size_t size, const std::string& suffix) {
    static const std::string dir = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    const std::string path = dir + "/astraeus-fuzz-" + std::to_string(::getpid()) + suffix;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) __builtin_trap();  // the harness cannot work: stop, do not mask it
    if (size > 0 && std::fwrite(data, 1, size, f) != size) __builtin_trap();
    std::fclose(f);
    return path;
}

}  // namespace astraeus::fuzz
