// The run's current attempt (docs/slurm.md, "A stale rank after a node crash"): the Slurm
// executor writes `<runs>/.attempts/<workspace>/<run>` ("ATTEMPT WRITTEN_MS\n": the service's
// attempt number and the Unix time in milliseconds of the write) before it releases a job for a
// new attempt; each step sandbox (step_sandbox.hpp, `--attempt-file`) reads it at its start as its
// own attempt and then every kAttemptPollMs: once it names a newer attempt, the step's workers
// are stale (a rank left running on a node whose slurmd died: Slurm cannot end it until the node
// comes back) and the sandbox kills its pid namespace (SIGKILL to the init).
// The file and its folders belong to the service (folders 0711, file 0644): not in the run's own
// folder, which the job's user can write, so a worker cannot rewrite it to keep a stale rank alive.
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

inline constexpr const char* kAttemptsFolder = ".attempts";  ///< under the folder of all runs
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
/// The same, `name` in the folder `dir` (an open descriptor, O_PATH is enough): the step sandbox
/// opens the folder before its mount namespace hides it, and reads the file again by name (the
/// service replaces it by a rename) through that descriptor.
std::optional<CurrentAttempt> read_current_attempt_at(int dir, const std::string& name);

/// Writes `<dir>/<name>` atomically (a new temporary file in `dir`, renamed over it), mode 0644,
/// never through a link. Errors: the folder cannot be opened, the file cannot be written or
/// renamed (the message names the path).
Result<void> write_current_attempt(const std::string& dir, const std::string& name, int attempt, std::int64_t now_ms);

}  // namespace astraeus::exec::sandbox
