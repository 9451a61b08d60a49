#include "astraeus/service/log_quota.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "astraeus/exec/sandbox/safe_fs.hpp"

namespace astraeus::service {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kNoteStart = "[astraeus: log removed";

std::uint64_t size_of(const std::string& path) {
    std::error_code ec;
    const auto n = fs::file_size(path, ec);
    return ec ? 0 : static_cast<std::uint64_t>(n);
}

bool is_note(const fs::path& p, std::uint64_t bytes) {
    if (bytes > 512) return false;
    std::ifstream in(p);
    std::string head(kNoteStart.size(), '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    return in && head == kNoteStart;
}

}  // namespace

std::string LogQuota::removed_note(const std::string& workspace, std::uint64_t quota_bytes) {
    return std::string(kNoteStart) + ": workspace '" + workspace + "' reached its log quota of " +
           std::to_string(quota_bytes) + " bytes; its oldest logs are removed first]\n";
}

void LogQuota::add_settled(Workspace& w, const std::string& path, std::uint64_t bytes) {
    if (auto it = w.seq_of.find(path); it != w.seq_of.end()) {  // counted before: now its size
        w.used -= w.settled.at(it->second).second;
        w.settled.erase(it->second);
    }
    const std::uint64_t seq = w.next_seq++;
    w.settled[seq] = {path, bytes};
    w.seq_of[path] = seq;
    w.used += bytes;
}

void LogQuota::scan(const std::string& workspace, Workspace& w, const std::string& any_log) {
    w.scanned = true;
    // <workspace>/<run>/attempt-N/worker-K.log
    const fs::path dir = fs::path(any_log).parent_path().parent_path().parent_path();
    std::set<std::string> live;
    for (const auto& [key, r] : live_)
        if (r.workspace == workspace) live.insert(r.logs.begin(), r.logs.end());
    std::vector<std::tuple<fs::file_time_type, std::string, std::uint64_t>> found;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
        if (it.depth() > 2) {  // worker logs are 3 levels down: run, attempt, file
            it.disable_recursion_pending();
            continue;
        }
        const fs::path& p = it->path();
        if (it.depth() != 2 || !it->is_regular_file(ec) || it->is_symlink(ec)) continue;
        const std::string name = p.filename().string();
        if (!name.starts_with("worker-") || !name.ends_with(".log") || live.contains(p.string())) continue;
        const std::uint64_t bytes = size_of(p.string());
        if (is_note(p, bytes)) {
            removed_.insert(p.string());
            continue;
        }
        found.emplace_back(it->last_write_time(ec), p.string(), bytes);
    }
    std::sort(found.begin(), found.end());
    for (const auto& [t, path, bytes] : found) add_settled(w, path, bytes);
}

void LogQuota::remove_oldest(const std::string& workspace, Workspace& w) {
    auto it = w.settled.begin();
    const auto [path, bytes] = it->second;
    w.settled.erase(it);
    w.seq_of.erase(path);
    w.used -= bytes;
    // Replaced, not followed: the log's folder is opened without following any link (its
    // attempt folder is the worker's: a worker can turn it into a link to another workspace's
    // folder, or any folder of the machine), then the log is removed and the note created in
    // that folder only; a link planted in place of the log itself is removed, never written
    // through (the note is created exclusively; whatever was planted since is left without one).
    const fs::path p(path);
    const int dir = exec::sandbox::open_nofollow(p.parent_path().string(), O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
        const std::string name = p.filename().string();
        (void)::unlinkat(dir, name.c_str(), 0);
        const int fd = ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
        if (fd >= 0) {
            const std::string note = removed_note(workspace, quota_);
            const ssize_t n = ::write(fd, note.data(), note.size());
            (void)n;  // a note cut short by a full disk is still a note (its first bytes)
            ::close(fd);
        }
        ::close(dir);
    }
    removed_.insert(path);
}

std::uint64_t LogQuota::reserve(const std::string& workspace, std::int64_t key,
                                const std::vector<std::string>& logs) {
    settle(key);
    if (quota_ == 0 || logs.empty()) return cap_;
    Workspace& w = ws_[workspace];
    if (!w.scanned) scan(workspace, w, logs.front());
    for (const std::string& p : logs) removed_.erase(p);  // written afresh by this attempt
    const std::uint64_t workers = logs.size();
    const auto room = [&] { return w.used >= quota_ ? 0 : quota_ - w.used; };
    while (room() < workers * cap_ && !w.settled.empty()) remove_oldest(workspace, w);
    const std::uint64_t each = std::min(cap_, room() / workers);
    live_[key] = {workspace, logs, each * workers};
    w.used += each * workers;
    return each;
}

void LogQuota::settle(std::int64_t key) {
    auto it = live_.find(key);
    if (it == live_.end()) return;
    Workspace& w = ws_[it->second.workspace];
    w.used -= it->second.bytes;
    for (const std::string& p : it->second.logs)
        if (!removed_.contains(p) && fs::exists(p)) add_settled(w, p, size_of(p));
    live_.erase(it);
}

std::uint64_t LogQuota::used(const std::string& workspace) const {
    auto it = ws_.find(workspace);
    return it == ws_.end() ? 0 : it->second.used;
}

}  // namespace astraeus::service
