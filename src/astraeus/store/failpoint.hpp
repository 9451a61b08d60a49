// Failpoints: named places at the store's transaction boundaries where a test can make the
// process die as if killed (crash-consistency tests, tests/service/crash_points_test.sh).
// Compiled into every build and inert unless the environment variable ASTRAEUS_FAILPOINT is
// set when the process starts: ASTRAEUS_FAILPOINT=NAME kills the process (SIGKILL, no
// destructor, no flush) the first time failpoint(NAME) is reached; NAME:N the N-th time.
// The names are listed in docs/security.md ("Fuzzing, sanitizers and crash consistency").
// Cost when unset: one relaxed atomic load per call. Thread safety: thread-safe.
#pragma once

namespace astraeus::store {

/// Dies (SIGKILL to itself, after one line on stderr naming the point) when ASTRAEUS_FAILPOINT
/// names `name` and this is its N-th hit; otherwise does nothing.
void failpoint(const char* name);

}  // namespace astraeus::store
