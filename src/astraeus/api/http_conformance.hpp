// HTTP conformance of the REST API (issue 14), apart from the endpoints themselves: which
// methods a path answers (405 with `Allow`), bounded and always-serialisable error messages,
// UTF-8 checks. Pure functions and one small table; no cpp-httplib here (http_server.cpp uses
// these). Thread safety: RouteTable is filled before serving and then only read (thread-safe).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace astraeus::api {

/// The routes of the server: a method and a path pattern each, as registered with cpp-httplib
/// (a literal path, or segments `([^/]+)` that match one non-empty segment).
class RouteTable {
public:
    void add(std::string method, std::string pattern);
    /// The methods routes answer for `path`, sorted, without repeats, joined by ", " (an
    /// `Allow` header value; HEAD with GET); "" when no route matches.
    std::string allowed(std::string_view path) const;
    /// True when a route answers `method` on `path` (HEAD with GET).
    bool allows(std::string_view path, std::string_view method) const;

private:
    struct Route {
        std::string method;
        std::vector<std::string> segments;  ///< "\x01" = any one non-empty segment
    };
    std::vector<Route> routes_;
};

/// True when `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, <= U+10FFFF).
bool valid_utf8(std::string_view s);

/// An error message safe to send: every quoted echo ('...') longer than `max_echo` bytes is
/// cut to `max_echo` bytes (on a UTF-8 boundary) followed by "...", the whole message to
/// 4 x max_echo bytes likewise, and invalid UTF-8 bytes are replaced with '?'.
std::string bounded_message(std::string_view message, std::size_t max_echo = 200);

}  // namespace astraeus::api
