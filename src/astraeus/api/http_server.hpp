// The REST API over HTTP (cpp-httplib; the only place that uses its server): base /v1, every
// endpoint of the service contract (docs/api.md), bearer tokens, JSON
// answers and {"error": "..."} failures. Handlers only parse requests and call the Service.
// Thread safety: the server runs its handlers on a thread pool; the Service is thread-safe.
#pragma once
#include <memory>
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/service/service.hpp"

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

class HttpServer {
public:
    /// `threads` handler threads (plus slots for slow clients); TLS when tls.enabled() (check
    /// the files with check_tls_files first).
    HttpServer(service::Service& svc, int threads, const TlsFiles& tls = {});
    ~HttpServer();
    /// Binds host:port (port 0: any free port); the bound port, or an error.
    Result<int> bind(const std::string& host, int port);
    /// Serves until stop() (blocks).
    void serve();
    /// Stops serve() (from another thread).
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace astraeus::api
