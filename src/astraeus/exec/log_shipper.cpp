#include "astraeus/exec/log_shipper.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "astraeus/base/base64.hpp"
#include "astraeus/service/log.hpp"

namespace astraeus::exec {

using nlohmann::json;
using service::log;
using service::LogLevel;

namespace {

/// The file's size; -1 when it does not exist (or cannot be read).
std::int64_t size_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return -1;
    return static_cast<std::int64_t>(st.st_size);
}

/// Up to n bytes of `path` from `offset` (fewer when the file is shorter or cannot be read).
std::string read_at(const std::string& path, std::int64_t offset, std::size_t n) {
    std::string out(n, '\0');
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::pread(fd, out.data() + got, n - got, static_cast<off_t>(offset) + static_cast<off_t>(got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<std::size_t>(r);
    }
    ::close(fd);
    out.resize(got);
    return out;
}

std::string key_text(const LogShipper::Key& k) {
    return "run " + std::to_string(std::get<0>(k)) + " attempt " + std::to_string(std::get<1>(k)) + " worker " +
           std::to_string(std::get<2>(k));
}

}  // namespace

LogShipper::LogShipper(LogShipperConfig c, LogPost post, std::function<bool(const nlohmann::json&)> accept)
    : c_(std::move(c)), post_(std::move(post)), accept_(std::move(accept)) {
    c_.chunk_bytes = std::clamp<std::size_t>(c_.chunk_bytes, 1, 512 << 10);
}

void LogShipper::load() {
    if (c_.state_path.empty()) return;
    std::ifstream in(c_.state_path);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::int64_t run = 0;
        int attempt = 0, worker = 0;
        std::string path;
        if (!(f >> run >> attempt >> worker) || !std::getline(f >> std::ws, path) || path.empty()) continue;
        const Key k{run, attempt, worker};
        if (streams_.contains(k)) continue;
        Stream s;
        s.path = path;
        s.offset = -1;  // where the service is: asked first
        s.finished = true;
        streams_.emplace(k, std::move(s));
        ++n;
    }
    if (n > 0) log(LogLevel::Info, "agent.logs_resumed", {{"streams", std::to_string(n)}});
}

void LogShipper::save() const {
    if (c_.state_path.empty()) return;
    const std::string tmp = c_.state_path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        for (const auto& [k, s] : streams_)
            out << std::get<0>(k) << " " << std::get<1>(k) << " " << std::get<2>(k) << " " << s.path << "\n";
    }
    std::error_code ec;
    std::filesystem::rename(tmp, c_.state_path, ec);
}

void LogShipper::add(const Key& k, const std::string& path) {
    Stream s;
    s.path = path;
    streams_[k] = std::move(s);
    save();
}

void LogShipper::finish(const Key& k, json exit_event) {
    auto it = streams_.find(k);
    if (it == streams_.end()) {
        released_.push_back(std::move(exit_event));
        return;
    }
    it->second.finished = true;
    it->second.exit_event = std::move(exit_event);
}

void LogShipper::drop(std::map<Key, Stream>::iterator it) {
    if (it->second.exit_event) released_.push_back(std::move(*it->second.exit_event));
    streams_.erase(it);
    save();
}

std::vector<json> LogShipper::take_released() {
    std::vector<json> out;
    out.swap(released_);
    return out;
}

std::vector<json> LogShipper::release_all() {
    for (auto& [k, s] : streams_)
        if (s.exit_event) {
            released_.push_back(std::move(*s.exit_event));
            s.exit_event.reset();
        }
    return take_released();
}

bool LogShipper::tick() {
    const auto now = Clock::now();
    if (streams_.empty() || now < retry_at_) return true;
    // Finished streams that are all at the service, and what is due.
    std::map<Key, std::int64_t> size;
    std::size_t pending = 0;
    bool due = false;
    for (auto it = streams_.begin(); it != streams_.end();) {
        const std::int64_t sz = std::max<std::int64_t>(size_of(it->second.path), 0);
        const Stream& s = it->second;
        if (s.finished && s.offset >= sz) {
            drop(it++);
            continue;
        }
        size[it->first] = sz;
        if (s.offset < 0 || (s.finished && sz > s.offset)) due = true;
        if (s.offset >= 0 && sz > s.offset) pending += static_cast<std::size_t>(sz - s.offset);
        ++it;
    }
    const double since_s = std::chrono::duration<double>(now - last_).count();
    if (pending >= c_.chunk_bytes || (pending > 0 && since_s >= c_.interval_s)) due = true;
    if (!due) return true;

    // The chunks: streams in turn from next_, at most chunk_bytes of data in all.
    json chunks = json::array();
    std::size_t budget = c_.chunk_bytes;
    std::vector<Key> order;
    for (auto it = streams_.lower_bound(next_); it != streams_.end(); ++it) order.push_back(it->first);
    for (auto it = streams_.begin(); it != streams_.end() && it->first < next_; ++it) order.push_back(it->first);
    std::optional<Key> last_served;
    for (const Key& k : order) {
        const Stream& s = streams_.at(k);
        json ch{{"run", std::get<0>(k)}, {"attempt", std::get<1>(k)}, {"worker", std::get<2>(k)}, {"offset", s.offset}};
        if (s.offset < 0) {
            chunks.push_back(std::move(ch));
            continue;
        }
        const std::int64_t sz = size.at(k);
        if (sz <= s.offset || budget == 0) continue;
        const std::string data = read_at(s.path, s.offset, std::min<std::size_t>(budget, static_cast<std::size_t>(sz - s.offset)));
        if (data.empty()) continue;
        budget -= data.size();
        ch["data"] = base64_encode(data);
        chunks.push_back(std::move(ch));
        last_served = k;
    }
    if (last_served) {
        auto after = streams_.upper_bound(*last_served);
        next_ = after == streams_.end() ? Key{} : after->first;
    }
    if (chunks.empty()) return true;
    last_ = now;
    auto r = post_("/v1/agent/logs", json{{"name", c_.machine}, {"chunks", chunks}});
    if (!r || r->first >= 500) {
        log(LogLevel::Warn, "agent.logs_failed",
            {{"error", !r ? r.error().message : r->second.value("error", std::to_string(r->first))}});
        retry_at_ = now + std::chrono::milliseconds(static_cast<std::int64_t>(c_.retry_s * 1000));
        return false;
    }
    if (r->first == 200 && accept_ && !accept_(r->second)) {
        // A deposed leader's answer (agent.stale_generation logged): nothing counted, the same
        // bytes sent again after retry_s (to the leader the agent moves to).
        retry_at_ = now + std::chrono::milliseconds(static_cast<std::int64_t>(c_.retry_s * 1000));
        return false;
    }
    if (r->first != 200) {  // refused for good (4xx): these streams are not shipped
        log(LogLevel::Warn, "agent.logs_refused",
            {{"status", std::to_string(r->first)}, {"error", r->second.value("error", r->second.dump())}});
        for (const json& ch : chunks) {
            auto it = streams_.find(Key{ch["run"].get<std::int64_t>(), ch["attempt"].get<int>(), ch["worker"].get<int>()});
            if (it != streams_.end()) drop(it);
        }
        return true;
    }
    for (const json& a : r->second.value("chunks", json::array())) {
        if (!a.is_object()) continue;
        auto it = streams_.find(
            Key{a.value("run", std::int64_t{0}), a.value("attempt", 0), a.value("worker", -1)});
        if (it == streams_.end()) continue;
        if (a.contains("error") || a.value("capped", false)) {
            if (a.contains("error"))
                log(LogLevel::Warn, "agent.log_dropped",
                    {{"stream", key_text(it->first)}, {"error", a.value("error", "")}});
            drop(it);
            continue;
        }
        it->second.offset = a.value("have", it->second.offset);
    }
    // Finished streams now complete.
    for (auto it = streams_.begin(); it != streams_.end();) {
        auto sz = size.find(it->first);
        if (it->second.finished && sz != size.end() && it->second.offset >= sz->second) drop(it++);
        else ++it;
    }
    return true;
}

}  // namespace astraeus::exec
