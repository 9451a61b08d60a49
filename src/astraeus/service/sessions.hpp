// The web pages' sign-in sessions (issue 22; docs/security.md "Web sessions"): the pure parts.
// The page trades its API token for a session (POST /v1/session): a random secret in an HttpOnly,
// SameSite=Strict cookie (Secure and named with the __Host- prefix over TLS) with a bounded
// Max-Age; the store keeps the secret's SHA-256 (store::SessionRec). Requests carrying the cookie
// act as the token (same scope). Cookies ride along with requests a browser makes for another
// page, so a request authenticated by the cookie that changes state must prove it comes from the
// pages themselves (csrf_refusal). Bearer-token clients are not concerned.
// Service::open_session and friends (service_sessions.cpp) use these; the HTTP server sets the
// cookies. Thread safety: pure functions.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"

namespace astraeus::service {

/// The header a state-changing request authenticated by the session cookie must carry, with the
/// value "1". A page of another origin cannot send it without a CORS preflight, which the server
/// never grants.
inline constexpr std::string_view kCsrfHeader = "X-Astraeus-CSRF";

/// The cookie's name: "__Host-astraeus_session" over TLS (the browser then accepts it only when
/// Secure, Path=/ and without Domain), "astraeus_session" otherwise.
std::string_view session_cookie_name(bool tls);

/// A new random session secret ("asts_" + 43 base64url characters, 32 random bytes); an error if
/// the random generator fails.
Result<std::string> new_session_secret();

/// The value of cookie `name` in a Cookie header value ("a=1; b=2"), or none. A name given twice:
/// the first (RFC 6265 5.4 sends the longest path first; ours is always Path=/).
std::optional<std::string> cookie_value(std::string_view cookie_header, std::string_view name);

/// The Set-Cookie value that stores `secret` for `max_age_s` seconds: HttpOnly; SameSite=Strict;
/// Path=/; Max-Age; Secure when `tls`.
std::string session_set_cookie(std::string_view secret, Seconds max_age_s, bool tls);
/// The Set-Cookie value that deletes the session cookie (Max-Age=0, same attributes).
std::string session_clear_cookie(bool tls);

/// What the CSRF rule looks at in a request (header values; "" when absent).
struct CsrfRequest {
    std::string_view method;      ///< "GET", "POST", ...
    std::string_view csrf;        ///< X-Astraeus-CSRF
    std::string_view origin;      ///< Origin
    std::string_view fetch_site;  ///< Sec-Fetch-Site
    std::string_view host;        ///< Host
    bool tls = false;             ///< the server speaks TLS
};

/// Why a request authenticated by the session cookie (or one that opens or ends a session) is
/// refused as a possible cross-site request forgery, "" when it is allowed (docs/security.md):
///  - Sec-Fetch-Site, when the browser sends it, must be "same-origin" (or "none": the user typed
///    the address), whatever the method;
///  - GET and HEAD change nothing: nothing more;
///  - any other method needs X-Astraeus-CSRF: 1, and an Origin, when sent, equal to the server's
///    own: https://HOST over TLS, http://HOST or https://HOST (a TLS proxy in front) otherwise.
std::string csrf_refusal(const CsrfRequest& r);

}  // namespace astraeus::service
