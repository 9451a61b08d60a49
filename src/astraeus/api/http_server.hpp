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

class HttpServer {
public:
    HttpServer(service::Service& svc, int threads);
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
