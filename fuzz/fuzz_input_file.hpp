// For fuzz targets of readers that take a path: writes the input to a file of this process
// (under /dev/shm when it exists, else /tmp) with a given suffix and returns its path; the file
// is reused (overwritten) input after input and removed when the process exits normally (libFuzzer
// ends a -max_total_time run with exit(0)). Thread safety: one fuzzing thread.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

namespace astraeus::fuzz {

/// The paths written, removed at exit (static destruction).
struct InputFiles {
    std::set<std::string> paths;
    ~InputFiles() {
        for (const auto& p : paths) std::remove(p.c_str());
    }
};

inline std::string write_input(const std::uint8_t* data, std::size_t size, const std::string& suffix) {
    static const std::string dir = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    static InputFiles written;
    const std::string path = dir + "/astraeus-fuzz-" + std::to_string(::getpid()) + suffix;
    written.paths.insert(path);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) __builtin_trap();  // the harness cannot work: stop, do not mask it
    if (size > 0 && std::fwrite(data, 1, size, f) != size) __builtin_trap();
    std::fclose(f);
    return path;
}

}  // namespace astraeus::fuzz
