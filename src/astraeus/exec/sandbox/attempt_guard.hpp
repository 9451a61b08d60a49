// The run's current attempt, in the run's folder (docs/slurm.md, "A stale rank after a node
// crash"): the Slurm executor writes `<run>/attempt.current` ("ATTEMPT WRITTEN_MS\n": the
// service's attempt number and the Unix time in milliseconds of the write) before it releases a
// job for a new attempt; each step sandbox (step_sandbox.hpp, `--attempt-file`) reads it at its
// start as its own attempt and then every kAttemptPollMs: once it names a newer attempt, the
// step's workers are stale (a rank left running on a node whose slurmd died: Slurm cannot end it
// until the node comes back) and the sandbox kills its pid namespace (SIGKILL to the init).
// A new step starts its worker no earlier than kAttemptSettleMs after the write, so that an old
// rank whose node still runs has seen the change and is gone before the new attempt's workers
// touch the run's checkpoints.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"

namespace astraeus::exec::sandbox {

inline constexpr const char* kCurrentAttemptFile = "attempt.current";
inline constexpr int kAttemptPollMs = 250;     ///< how often a step reads the file
inline constexpr int kAttemptSettleMs = 1000;  ///< a new step's worker waits this long after the write

struct CurrentAttempt {
    int attempt = 0;               ///< the service's attempt number (1 on the first placement)
    std::int64_t written_ms = 0;   ///< when the service wrote it, Unix milliseconds
};

/// "ATTEMPT WRITTEN_MS" (a line end or nothing after it). Nullopt when malformed.
std::optional<CurrentAttempt> parse_current_attempt(std::string_view text);

/// Reads the file (at most 64 bytes; a link is not followed). Nullopt: absent, unreadable or
/// malformed.
std::optional<CurrentAttempt> read_current_attempt(const std::string& path);

/// Writes `<run_dir>/attempt.current` atomically (a new temporary file in the folder, renamed
/// over it), mode 0644, never through a link (the folder belongs to the job's user). Errors: the
/// folder cannot be opened, the file cannot be written or renamed.
Result<void> write_current_attempt(const std::string& run_dir, int attempt, std::int64_t now_ms);

}  // namespace astraeus::exec::sandbox
