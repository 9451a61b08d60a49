// create_data_dir and private_store_file (store/store.hpp): the data directory and the SQLite
// files are private to the service's user (they hold token hashes and every run): 0700 and 0600. A
// data-dir path that exists and is not a directory is an error that says so.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "astraeus/store/store.hpp"

namespace astraeus::store {

Result<void> create_data_dir(const std::string& data_dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(data_dir, ec)) {
        // An existing directory readable by group or others is made private too, as the store
        // files are: they are 0600, but the directory also holds logs and run directories.
        struct stat st {};
        if (::stat(data_dir.c_str(), &st) == 0 && (st.st_mode & 077) != 0 && ::chmod(data_dir.c_str(), 0700) != 0)
            return fail("cannot make the data directory " + data_dir + " private (chmod 0700): " +
                        std::strerror(errno));
        return {};
    }
    const fs::path parent = fs::path(data_dir).parent_path();
    if (!parent.empty()) {
        fs::create_directories(parent, ec);
        if (ec) return fail("cannot create the data directory " + data_dir + ": " + ec.message());
    }
    if (::mkdir(data_dir.c_str(), 0700) != 0 && errno != EEXIST)
        return fail("cannot create the data directory " + data_dir + ": " + std::strerror(errno));
    if (!fs::is_directory(data_dir, ec))  // EEXIST on a file, or a race with its removal
        return fail("cannot create the data directory " + data_dir + ": " +
                    (fs::exists(data_dir, ec) ? "it exists and is not a directory"
                                              : "it vanished after its creation"));
    return {};
}

Result<void> private_store_file(const std::string& path) {
    // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database
    // file's permissions. An existing file readable by others is made private.
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return fail("cannot open the store " + path + ": " + std::strerror(errno));
    struct stat st {};
    const bool shared = ::fstat(fd, &st) == 0 && (st.st_mode & 077) != 0;
    const bool ok = !shared || ::fchmod(fd, 0600) == 0;
    ::close(fd);
    if (!ok) return fail("cannot make the store " + path + " private (chmod 0600): " + std::strerror(errno));
    for (const char* suffix : {"-wal", "-shm"}) {
        const std::string side = path + suffix;
        if (::stat(side.c_str(), &st) == 0 && (st.st_mode & 077) != 0) (void)::chmod(side.c_str(), 0600);
    }
    return {};
}

}  // namespace astraeus::store
