// The node agent's log shipper (docs/agents.md "Logs"): sends the new bytes of each worker's
// log file on this machine to the service (POST /v1/agent/logs), which keeps its own copy for
// GET /runs/{run}/logs. Per log ("stream") it keeps the offset the service has acknowledged and
// sends from there, at most `chunk_bytes` of all streams together per request (streams taken in
// turn); a failed request is sent again from the same offsets, and the service's answer (`have`)
// is where the next chunk starts, so nothing is lost or duplicated across failed requests and
// restarts of the service. A stream whose offset is unknown (a log of a previous life of this
// agent) first asks the service where to resume (offset -1).
// A worker's exit event is held until its whole log is at the service (finish(), then
// take_released()), so that a run ends only when its logs can be read in full. A stream the
// service refuses (an error answer, a 4xx status) or that reached the service's cap is dropped
// and its event released.
// Fencing (docs/agents.md "Replicas"): an answer is counted (offsets moved, streams finished)
// only when `accept` takes it (the agent's rule for every reply: the leader's lease generation,
// not below the highest seen); otherwise, as after a 5xx (a follower's 503 included), the same
// bytes are sent again later, to the leader.
// The streams not yet fully shipped are kept in `state_path` (one line each: run, attempt,
// worker, path), so that a restarted agent ships the rest of its previous workers' logs.
// Thread safety: not thread-safe (the agent's thread).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "astraeus/base/error.hpp"

namespace astraeus::exec {

/// One request to the service (exec/agent_node.hpp's AgentPost).
using LogPost = std::function<Result<std::pair<int, nlohmann::json>>(const std::string& path,
                                                                    const nlohmann::json& body)>;

struct LogShipperConfig {
    std::string machine;                       ///< the machine's name (the body's "name")
    std::size_t chunk_bytes = 256 << 10;       ///< log bytes per request, all streams (<= 512 KiB)
    double interval_s = 0.25;                  ///< a request at most this often for growing logs
    double retry_s = 1.0;                      ///< wait after a failed request
    std::string state_path;                    ///< streams not fully shipped; empty: not kept
};

class LogShipper {
public:
    using Key = std::tuple<std::int64_t, int, int>;  ///< (run, attempt, worker)
    using Clock = std::chrono::steady_clock;

    /// `accept`: whether a 200 answer may be counted (empty: every one is).
    LogShipper(LogShipperConfig c, LogPost post, std::function<bool(const nlohmann::json&)> accept = {});
    /// Takes the streams of `state_path` left by a previous life of this agent: their writers
    /// are gone; they are shipped to their end (the service says where to resume).
    void load();
    /// A new worker's log at `path` (written from offset 0).
    void add(const Key& k, const std::string& path);
    /// k's writer is gone: `exit_event` is released once the whole file is at the service (at
    /// once when k is not shipped).
    void finish(const Key& k, nlohmann::json exit_event);
    /// Sends one request when one is due (new bytes and `interval_s` since the last, a full
    /// chunk, a finished stream, a question); false when it failed (no answer, or a 5xx).
    bool tick();
    /// Exit events whose logs are at the service, in the order they were released.
    std::vector<nlohmann::json> take_released();
    /// Every held exit event now, shipped or not (a registration must report every exit).
    std::vector<nlohmann::json> release_all();
    /// Streams not fully shipped.
    std::size_t streams() const { return streams_.size(); }

private:
    struct Stream {
        std::string path;
        std::int64_t offset = 0;  ///< acknowledged by the service; -1: unknown (ask)
        bool finished = false;    ///< no more writes
        std::optional<nlohmann::json> exit_event;
    };
    void drop(std::map<Key, Stream>::iterator it);
    void save() const;

    LogShipperConfig c_;
    LogPost post_;
    std::function<bool(const nlohmann::json&)> accept_;
    std::map<Key, Stream> streams_;
    std::vector<nlohmann::json> released_;
    Key next_{};  ///< the stream served first in the next request (round robin)
    Clock::time_point last_{};
    Clock::time_point retry_at_{};
};

}  // namespace astraeus::exec
