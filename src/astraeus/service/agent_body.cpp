#include "astraeus/service/agent_body.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "astraeus/api/http_conformance.hpp"
#include "astraeus/api/run_limits.hpp"

namespace astraeus::service {

using nlohmann::json;

namespace {

constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();

ApiError field_error(const std::string& path, const std::string& what) {
    return {400, "'" + path + "' " + what};
}

/// Checks that object `o` (at `path`, "" for the body) has only `known` keys.
std::optional<ApiError> only(const json& o, const std::string& path, std::initializer_list<const char*> known) {
    for (auto it = o.begin(); it != o.end(); ++it) {
        bool ok = false;
        for (const char* k : known) ok = ok || it.key() == k;
        if (!ok) {
            std::string m = "unknown field '" + (path.empty() ? "" : path + ".") + it.key() + "' (expected:";
            for (const char* k : known) m += std::string(" ") + k;
            return ApiError{400, m + ")"};
        }
    }
    return std::nullopt;
}

std::string at(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }

/// Integer field `key` of `o` in [lo, hi]; absent: fine unless `required`.
std::optional<ApiError> int_field(const json& o, const std::string& path, const char* key, std::int64_t lo,
                                  std::int64_t hi, bool required = false) {
    auto it = o.find(key);
    if (it == o.end()) {
        if (required) return field_error(at(path, key), "is required");
        return std::nullopt;
    }
    // An integer JSON number (nlohmann: signed or unsigned) within the range; 3.0 is not one.
    bool ok = false;
    if (it->is_number_unsigned()) {
        const std::uint64_t v = it->get<std::uint64_t>();
        ok = v <= static_cast<std::uint64_t>(kI64Max) && static_cast<std::int64_t>(v) >= lo &&
             static_cast<std::int64_t>(v) <= hi;
    } else if (it->is_number_integer()) {
        const std::int64_t v = it->get<std::int64_t>();
        ok = v >= lo && v <= hi;
    }
    if (!ok) return field_error(at(path, key), "must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
    return std::nullopt;
}

std::optional<ApiError> string_field(const json& o, const std::string& path, const char* key, std::size_t max_len,
                                     bool required = false, bool non_empty = false) {
    auto it = o.find(key);
    if (it == o.end()) {
        if (required) return field_error(at(path, key), "is required");
        return std::nullopt;
    }
    if (!it->is_string()) return field_error(at(path, key), "must be a string");
    const auto& s = it->get_ref<const std::string&>();
    if (s.size() > max_len) return field_error(at(path, key), "is longer than " + std::to_string(max_len) + " bytes");
    if (non_empty && s.empty()) return field_error(at(path, key), "must not be empty");
    return std::nullopt;
}

std::optional<ApiError> bool_field(const json& o, const std::string& path, const char* key) {
    auto it = o.find(key);
    if (it != o.end() && !it->is_boolean()) return field_error(at(path, key), "must be true or false");
    return std::nullopt;
}

/// Array field `key` (absent: fine); each element checked by `each(element, "key[i]")`.
template <class Each>
std::optional<ApiError> array_field(const json& o, const char* key, std::size_t max_n, Each each) {
    auto it = o.find(key);
    if (it == o.end()) return std::nullopt;
    if (!it->is_array()) return field_error(key, "must be an array");
    if (it->size() > max_n) return field_error(key, "has more than " + std::to_string(max_n) + " entries");
    for (std::size_t i = 0; i < it->size(); ++i)
        if (auto e = each((*it)[i], std::string(key) + "[" + std::to_string(i) + "]")) return e;
    return std::nullopt;
}

#define CHECK(x)                      \
    do {                              \
        if (auto e_ = (x)) return e_; \
    } while (0)

std::optional<ApiError> worker_key(const json& o, const std::string& p) {
    CHECK(int_field(o, p, "run", 0, kI64Max, true));
    CHECK(int_field(o, p, "attempt", 0, 1'000'000'000, true));
    CHECK(int_field(o, p, "worker", 0, api::kMaxWorkers, true));
    return std::nullopt;
}

std::optional<ApiError> event(const json& e, const std::string& p) {
    if (!e.is_object()) return field_error(p, "must be an object");
    CHECK(only(e, p, {"seq", "kind", "run", "attempt", "worker", "pid", "step", "exit_code", "signal",
                      "we_signalled", "error"}));
    CHECK(int_field(e, p, "seq", 0, kI64Max, true));
    CHECK(string_field(e, p, "kind", 16, true));
    const std::string& kind = e["kind"].get_ref<const std::string&>();
    if (kind != "started" && kind != "progress" && kind != "exited")
        return field_error(at(p, "kind"), "must be \"started\", \"progress\" or \"exited\"");
    CHECK(worker_key(e, p));
    CHECK(int_field(e, p, "pid", 0, std::numeric_limits<std::int32_t>::max()));
    CHECK(int_field(e, p, "step", 0, kI64Max));
    CHECK(int_field(e, p, "exit_code", -1, 255));
    CHECK(int_field(e, p, "signal", 0, 128));
    CHECK(bool_field(e, p, "we_signalled"));
    CHECK(string_field(e, p, "error", 4096));
    return std::nullopt;
}

std::optional<ApiError> worker_entry(const json& w, const std::string& p) {
    if (!w.is_object()) return field_error(p, "must be an object");
    CHECK(only(w, p, {"run", "attempt", "worker", "pid", "gpus"}));
    CHECK(worker_key(w, p));
    CHECK(int_field(w, p, "pid", 0, std::numeric_limits<std::int32_t>::max()));
    if (auto g = w.find("gpus"); g != w.end()) {
        if (!g->is_array() || g->size() > static_cast<std::size_t>(api::kMaxGpusPerWorker))
            return field_error(at(p, "gpus"), "must be an array of GPU indices");
        for (const json& x : *g)
            if (!x.is_number_integer() || x.get<std::int64_t>() < 0 || x.get<std::int64_t>() > 1023)
                return field_error(at(p, "gpus"), "must be an array of GPU indices (integers in 0..1023)");
    }
    return std::nullopt;
}

std::optional<ApiError> gpu_sample(const json& s, const std::string& p) {
    if (!s.is_array() || s.size() > static_cast<std::size_t>(api::kMaxGpusPerWorker))
        return field_error(p, "must be an array of utilizations (numbers or null), one per GPU");
    for (const json& x : s)
        if (!x.is_number() && !x.is_null())
            return field_error(p, "must be an array of utilizations (numbers or null), one per GPU");
    return std::nullopt;
}

std::optional<ApiError> log_chunk(const json& c, const std::string& p) {
    if (!c.is_object()) return field_error(p, "must be an object");
    CHECK(only(c, p, {"run", "attempt", "worker", "offset", "data"}));
    CHECK(worker_key(c, p));
    CHECK(int_field(c, p, "offset", -1, kI64Max, true));
    CHECK(string_field(c, p, "data", std::size_t{1} << 30));
    return std::nullopt;
}

std::optional<ApiError> check_register(const json& b) {
    CHECK(only(b, "", {"name", "pool", "gpus", "session", "addr", "workers", "events"}));
    CHECK(string_field(b, "", "name", 255, true));
    CHECK(string_field(b, "", "pool", 255));
    CHECK(int_field(b, "", "gpus", 1, api::kMaxGpusPerWorker, true));
    CHECK(string_field(b, "", "session", 128, true, true));
    CHECK(string_field(b, "", "addr", 255));
    CHECK(array_field(b, "workers", kMaxAgentWorkers, worker_entry));
    CHECK(array_field(b, "events", kMaxAgentEvents, event));
    return std::nullopt;
}

std::optional<ApiError> check_heartbeat(const json& b) {
    CHECK(only(b, "", {"name", "session", "commands_acked", "events", "live", "gpu_util", "wait_ms"}));
    CHECK(string_field(b, "", "name", 255, true));
    CHECK(string_field(b, "", "session", 128));
    CHECK(int_field(b, "", "commands_acked", 0, kI64Max));
    CHECK(int_field(b, "", "live", 0, kI64Max));
    CHECK(int_field(b, "", "wait_ms", 0, 3'600'000));
    CHECK(array_field(b, "events", kMaxAgentEvents, event));
    CHECK(array_field(b, "gpu_util", kMaxAgentGpuSamples, gpu_sample));
    return std::nullopt;
}

std::optional<ApiError> check_logs(const json& b) {
    CHECK(only(b, "", {"name", "chunks"}));
    CHECK(string_field(b, "", "name", 255, true));
    if (!b.contains("chunks")) return field_error("chunks", "is required");
    CHECK(array_field(b, "chunks", kMaxAgentEvents, log_chunk));
    return std::nullopt;
}

#undef CHECK

}  // namespace

ApiResult<json> parse_agent_body(std::string_view body, AgentBody kind) {
    if (!api::valid_utf8(body)) return std::unexpected(ApiError{400, "the body is not valid UTF-8 (RFC 8259 JSON is UTF-8)"});
    json b = json::parse(body, nullptr, false);
    if (b.is_discarded()) return std::unexpected(ApiError{400, "malformed JSON"});
    if (!b.is_object()) return std::unexpected(ApiError{400, "the body must be a JSON object"});
    if (const std::string dup = api::duplicate_json_key(body); !dup.empty())
        return std::unexpected(ApiError{400, "duplicate key '" + dup + "' in the JSON body"});
    std::optional<ApiError> e;
    switch (kind) {
        case AgentBody::Register: e = check_register(b); break;
        case AgentBody::Heartbeat: e = check_heartbeat(b); break;
        case AgentBody::Logs: e = check_logs(b); break;
    }
    if (e) return std::unexpected(*e);
    return b;
}

}  // namespace astraeus::service
