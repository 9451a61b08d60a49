// The HTTP transport of the `astra` client: the only file that knows cpp-httplib's client.
// One blocking request per call, no retries, no redirects; http, and https through Debian's
// cpp-httplib (built with OpenSSL; the server's certificate is verified against the system's CAs).
// Thread safety: each call is independent (its own connection); safe from several threads.
#pragma once
#include <string>

#include "astraeus/base/error.hpp"

namespace astraeus::client {

/// The answer to a request that reached the server: its status code, body and Content-Type.
struct HttpResponse {
    int status = 0;
    std::string body;
    std::string content_type;
    std::string retry_after;  ///< the Retry-After header ("" when absent)
};

/// One request.
struct HttpRequest {
    std::string method = "GET";   ///< GET or POST
    std::string origin;           ///< "http://host:port" or "https://host[:port]"
    std::string target;           ///< path and query, already percent-encoded: "/v1/runs?state=x"
    std::string bearer_token;     ///< sent as `Authorization: Bearer <token>` when not empty
    std::string body;             ///< sent with Content-Type application/json for POST
    std::string idempotency_key;  ///< sent as `Idempotency-Key` when not empty
    std::string ca_cert_file;     ///< https: CA certificates (PEM) to verify with; "" = system's
    int connect_timeout_s = 5;
    int read_timeout_s = 60;
};

/// Sends the request; the response whatever its status, or an error saying why no response
/// came back (cannot connect, timeout, connection closed).
Result<HttpResponse> http_send(const HttpRequest& request);

}  // namespace astraeus::client
