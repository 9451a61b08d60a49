// The service's copy of a worker's log shipped by a node agent (docs/agents.md "Logs"): the
// agent sends the bytes of its log file in order, each chunk with the offset of its first byte in
// that file; the service appends them to its own file (the local executor's layout, so that
// GET /runs/{run}/logs reads it the same way). The service's file is always a prefix of the
// agent's file, so its size is the only state: a chunk that overlaps what the file has (a
// request re-sent after a lost answer, or after a kill -9 of the service in mid-write) is
// appended from the first byte the file lacks; a chunk past the end (the file lost bytes) is
// refused with the size the agent must resume from. Nothing is lost, nothing is duplicated.
// The size cap is the local executor's (`local.log_cap_bytes`): the first `cap` bytes are kept,
// then the note `\n[astraeus: log capped at N bytes; later output dropped]\n` (the worker
// runner's), and nothing after it.
// Thread safety: none; the caller serialises the calls for one file.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"

namespace astraeus::service {

/// What the service holds of one shipped log.
struct ShippedLog {
    std::uint64_t have = 0;  ///< bytes of the agent's file received (= the file's size until capped)
    bool capped = false;     ///< the cap is reached: the agent stops sending
};

/// The note that ends a capped log (the worker runner's text).
std::string capped_log_note(std::uint64_t cap_bytes);

/// The state of the service's file at `path` (absent: nothing received). A capped file whose
/// note a crash cut short gets the rest of its note. Errors name the file.
Result<ShippedLog> shipped_log_state(const std::string& path, std::uint64_t cap_bytes);

/// Appends the bytes [offset, offset + data.size()) of the agent's log to `path` (parents
/// created): the part the file lacks, up to the cap (then the note). `offset` past the file's
/// size: nothing written, the answer's `have` is where to resume. Errors name the file.
Result<ShippedLog> append_shipped_log(const std::string& path, std::uint64_t offset, std::string_view data,
                                      std::uint64_t cap_bytes);

}  // namespace astraeus::service
