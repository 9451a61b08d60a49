// Fuzz target of the node agents' request bodies (service/agent_body.hpp): the first byte picks
// the endpoint (register, heartbeat, logs), the rest is the body. Properties of an accepted
// body: a JSON object whose fields the service then reads without a type error (each read here
// as the handlers read it), and no key given twice.
#include <cstdint>
#include <string_view>

#include "astraeus/api/http_conformance.hpp"
#include "astraeus/service/agent_body.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    using astraeus::service::AgentBody;
    const AgentBody kind = data[0] % 3 == 0 ? AgentBody::Register : data[0] % 3 == 1 ? AgentBody::Heartbeat : AgentBody::Logs;
    const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
    auto b = astraeus::service::parse_agent_body(body, kind);
    if (!b) return 0;
    if (!b->is_object() || !astraeus::api::duplicate_json_key(body).empty()) __builtin_trap();
    // The handlers' reads: they throw (a 500) on a wrong type; an accepted body must not.
    (void)b->value("name", "");
    if (kind == AgentBody::Register) {
        (void)b->value("pool", "default");
        (void)b->value("session", "");
        (void)b->value("addr", "");
        (void)(*b)["gpus"].get<int>();
    } else if (kind == AgentBody::Heartbeat) {
        (void)b->value("wait_ms", 0);
        (void)b->value("session", "");
    }
    for (const char* list : {"events", "workers", "chunks"})
        if (auto it = b->find(list); it != b->end())
            for (const auto& e : *it) {
                if (!e.is_object()) __builtin_trap();
                (void)e.value("kind", "");
                (void)e.value("we_signalled", false);
                (void)e.value("data", "");
            }
    return 0;
}
