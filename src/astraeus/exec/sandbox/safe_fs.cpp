#include "astraeus/exec/sandbox/safe_fs.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace astraeus::exec::sandbox {

int open_nofollow(const std::string& path, int flags, mode_t mode) {
    struct open_how how {};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    for (;;) {
        const long fd = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how);
        if (fd < 0 && (errno == EINTR || errno == EAGAIN)) continue;  // EAGAIN: a rename raced
        return static_cast<int>(fd);
    }
}

Result<int> ensure_dir(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
    for (int tries = 0; tries < 3; ++tries) {
        if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
            return fail("cannot make folder " + path + ": " + std::strerror(errno));
        const int fd = open_nofollow(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (fd < 0) {
            if (errno == ELOOP || errno == ENOTDIR) {  // a link or a file planted there: remove it
                if (::unlink(path.c_str()) != 0 && errno != ENOENT)
                    return fail("cannot remove what was planted at " + path + ": " + std::strerror(errno));
                continue;
            }
            return fail("cannot open folder " + path + ": " + std::strerror(errno));
        }
        if (::fchown(fd, uid, gid) != 0 && ::geteuid() == 0) {
            const int e = errno;
            ::close(fd);
            return fail("cannot give folder " + path + " to uid " + std::to_string(uid) + ": " + std::strerror(e));
        }
        (void)::fchmod(fd, mode);
        return fd;
    }
    return fail("cannot make folder " + path + ": something keeps replacing it");
}

Result<int> create_fresh(const std::string& path, gid_t gid, mode_t mode) {
    for (int tries = 0; tries < 3; ++tries) {
        if (::unlink(path.c_str()) != 0 && errno != ENOENT && errno != EISDIR && errno != EPERM)
            return fail("cannot replace " + path + ": " + std::strerror(errno));
        const int fd = open_nofollow(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
        if (fd < 0) {
            if (errno == EEXIST) continue;  // re-planted between the two calls
            return fail("cannot create " + path + ": " + std::strerror(errno));
        }
        if (::geteuid() == 0) (void)::fchown(fd, 0, gid);
        (void)::fchmod(fd, mode);
        return fd;
    }
    return fail("cannot create " + path + ": something keeps replacing it");
}

Result<int> open_regular(const std::string& path, long owner) {
    const int fd = open_nofollow(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT) return fail("not found");
        if (errno == ELOOP) return fail(path + ": a symbolic link on the way (refused)");
        return fail(path + ": " + std::strerror(errno));
    }
    struct stat sb {};
    std::string why;
    if (::fstat(fd, &sb) != 0) why = std::strerror(errno);
    else if (!S_ISREG(sb.st_mode)) why = "not a regular file (refused)";
    else if (sb.st_nlink != 1) why = "a file with other hard links (refused)";
    else if (owner >= 0 && sb.st_uid != static_cast<uid_t>(owner)) why = "not the service's file: replaced by a worker (refused)";
    if (!why.empty()) {
        ::close(fd);
        return fail(path + ": " + why);
    }
    return fd;
}

}  // namespace astraeus::exec::sandbox
