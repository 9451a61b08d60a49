// The REST API over HTTP/1.1 (Boost.Beast on Boost.Asio, event-driven; docs/architecture.md):
// base /v1, every endpoint of the service contract (docs/api.md), bearer tokens (or the web pages'
// session cookie under the CSRF rule: service/sessions.hpp), JSON answers and
// {"error": "..."} failures. Handlers only parse requests and call the Service. Bounds on
// requests and connections: api/http_limits.hpp (docs/security.md).
// Thread safety: a few I/O threads serve every connection; the Service's calls run on two
// handler pools (users, node agents); the Service is thread-safe. stop() may be called from any
// thread.
#pragma once
#include <memory>
#include <string>

#include <cstdint>
#include <functional>

#include "astraeus/api/http_limits.hpp"
#include "astraeus/api/listen_socket.hpp"
#include "astraeus/base/error.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/store/lease.hpp"

namespace astraeus::api {

/// TLS for `astraeus serve --tls-cert FILE --tls-key FILE` (PEM files); both empty: plain HTTP.
struct TlsFiles {
    std::string cert_file;  ///< the server's certificate chain, PEM
    std::string key_file;   ///< its private key, PEM (unencrypted)
    bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
};

/// Checks TLS files before serving: both given, readable, a PEM certificate, a PEM private key,
/// and the key matches the certificate; an error naming the file and what is wrong otherwise.
Result<void> check_tls_files(const TlsFiles& tls);

/// A warning when the key file can be read by the group or by others (its mode allows it), ""
/// otherwise (or when it cannot be examined).
std::string tls_key_warning(const TlsFiles& tls);

/// What a follower replica's server answers from (issue 23, docs/operations.md "Replicas"):
/// the user reads (GET under /v1 but a run's logs, and the web pages) from the current read-only
/// snapshot, with the same tokens, visibility and JSON as the leader, plus the headers
/// X-Astraeus-Role: follower and X-Astraeus-Data-Age-Ms; /healthz 200; /readyz, every write
/// (POST, PUT, PATCH, DELETE: the web sessions included), the agents' endpoints, the logs, and
/// everything while no snapshot is loaded: 503 with Retry-After and the leader's id and address
/// ({"error", "status": "follower", "leader", "leader_address", "generation", "retry_after_s"});
/// /metrics and /v1/goodput/metrics: the lease's series only, no token (they name no tenant).
struct FollowerSource {
    std::function<std::shared_ptr<service::Service>()> snapshot;  ///< null until one is loaded
    std::function<std::int64_t()> data_age_ms;                    ///< the snapshot's age (-1: none)
    std::function<store::LeaseView()> leader;                     ///< the lease as last seen
    std::function<std::string()> lease_metrics;                   ///< Prometheus text of the lease
    int retry_after_s = 1;                                        ///< refusals' Retry-After
};

class HttpServer {
public:
    /// `threads` handler threads for users and as many for the node agents; TLS when
    /// tls.enabled() (check the files with check_tls_files first). Raises RLIMIT_NOFILE's soft
    /// limit to its hard limit (the connection budget comes from it).
    HttpServer(service::Service& svc, int threads, const TlsFiles& tls = {}, const HttpLimits& limits = {});
    /// A follower replica's server (FollowerSource); otherwise as above.
    HttpServer(FollowerSource follower, int threads, const TlsFiles& tls = {}, const HttpLimits& limits = {});
    ~HttpServer();
    /// Binds host:port, an IP address (port 0: any free port); the bound port, or an error.
    Result<int> bind(const std::string& host, int port);
    /// Binds a second listener for the node agents (`--agent-listen`): the agent endpoints and
    /// /healthz, /readyz only, with its own connection budget (1,024), so user connections
    /// cannot take the agents' place. Call before serve().
    Result<int> bind_agents(const std::string& host, int port);
    /// As bind() and bind_agents(), on a socket already listening (ListenSocket::open): the
    /// server takes it over; its port, or an error.
    Result<int> bind(ListenSocket socket);
    Result<int> bind_agents(ListenSocket socket);
    /// Connections the main listener holds at once (after bind()).
    std::size_t connection_budget() const;
    /// Serves until stop() (blocks).
    void serve();
    /// Stops serve() (from another thread).
    void stop();

private:
    void add_routes();
    Result<int> listen(ListenSocket socket, bool agents_only);
    /// listen() on a socket opened on host:port (after the TLS check, as bind's errors were).
    Result<int> listen(const std::string& host, int port, bool agents_only);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace astraeus::api
