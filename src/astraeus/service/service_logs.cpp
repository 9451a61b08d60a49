// GET /v1/runs/{run}/logs: a worker's log of one attempt, read from the executor's log files
// (with agents: the service's copies of what they shipped), visible only inside the run's workspace. Split from service_api.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "astraeus/service/request_parse.hpp"
#include "astraeus/exec/sandbox/safe_fs.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

using nlohmann::json;
using namespace detail;

namespace {

/// `s` with every byte that is not part of valid UTF-8 replaced by '?' (JSON needs UTF-8).
std::string utf8_safe(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        bool ok = n > 0 && i + n <= s.size();
        for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
        if (!ok) {
            out += '?';
            ++i;
            continue;
        }
        out.append(s, i, n);
        i += n;
    }
    return out;
}

/// Bytes at the end of `s` that begin a UTF-8 sequence cut off by the read (0..3).
std::size_t cut_tail(const std::string& s) {
    for (std::size_t back = 1; back <= 3 && back <= s.size(); ++back) {
        const auto c = static_cast<unsigned char>(s[s.size() - back]);
        if ((c >> 6) == 0x2) continue;  // a continuation byte: look further back
        const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
        return n > back ? back : 0;
    }
    return 0;
}

}  // namespace

ApiResult<json> Service::run_logs(const Caller& c, const std::string& name, const Params& q) {
    if (c.token.scope != store::Scope::Workspace)
        return std::unexpected(ApiError{403, "logs are visible only inside the run's workspace (use a workspace token)"});
    std::string path, run_name, ws_name;
    std::int64_t attempt = 0, worker = 0, offset = 0, limit = 0;
    bool done = false;
    {
        std::lock_guard lk(mu_);
        auto found = find_run(c, name, q);
        if (!found) return std::unexpected(found.error());
        const RunMem& r = **found;
        if (r.rec.attempts == 0 && r.ended())  // it never will: say so (a follower stops on it)
            return std::unexpected(not_found("run '" + name + "' ended (" + r.rec.state +
                                             ") without starting: no logs"));
        if (r.rec.attempts == 0) return std::unexpected(not_found("run '" + name + "' has not started yet: no logs"));
        auto lq = parse_logs_query(q, r.rec.workers, r.rec.attempts);
        if (!lq) return std::unexpected(lq.error());
        worker = lq->worker;
        attempt = lq->attempt;
        offset = lq->offset;
        limit = lq->limit;
        run_name = r.rec.name;
        ws_name = workspaces_.at(r.rec.workspace_id).name;
        path = exec_->log_path(ws_name, run_name, static_cast<int>(attempt), static_cast<int>(worker));
        if (path.empty() && agents_)  // shipped by the agents (service_agent_logs.cpp)
            path = agent_log_path(ws_name, run_name, static_cast<int>(attempt), static_cast<int>(worker));
        done = r.ended() || attempt < r.rec.attempts || !r.holding();
    }
    if (path.empty())
        return std::unexpected(not_found("this service's executor keeps no logs (the simulated executor runs no processes)"));
    std::string text;
    std::int64_t size = 0;
    // A worker can write its run's folders: the log is opened with no link followed on the way,
    // and only when it is the regular file the service created (exec/sandbox/safe_fs.hpp).
    const long owner = ::geteuid() == 0 && !exec_->logs_written_by_workers() ? 0 : -1;
    if (auto fd = exec::sandbox::open_regular(path, owner); fd) {
        struct stat sb {};
        size = ::fstat(*fd, &sb) == 0 ? static_cast<std::int64_t>(sb.st_size) : 0;
        if (offset < size) {
            text.resize(static_cast<std::size_t>(std::min<std::int64_t>(limit, size - offset)));
            const ssize_t n = ::pread(*fd, text.data(), text.size(), offset);
            text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        }
        ::close(*fd);
    } else if (fd.error().message != "not found") {
        log(LogLevel::Warn, "logs.refused", {{"run", run_name}, {"path", path}, {"error", fd.error().message}});
        return std::unexpected(not_found("the log of worker " + std::to_string(worker) + ", attempt " +
                                         std::to_string(attempt) + " was replaced by the run (refused to read it)"));
    }
    if (offset + static_cast<std::int64_t>(text.size()) < size || !done) {
        const std::size_t cut = cut_tail(text);
        if (cut > 0 && cut <= text.size()) text = text.substr(0, text.size() - cut);
    }
    const std::int64_t next = std::min(size, offset) + static_cast<std::int64_t>(text.size());
    return json{{"run", run_name}, {"workspace", ws_name}, {"attempt", attempt}, {"worker", worker},
                {"offset", offset}, {"next_offset", next}, {"size", size}, {"done", done && next >= size},
                {"text", utf8_safe(text)}};
}

}  // namespace astraeus::service
