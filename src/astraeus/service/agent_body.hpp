// The node agents' request bodies (issue 18; docs/agents.md "The protocol"), checked before the
// service or the agents executor reads a field: a JSON object in valid UTF-8, no key twice in one
// object, only the protocol's fields, each of its type and range. Every refusal is a 400 naming
// the field ("'events[3].run' must be an integer in 0..9223372036854775807"), never a 500 from a
// wrong type read later. Thread safety: pure functions.
#pragma once
#include <nlohmann/json.hpp>
#include <string_view>

#include "astraeus/service/service.hpp"

namespace astraeus::service {

enum class AgentBody {
    Register,   ///< POST /v1/agent/register
    Heartbeat,  ///< POST /v1/agent/heartbeat and /v1/agent/events
    Logs,       ///< POST /v1/agent/logs (the chunks' data is base64, decoded by the handler)
};

/// Limits of the lists an agent may send in one body.
inline constexpr std::size_t kMaxAgentEvents = 10000;
inline constexpr std::size_t kMaxAgentWorkers = 4096;
inline constexpr std::size_t kMaxAgentGpuSamples = 1024;

/// The parsed body of an agent endpoint, or a 400 naming the first bad field. Register:
/// {"name" (string, required), "pool"? (string), "gpus" (integer 1..1024, required),
///  "session" (non-empty string of at most 128 bytes, required), "addr"? (string, at most 255
///  bytes), "workers"? ([{"run", "attempt", "worker", "pid", "gpus": [integers]}]),
///  "events"? (below)}. Heartbeat: {"name" (required), "session", "commands_acked"? (integer >= 0),
///  "events"?, "live"? (integer >= 0), "gpu_util"? (arrays of numbers or null), "wait_ms"?
///  (integer >= 0)}; an event: {"seq" (integer >= 0), "kind" ("started", "progress", "exited"),
///  "run", "attempt", "worker", "pid"?, "step"?, "exit_code"?, "signal"?, "we_signalled"?
///  (boolean), "error"? (string)}. Logs: {"name" (required), "chunks": [{"run", "attempt",
///  "worker", "offset" (integer >= -1), "data"? (string)}]}. Never throws.
ApiResult<nlohmann::json> parse_agent_body(std::string_view body, AgentBody kind);

}  // namespace astraeus::service
