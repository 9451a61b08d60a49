// The REST client of `astra` (docs/api.md): where the API is (ASTRALYX_API), the token
// (ASTRALYX_TOKEN), URL building and how an answer maps to an exit code.
// Thread safety: ApiClient is immutable after construction; calls are independent.
#pragma once
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"

namespace astraeus::client {

/// Exit codes of `astra`: 0 ok, 1 cannot connect or the server failed (5xx, bad answer),
/// 2 usage error, configuration error or a 4xx answer, 3 the run followed by
/// `astra runs logs --follow` (without --attempt) ended failed or stopped.
inline constexpr int kExitOk = 0;
inline constexpr int kExitServer = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRunNotSucceeded = 3;

/// Where the API lives, split from ASTRALYX_API ("http://127.0.0.1:8080/v1").
struct ApiLocation {
    std::string origin;     ///< "http://127.0.0.1:8080" (scheme, host and port)
    std::string base_path;  ///< "/v1" (no trailing slash; may be empty)
};

/// Splits an API URL; an error naming the variable's expected form when it is not
/// http[s]://host[:port][/path].
Result<ApiLocation> parse_api_url(std::string_view url);

/// RFC 3986 percent-encoding of one path segment or query value (unreserved characters kept).
std::string percent_encode(std::string_view s);

/// Why a call did not give a 2xx answer: the message for stderr and the exit code.
struct CallFailure {
    int exit_code = kExitServer;
    std::string message;
    int http_status = 0;    ///< the answer's status; 0 when none came back
    int retry_after_s = 0;  ///< the answer's Retry-After (seconds; 0 when absent)
};

/// A 2xx answer's body, or the failure.
using CallResult = std::expected<std::string, CallFailure>;

class ApiClient {
public:
    /// From the values of ASTRALYX_API and ASTRALYX_TOKEN (nullptr when unset): a client, or a
    /// failure with exit code 2 saying which variable to set and how.
    static std::expected<ApiClient, CallFailure> from_env(const char* api, const char* token);

    ApiClient(ApiLocation location, std::string token);

    /// GET base_path + path with the query (values percent-encoded, in key order).
    CallResult get(std::string_view path,
                   const std::map<std::string, std::string>& query = {}) const;
    /// POST base_path + path with a JSON body.
    CallResult post(std::string_view path, const std::string& json_body,
                    const std::map<std::string, std::string>& query = {}) const;

    /// POST base_path + "/runs" with a JSON body and an Idempotency-Key of its own (random,
    /// 128 bits), retried with the same key when no answer came back, or on a 429 or a 5xx other
    /// than 507: `retries` times at most, waiting 1, 2, 4, ... s (a 429's Retry-After, at most
    /// 30 s). The server answers a retry of a submission it already made with its first reply
    /// (docs/api.md "Idempotent submits"). Each retry is said on `notes` (e.g. stderr).
    CallResult submit_run(const std::string& json_body, int retries, std::ostream& notes) const;

    const ApiLocation& location() const { return location_; }

    /// Verifies an https server with the CA certificate(s) in PEM file `path` instead of the
    /// system's CAs; an error naming the file when it cannot be read or holds no certificate.
    Result<void> set_ca_cert(const std::string& path);

private:
    CallResult call(std::string method, std::string_view path,
                    const std::map<std::string, std::string>& query, std::string body,
                    const std::string& idempotency_key = {}) const;

    ApiLocation location_;
    std::string token_;
    std::string ca_cert_file_;
};

}  // namespace astraeus::client
