// The HTTP server of a follower replica (issue 23, service/leadership.hpp): while another
// replica leads the database, GET /healthz answers 200 (alive), GET /readyz 503 saying
// "follower" with the leader's replica id and address, GET /v1/goodput/metrics (and /metrics)
// the leader lease's series only (no token needed: they name no tenant), and every other route
// 503 with Retry-After and the leader's address (clients and agents retry against it).
// Thread safety: start/stop from one thread; `view` is called from the server's threads.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/store/lease.hpp"

namespace astraeus::api {

class StandbyServer {
public:
    /// `view`: the lease as last seen; `metrics`: the Prometheus text served; `retry_after_s`:
    /// the Retry-After of refused requests (the lease_renew_s, at least 1).
    StandbyServer(std::function<store::LeaseView()> view, std::function<std::string()> metrics, int retry_after_s);
    ~StandbyServer();
    /// Binds `host`:`port` (0: any) and serves in a thread; the bound port, or an error naming the address.
    Result<int> start(const std::string& host, int port);
    /// Stops serving and closes the port (the leader's server binds it next).
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace astraeus::api
