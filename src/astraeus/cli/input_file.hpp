// Opening a command's input file (an event log, sacct output): a directory or an unreadable path
// is a clear error, and a gzip-compressed file is read decompressed (as the trace readers do).
// Thread safety: no shared state.
#pragma once
#include <istream>
#include <memory>
#include <string>

#include "astraeus/base/error.hpp"

namespace astraeus::cli {

/// A stream over `path`'s text: the file itself, or its decompressed content when it starts
/// with the gzip magic bytes (1f 8b; read whole into memory). Errors: "PATH: is a directory
/// (expected a file)", "PATH: cannot open (REASON)", and gzip errors (corrupt, truncated).
Result<std::unique_ptr<std::istream>> open_input_file(const std::string& path);

/// Refuses an output that is the command's input by any path (writing it would replace the
/// input). `input` "" or "-" (stdin) is no file. Error: "FLAG OUT is the input INPUT; write to
/// another file (it would replace the input)".
Result<void> not_the_input(const std::string& flag, const std::string& out, const std::string& input);

}  // namespace astraeus::cli
