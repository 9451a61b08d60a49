#include "astraeus/client/agent_api_url.hpp"

namespace astraeus::client {

namespace {
Error bad(std::string_view url, std::string_view why) {
    return Error{"--api '" + std::string(url) + "': " + std::string(why) +
                 " (expected http[s]://HOST[:PORT] or http[s]://HOST[:PORT]/v1, e.g. http://scheduler:8080)"};
}

bool valid_port(std::string_view p) {
    if (p.empty() || p.size() > 5) return false;
    int v = 0;
    for (char ch : p) {
        if (ch < '0' || ch > '9') return false;
        v = v * 10 + (ch - '0');
    }
    return v >= 1 && v <= 65535;
}
}  // namespace

Result<std::string> parse_agent_api_url(std::string_view url) {
    std::string_view rest = url;
    std::string_view scheme;
    if (rest.starts_with("http://")) scheme = "http://";
    else if (rest.starts_with("https://")) scheme = "https://";
    else return std::unexpected(bad(url, "not an http:// or https:// URL"));
    rest.remove_prefix(scheme.size());
    const auto slash = rest.find('/');
    const std::string_view authority = rest.substr(0, slash);
    const std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    if (authority.find_first_of("@?# ") != std::string_view::npos)
        return std::unexpected(bad(url, "the host part holds '@', '?', '#' or a space"));
    std::string_view host = authority, port;
    if (authority.starts_with('[')) {  // [IPv6]:PORT
        const auto close = authority.find(']');
        if (close == std::string_view::npos || close == 1)
            return std::unexpected(bad(url, "an unclosed or empty [IPv6] host"));
        host = authority.substr(0, close + 1);
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return std::unexpected(bad(url, "text after the [IPv6] host"));
            port = after.substr(1);
            if (!valid_port(port)) return std::unexpected(bad(url, "the port is not a number in 1..65535"));
        }
    } else if (const auto colon = authority.find(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
        if (!valid_port(port)) return std::unexpected(bad(url, "the port is not a number in 1..65535"));
    }
    if (host.empty()) return std::unexpected(bad(url, "no host"));
    if (!(path.empty() || path == "/" || path == "/v1" || path == "/v1/"))
        return std::unexpected(bad(url, "the path must be empty or /v1"));
    return std::string(scheme) + std::string(authority);
}

}  // namespace astraeus::client
