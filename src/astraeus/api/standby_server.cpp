// The follower's HTTP server (api/standby_server.hpp) on cpp-httplib: a handful of fixed answers.
#include "astraeus/api/standby_server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>
#include <thread>

namespace astraeus::api {

struct StandbyServer::Impl {
    std::function<store::LeaseView()> view;
    std::function<std::string()> metrics;
    int retry_after_s;
    httplib::Server srv;
    std::thread th;
};

StandbyServer::StandbyServer(std::function<store::LeaseView()> view, std::function<std::string()> metrics,
                             int retry_after_s)
    : impl_(new Impl{std::move(view), std::move(metrics), std::max(1, retry_after_s), {}, {}}) {
    Impl& s = *impl_;
    // SO_REUSEADDR, as the leader's server (api/http_server.cpp), not httplib's default
    // SO_REUSEPORT alone: the connections this follower served and closed stay in TIME_WAIT
    // on its port, and without SO_REUSEADDR on them the leader's server, taking over that port,
    // cannot bind it for a minute (seen with node agents polling a follower).
    s.srv.set_socket_options([](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    auto follower = [&s](int status, const std::string& what) {
        const store::LeaseView v = s.view();
        nlohmann::json b{{"error", what + ": this replica is a follower; the leader is " +
                                       (v.holder.empty() ? std::string("not known yet") : v.holder) +
                                       (v.holder_address.empty() ? "" : " at " + v.holder_address)},
                         {"status", "follower"},
                         {"leader", v.holder},
                         {"leader_address", v.holder_address},
                         {"generation", v.generation},
                         {"retry_after_s", s.retry_after_s}};
        return std::pair{status, b.dump()};
    };
    s.srv.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
        res.set_content(R"({"status":"ok","role":"follower"})", "application/json");
    });
    s.srv.Get("/readyz", [&s, follower](const httplib::Request&, httplib::Response& res) {
        auto [st, body] = follower(503, "not ready");
        res.status = st;
        res.set_header("Retry-After", std::to_string(s.retry_after_s));
        res.set_content(body, "application/json");
    });
    auto serve_metrics = [&s](const httplib::Request&, httplib::Response& res) {
        res.set_content(s.metrics(), "text/plain; version=0.0.4; charset=utf-8");
    };
    s.srv.Get("/v1/goodput/metrics", serve_metrics);
    s.srv.Get("/metrics", serve_metrics);
    auto refuse = [&s, follower](const httplib::Request&, httplib::Response& res) {
        auto [st, body] = follower(503, "unavailable");
        res.status = st;
        res.set_header("Retry-After", std::to_string(s.retry_after_s));
        res.set_content(body, "application/json");
    };
    for (const char* p : {".*"}) {
        s.srv.Get(p, refuse);
        s.srv.Post(p, refuse);
        s.srv.Put(p, refuse);
        s.srv.Patch(p, refuse);
        s.srv.Delete(p, refuse);
    }
}

StandbyServer::~StandbyServer() { stop(); }

Result<int> StandbyServer::start(const std::string& host, int port) {
    Impl& s = *impl_;
    int bound = port;
    if (port == 0) {
        bound = s.srv.bind_to_any_port(host);
        if (bound < 0) return fail("cannot listen on " + host + ":0");
    } else if (!s.srv.bind_to_port(host, port)) {
        return fail("cannot listen on " + host + ":" + std::to_string(port));
    }
    s.th = std::thread([&s] { s.srv.listen_after_bind(); });
    return bound;
}

void StandbyServer::stop() {
    Impl& s = *impl_;
    if (!s.th.joinable()) return;
    s.srv.stop();
    s.th.join();
}

}  // namespace astraeus::api
