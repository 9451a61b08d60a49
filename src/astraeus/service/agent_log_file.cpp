#include "astraeus/service/agent_log_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace astraeus::service {

namespace {

std::string errno_text(int e) { return std::strerror(e); }

Result<void> write_all(int fd, std::string_view s, const std::string& path) {
    while (!s.empty()) {
        const ssize_t n = ::write(fd, s.data(), s.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(path + ": write: " + errno_text(errno));
        s.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

/// Appends `s` to `path` (created with its parents).
Result<void> append(const std::string& path, std::string_view s) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (ec) return fail(path + ": cannot create its directory: " + ec.message());
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd < 0) return fail(path + ": open: " + errno_text(errno));
    auto ok = write_all(fd, s, path);
    ::close(fd);
    return ok;
}

Result<std::uint64_t> file_size(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return std::uint64_t{0};
        return fail(path + ": stat: " + errno_text(errno));
    }
    return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace

std::string capped_log_note(std::uint64_t cap_bytes) {
    return "\n[astraeus: log capped at " + std::to_string(cap_bytes) + " bytes; later output dropped]\n";
}

Result<ShippedLog> shipped_log_state(const std::string& path, std::uint64_t cap_bytes) {
    auto size = file_size(path);
    if (!size) return std::unexpected(size.error());
    if (*size < cap_bytes) return ShippedLog{*size, false};
    // Capped: the first cap bytes and the note; complete a note a crash cut short.
    const std::string note = capped_log_note(cap_bytes);
    if (*size < cap_bytes + note.size()) {
        if (auto ok = append(path, std::string_view(note).substr(*size - cap_bytes)); !ok)
            return std::unexpected(ok.error());
    }
    return ShippedLog{cap_bytes, true};
}

Result<ShippedLog> append_shipped_log(const std::string& path, std::uint64_t offset, std::string_view data,
                                      std::uint64_t cap_bytes) {
    auto st = shipped_log_state(path, cap_bytes);
    if (!st || st->capped || offset > st->have) return st;
    const std::uint64_t skip = st->have - offset;  // bytes of the chunk the file already has
    if (skip >= data.size()) return st;
    std::string_view fresh = data.substr(static_cast<std::size_t>(skip));
    const std::uint64_t room = cap_bytes - st->have;
    if (fresh.size() <= room) {
        if (auto ok = append(path, fresh); !ok) return std::unexpected(ok.error());
        return ShippedLog{st->have + fresh.size(), false};
    }
    std::string last(fresh.substr(0, static_cast<std::size_t>(room)));
    last += capped_log_note(cap_bytes);
    if (auto ok = append(path, last); !ok) return std::unexpected(ok.error());
    return ShippedLog{cap_bytes, true};
}

}  // namespace astraeus::service
