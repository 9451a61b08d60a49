#include "astraeus/exec/sandbox/attempt_guard.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <random>

namespace astraeus::exec::sandbox {

std::optional<CurrentAttempt> parse_current_attempt(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    const auto sp = text.find(' ');
    if (sp == std::string_view::npos) return std::nullopt;
    CurrentAttempt c;
    const auto a = text.substr(0, sp), w = text.substr(sp + 1);
    auto r1 = std::from_chars(a.data(), a.data() + a.size(), c.attempt);
    auto r2 = std::from_chars(w.data(), w.data() + w.size(), c.written_ms);
    if (r1.ec != std::errc() || r1.ptr != a.data() + a.size() || r2.ec != std::errc() ||
        r2.ptr != w.data() + w.size() || c.attempt < 1 || c.written_ms < 0)
        return std::nullopt;
    return c;
}

namespace {

std::optional<CurrentAttempt> read_open(int fd) {
    if (fd < 0) return std::nullopt;
    char buf[64];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) < 0 && errno == EINTR) {
    }
    ::close(fd);
    if (n <= 0) return std::nullopt;
    return parse_current_attempt(std::string_view(buf, static_cast<std::size_t>(n)));
}

}  // namespace

std::optional<CurrentAttempt> read_current_attempt(const std::string& path) {
    return read_open(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
}

std::optional<CurrentAttempt> read_current_attempt_at(int dir, const std::string& name) {
    return read_open(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
}

Result<void> write_current_attempt(const std::string& run_dir, const std::string& name, int attempt,
                                   std::int64_t now_ms) {
    const int dir = ::open(run_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) return fail(run_dir + ": " + std::strerror(errno));
    std::random_device rd;
    const std::string tmp = "." + name + ".tmp." + std::to_string(rd());
    const std::string text = std::to_string(attempt) + " " + std::to_string(now_ms) + "\n";
    const int fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int e = errno;
        ::close(dir);
        return fail(run_dir + "/" + tmp + ": " + std::strerror(e));
    }
    (void)::fchmod(fd, 0644);  // whatever the umask
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int e = errno;
    ::close(fd);
    if (!ok || ::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) {
        const int e2 = ok ? errno : e;
        (void)::unlinkat(dir, tmp.c_str(), 0);
        ::close(dir);
        return fail(run_dir + "/" + name + ": " + std::strerror(e2));
    }
    ::close(dir);
    return {};
}

}  // namespace astraeus::exec::sandbox
