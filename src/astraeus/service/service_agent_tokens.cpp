// Agent tokens bound to one machine (docs/security.md "Agent tokens"): the first registration
// of an agent token binds it to the machine name it registers (stored in the store, so a
// restart of the service keeps it); a registration or heartbeat naming another machine with
// that token is refused (403), so a stolen or shared agent token cannot take over, or
// impersonate, the other machines of the cluster. The same name registering again (an agent
// restarted, or re-attaching after a restart of the service) is fine.
#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"

namespace astraeus::service {

namespace {

ApiError bound_elsewhere(const Caller& c, const std::string& bound, const std::string& name) {
    return ApiError{403, "agent token '" + c.token.name + "' is bound to machine '" + bound +
                             "' (its first registration); machine '" + name +
                             "' needs its own agent token (astraeus admin token create --agent)"};
}

}  // namespace

ApiResult<void> Service::bind_agent_token(const Caller& c, const std::string& name) {
    auto it = agent_tokens_.find(c.token.id);
    if (it == agent_tokens_.end()) {
        auto bound = store_->bind_agent_token(c.token.id, name);
        if (!bound && bound.error().message.starts_with("machine name bound to another agent token")) {
            // A takeover: this token never registered, the name is another token's.
            log(LogLevel::Warn, "agent.takeover_refused", {{"token", c.token.name}, {"machine", name}});
            return std::unexpected(ApiError{403, "machine name '" + name + "' is bound to another agent token; "
                                                 "each machine has its own token (astraeus admin token create --agent)"});
        }
        if (!bound) return std::unexpected(ApiError{500, bound.error().message});
        it = agent_tokens_.emplace(c.token.id, *bound).first;
    }
    if (it->second != name) {
        log(LogLevel::Warn, "agent.token_refused",
            {{"token", c.token.name}, {"bound_to", it->second}, {"machine", name}});
        return std::unexpected(bound_elsewhere(c, it->second, name));
    }
    return {};
}

ApiResult<bool> Service::agent_token_registered(const Caller& c, const std::string& name) const {
    auto it = agent_tokens_.find(c.token.id);
    if (it == agent_tokens_.end()) return false;
    if (it->second != name) return std::unexpected(bound_elsewhere(c, it->second, name));
    return true;
}

}  // namespace astraeus::service
