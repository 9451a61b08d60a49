// POST /v1/agent/logs: the node agents ship their workers' log bytes here (docs/agents.md
// "Logs"); the service appends them to its own copy of each log (service/agent_log_file.hpp),
// which GET /runs/{run}/logs reads as it reads the local executor's logs. The run's names are
// looked up under the service's lock; the files are written under agent_logs_mu_ only, so a
// slow disk never holds the scheduler.
#include <filesystem>

#include "astraeus/base/base64.hpp"
#include "astraeus/service/agent_log_file.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/agent_body.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

using nlohmann::json;
using namespace detail;

namespace {

constexpr std::size_t kMaxLogBytesPerRequest = 512 << 10;  // base64 in a 1 MiB body (http_server)
constexpr std::size_t kMaxChunksPerRequest = 256;

struct Chunk {
    std::int64_t run = 0;
    int attempt = 0;
    int worker = 0;
    std::int64_t offset = -1;  ///< -1: a question (where to resume), no data
    std::string data;
    std::string path;
    std::uint64_t cap = 0;  ///< the attempt's per-worker log cap (the workspace's log quota)
    bool removed = false;   ///< the log was removed by the quota: nothing more is kept
    std::string error;
};

}  // namespace

std::string Service::agent_log_path(const std::string& workspace, const std::string& run, int attempt,
                                    int worker) const {
    return (std::filesystem::path(cfg_.data_dir) / "runs" / workspace / run / ("attempt-" + std::to_string(attempt)) /
            ("worker-" + std::to_string(worker) + ".log"))
        .string();
}

ApiResult<json> Service::agent_logs(const Caller& c, std::string_view body) {
    if (!agents_)
        return std::unexpected(
            ApiError{409, "this service does not run node agents: start it with `astraeus serve --executor agents`"});
    auto parsed = parse_agent_body(body, AgentBody::Logs);  // every field's type and range
    if (!parsed) return std::unexpected(parsed.error());
    const json& b = *parsed;
    const std::string name = b.value("name", "");
    auto cs = b.find("chunks");
    if (cs == b.end() || !cs->is_array()) return std::unexpected(bad("'chunks' must be an array"));
    if (cs->size() > kMaxChunksPerRequest)
        return std::unexpected(bad("at most " + str(kMaxChunksPerRequest) + " chunks per request"));
    std::vector<Chunk> chunks;
    std::size_t total = 0;
    for (const json& j : *cs) {
        Chunk k;
        if (!j.is_object() || !j.value("run", json()).is_number_integer() ||
            !j.value("attempt", json()).is_number_integer() || !j.value("worker", json()).is_number_integer() ||
            !j.value("offset", json()).is_number_integer())
            return std::unexpected(bad("each chunk needs integer 'run', 'attempt', 'worker' and 'offset'"));
        k.run = j["run"].get<std::int64_t>();
        k.attempt = j["attempt"].get<int>();
        k.worker = j["worker"].get<int>();
        k.offset = j["offset"].get<std::int64_t>();
        if (k.offset < -1) return std::unexpected(bad("'offset' must be -1 (a question) or a byte offset"));
        auto data = base64_decode(j.value("data", ""));
        if (!data) return std::unexpected(bad("'data': " + data.error().message));
        k.data = std::move(*data);
        if (k.offset < 0 && !k.data.empty()) return std::unexpected(bad("a chunk with offset -1 carries no data"));
        total += k.data.size();
        if (total > kMaxLogBytesPerRequest)
            return std::unexpected(ApiError{413, "at most " + str(kMaxLogBytesPerRequest) + " bytes of logs per request"});
        chunks.push_back(std::move(k));
    }
    {
        std::lock_guard lk(mu_);
        store::Id machine = 0;
        for (const auto& [mid, n] : machine_names_)
            if (n == name) machine = mid;
        if (machine == 0) return std::unexpected(not_found("no machine named '" + name + "' (register first)"));
        // A token ships the logs of its own machine only (the first use binds it, as a registration).
        if (auto bound = bind_agent_token(c, name); !bound) return std::unexpected(bound.error());
        for (Chunk& k : chunks) {
            auto it = runs_.find(k.run);
            if (it == runs_.end()) {
                k.error = "no run with id " + str(k.run);
                continue;
            }
            const RunMem& r = *it->second;
            if (k.attempt < 1 || k.attempt > r.rec.attempts || k.worker < 0 || k.worker >= r.rec.workers) {
                k.error = "run '" + r.rec.name + "' has no attempt " + str(k.attempt) + " worker " + str(k.worker);
                continue;
            }
            // Only the machine the worker of that attempt was placed on writes its log: the
            // latest attempt's placement (kept after the release), or a recent attempt's
            // (RunMem::attempt_parts). An attempt whose placement the service does not know (placed
            // before a restart of the service, or older than the last few) is refused: a stolen
            // agent token must not write the logs of runs that never ran on its machine.
            const auto w = static_cast<std::size_t>(k.worker);
            const std::vector<gp::HeldPart>* placed = nullptr;
            if (k.attempt == r.rec.attempts && w < r.parts.size() && !r.parts[w].empty()) placed = &r.parts[w];
            if (auto a = r.attempt_parts.find(k.attempt);
                !placed && a != r.attempt_parts.end() && w < a->second.size() && !a->second[w].empty())
                placed = &a->second[w];
            bool here = false;
            if (placed)
                for (const auto& p : *placed) here = here || p.machine == machine;
            if (!here) {
                k.error = "worker " + str(k.worker) + " of run '" + r.rec.name + "' is not placed on " + name +
                          " in attempt " + str(k.attempt) + " (as far as the service knows)";
                continue;
            }
            k.path = agent_log_path(workspaces_.at(r.rec.workspace_id).name, r.rec.name, k.attempt, k.worker);
            auto cap = r.log_caps.find(k.attempt);
            k.cap = cap == r.log_caps.end() ? cfg_.local.runner.log_cap_bytes : cap->second;
            k.removed = log_quota_.removed(k.path);
        }
    }
    json out = json::array();
    std::lock_guard lk(agent_logs_mu_);
    for (const Chunk& k : chunks) {
        json a{{"run", k.run}, {"attempt", k.attempt}, {"worker", k.worker}};
        if (k.error.empty() && k.removed) {  // the agent stops sending it
            a["have"] = k.offset < 0 ? 0 : k.offset + static_cast<std::int64_t>(k.data.size());
            a["capped"] = true;
        } else if (k.error.empty()) {
            const std::uint64_t cap = k.cap;
            auto st = k.offset < 0 ? shipped_log_state(k.path, cap)
                                   : append_shipped_log(k.path, static_cast<std::uint64_t>(k.offset), k.data, cap);
            if (st) {
                a["have"] = st->have;
                a["capped"] = st->capped;
                if (k.offset >= 0 && static_cast<std::uint64_t>(k.offset) > st->have)
                    log(LogLevel::Warn, "agent.log_gap",
                        {{"machine", name}, {"run", str(k.run)}, {"offset", str(k.offset)}, {"have", str(static_cast<std::int64_t>(st->have))}});
            } else {
                a["error"] = st.error().message;
            }
        } else {
            a["error"] = k.error;
        }
        if (a.contains("error"))
            log(LogLevel::Warn, "agent.log_refused", {{"machine", name}, {"error", a["error"].get<std::string>()}});
        out.push_back(std::move(a));
    }
    // The lease generation, as every reply to agents: an agent counts these chunks as delivered
    // only from the leader it follows (exec/log_shipper.hpp).
    return json{{"chunks", std::move(out)}, {"generation", agents_ ? agents_->generation() : 0}};
}

}  // namespace astraeus::service
