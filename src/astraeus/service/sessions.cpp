#include "astraeus/service/sessions.hpp"

#include "astraeus/service/token.hpp"

namespace astraeus::service {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::string attributes(bool tls) {
    return std::string("; Path=/; HttpOnly; SameSite=Strict") + (tls ? "; Secure" : "");
}

}  // namespace

std::string_view session_cookie_name(bool tls) { return tls ? "__Host-astraeus_session" : "astraeus_session"; }

Result<std::string> new_session_secret() { return new_token("asts_"); }

std::optional<std::string> cookie_value(std::string_view header, std::string_view name) {
    while (!header.empty()) {
        const std::size_t semi = std::min(header.find(';'), header.size());
        const std::string_view pair = trim(header.substr(0, semi));
        header.remove_prefix(std::min(header.size(), semi + 1));
        const std::size_t eq = pair.find('=');
        if (eq == std::string_view::npos || trim(pair.substr(0, eq)) != name) continue;
        std::string_view v = trim(pair.substr(eq + 1));
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        return std::string(v);
    }
    return std::nullopt;
}

std::string session_set_cookie(std::string_view secret, Seconds max_age_s, bool tls) {
    return std::string(session_cookie_name(tls)) + "=" + std::string(secret) + attributes(tls) +
           "; Max-Age=" + std::to_string(max_age_s);
}

std::string session_clear_cookie(bool tls) {
    return std::string(session_cookie_name(tls)) + "=" + attributes(tls) + "; Max-Age=0";
}

std::string csrf_refusal(const CsrfRequest& r) {
    if (!r.fetch_site.empty() && r.fetch_site != "same-origin" && r.fetch_site != "none")
        return "cross-site request refused (Sec-Fetch-Site: " + std::string(r.fetch_site) +
               "): the session cookie is for the pages of this server only";
    if (r.method == "GET" || r.method == "HEAD") return {};
    if (r.csrf != "1")
        return std::string("a request that changes state with the session cookie needs the header ") +
               std::string(kCsrfHeader) + ": 1 (sent by the pages; API clients use Authorization: Bearer)";
    if (!r.origin.empty()) {
        const std::string host(r.host);
        const bool same = !host.empty() && (r.origin == "https://" + host || (!r.tls && r.origin == "http://" + host));
        if (!same)
            return "cross-origin request refused (Origin: " + std::string(r.origin) +
                   "): the session cookie is for the pages of this server only";
    }
    return {};
}

}  // namespace astraeus::service
