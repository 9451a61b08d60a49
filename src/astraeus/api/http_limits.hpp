// The HTTP server's bounds on requests and connections (api/http_server.hpp, api/http_request.hpp;
// docs/security.md "Slow and hostile clients"). Plain values.
#pragma once
#include <chrono>
#include <cstddef>

namespace astraeus::api {

/// The server's bounds on requests and connections (docs/security.md "Slow and hostile clients").
struct HttpLimits {
    std::size_t max_header_bytes = 32 << 10;   ///< request line and header fields, bytes (431)
    std::size_t max_header_fields = 100;       ///< header fields (431)
    std::size_t max_target_bytes = 8 << 10;    ///< the request target, bytes (414)
    std::size_t max_body_bytes = 1 << 20;      ///< the body after de-chunking, bytes (413)
    /// A request's line and headers must arrive within this time from the connection's start or
    /// its previous answer (idle keep-alive connections included); the TLS handshake too.
    std::chrono::milliseconds header_timeout{10'000};
    std::chrono::milliseconds body_timeout{30'000};   ///< the whole body, from its first byte
    std::chrono::milliseconds write_timeout{30'000};  ///< one answer
    /// Connections held at once on the main listener; beyond it a new one is closed at once.
    /// 0: from RLIMIT_NOFILE (raised to its hard limit at start) less a reserve.
    std::size_t max_connections = 0;
};

}  // namespace astraeus::api
