// The web pages' sign-in sessions (issue 22; docs/security.md "Web sessions"): open, check and
// end a session stored by its secret's SHA-256 (store::SessionRec). Lifetimes are in real
// seconds (the browser's Max-Age), not on the service's clock, which may run faster (tests).
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/sessions.hpp"
#include "astraeus/service/token.hpp"

namespace astraeus::service {

namespace {
/// A secret as new_session_secret() makes them ("asts_" + 43 base64url characters).
bool plausible_secret(std::string_view s) {
    if (s.size() != 48 || !s.starts_with("asts_")) return false;
    for (char ch : s.substr(5))
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
            return false;
    return true;
}
}  // namespace

ApiResult<Service::OpenedSession> Service::open_session(std::string_view body) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(body);
    } catch (const std::exception&) {
        return std::unexpected(ApiError{400, "the body must be JSON: {\"token\": \"astx_...\"}"});
    }
    if (!j.is_object() || j.size() != 1 || !j.contains("token") || !j["token"].is_string())
        return std::unexpected(ApiError{400, "the body must be {\"token\": \"astx_...\"} (an API token, nothing else)"});
    auto c = caller_of_token(j["token"].get<std::string>());
    if (!c) return std::unexpected(c.error());
    if (c->token.scope == store::Scope::Agent)
        return std::unexpected(ApiError{403, "agent tokens cannot sign in to the web pages"});
    auto secret = new_session_secret();
    if (!secret) return std::unexpected(ApiError{500, secret.error().message});
    const Seconds now = Clock::real_now();
    store::SessionRec rec;
    rec.token_id = c->token.id;
    rec.hash = sha256_hex(*secret);
    rec.created_s = now;
    rec.expires_s = now + cfg_.web_sessions.lifetime_s;
    {
        std::lock_guard lk(mu_);
        if (auto w = writable(); !w) return std::unexpected(w.error());
        if (auto id = store_->add_session(rec, cfg_.web_sessions.max_per_token, now); !id)
            return std::unexpected(ApiError{507, "the session was not stored: " + id.error().message, 10});
    }
    log(LogLevel::Info, "session.opened", {{"token", c->token.name}, {"expires_s", std::to_string(rec.expires_s)}});
    auto doc = whoami(*c);
    if (!doc) return std::unexpected(doc.error());
    (*doc)["expires_at"] = goodput::format_rfc3339(rec.expires_s);
    return OpenedSession{std::move(*secret), cfg_.web_sessions.lifetime_s, std::move(*doc)};
}

ApiResult<Caller> Service::authenticate_session(std::string_view secret) {
    if (!plausible_secret(secret)) return std::unexpected(ApiError{401, "invalid session: sign in again"});
    const std::string hash = sha256_hex(secret);
    std::lock_guard lk(mu_);
    auto s = store_->session_by_hash(hash);
    if (!s) return std::unexpected(ApiError{500, s.error().message});
    if (!*s) return std::unexpected(ApiError{401, "no such session (signed out, or ended by a newer sign-in): sign in again"});
    const auto& [session, token] = **s;
    if (Clock::real_now() >= session.expires_s) return std::unexpected(ApiError{401, "the session expired: sign in again"});
    if (token.revoked) return std::unexpected(ApiError{401, "the token was revoked"});
    if (token.org_id != org_.id) return std::unexpected(ApiError{401, "the token is not for this organisation"});
    if (token.scope == store::Scope::Agent)
        return std::unexpected(ApiError{403, "agent tokens can call only the agent endpoints (/v1/agent/...)"});
    if (token.scope == store::Scope::Workspace && !workspaces_.contains(token.workspace_id)) refresh_workspaces();
    return Caller{token};
}

ApiResult<void> Service::close_session(std::string_view secret) {
    if (!plausible_secret(secret)) return {};
    const std::string hash = sha256_hex(secret);
    std::lock_guard lk(mu_);
    if (auto gone = store_->delete_session(hash); !gone)
        return std::unexpected(ApiError{507, "the sign-out was not stored: " + gone.error().message, 10});
    return {};
}

}  // namespace astraeus::service
