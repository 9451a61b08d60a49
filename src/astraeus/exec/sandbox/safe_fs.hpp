// Opening files inside folders that workers can write, without following what they plant:
// every component of the path is resolved with openat2(RESOLVE_NO_SYMLINKS), so a symlink
// anywhere on the way (a log replaced by a link to /etc/shadow, a run folder replaced by a link
// to /etc) fails with ELOOP instead of being followed. Paths must be absolute and canonical
// (callers canonicalise their roots once: a symlink in a configured prefix is refused too).
#pragma once
#include <sys/types.h>

#include <string>

#include "astraeus/base/error.hpp"

namespace astraeus::exec::sandbox {

/// openat2(AT_FDCWD, path, {flags | O_CLOEXEC, mode, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS}).
/// Returns the descriptor or -1 with errno set (ELOOP: a symlink on the way).
int open_nofollow(const std::string& path, int flags, mode_t mode = 0);

/// Makes folder `path` (its parent must exist) or takes the one there, never through a link
/// (a symlink or a file in its place is removed first), then gives it to uid:gid with `mode`
/// (fchown/fchmod on the opened folder, never chown by name). Returns the open folder (caller
/// closes). Errors name the path.
Result<int> ensure_dir(const std::string& path, uid_t uid, gid_t gid, mode_t mode);

/// Creates `path` afresh for the service to write: whatever is at that name is unlinked (a link
/// is removed, not followed), then it is created with O_EXCL, owned by root:gid, `mode`.
/// Returns the descriptor (O_WRONLY). Errors name the path.
Result<int> create_fresh(const std::string& path, gid_t gid, mode_t mode);

/// Opens `path` for reading when it is a regular file with a single link that no symlink leads
/// to; with `owner` >= 0 it must also belong to that uid (a file the service created).
/// Errors: "not found" (ENOENT), else the reason (a link, not a regular file, planted...).
Result<int> open_regular(const std::string& path, long owner = -1);

}  // namespace astraeus::exec::sandbox
