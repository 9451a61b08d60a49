#include "astraeus/api/http_server.hpp"

#include <httplib.h>

#include <chrono>
#include <optional>

#include "astraeus/goodput_io/prometheus_text.hpp"
#include "astraeus/service/log.hpp"

namespace astraeus::api {

using service::ApiError;
using service::ApiResult;
using service::Caller;
using service::Params;

struct HttpServer::Impl {
    service::Service& svc;
    httplib::Server http;
    explicit Impl(service::Service& s) : svc(s) {}
};

namespace {

void send_json(httplib::Response& res, int status, const nlohmann::json& j) {
    res.status = status;
    res.set_content(j.dump() + "\n", "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
    send_json(res, e.status, nlohmann::json{{"error", e.message}});
}

Params params_of(const httplib::Request& req) {
    Params p;
    for (const auto& [k, v] : req.params) p[k] = v;
    return p;
}

/// A query parameter given more than once (?by=run&by=pool) is an error, not "the last wins".
std::optional<ApiError> repeated_param(const httplib::Request& req) {
    for (auto it = req.params.begin(); it != req.params.end(); ++it)
        if (req.params.count(it->first) > 1)
            return ApiError{400, "query parameter '" + it->first + "' is given more than once"};
    return std::nullopt;
}

}  // namespace

HttpServer::HttpServer(service::Service& svc, int threads) : impl_(std::make_unique<Impl>(svc)) {
    httplib::Server& s = impl_->http;
    service::Service& sv = svc;
    const std::size_t n = static_cast<std::size_t>(threads);
    s.new_task_queue = [n] { return new httplib::ThreadPool(n); };
    s.set_payload_max_length(1 << 20);
    // httplib's default also sets SO_REUSEPORT, which lets a second server bind the same port
    // and take half of the requests: keep SO_REUSEADDR only (a second bind then fails).
    s.set_socket_options([](socket_t sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
    });

    // Every handler: authenticate, then the call; the result as JSON.
    using JsonCall = std::function<ApiResult<nlohmann::json>(const Caller&, const httplib::Request&)>;
    auto route = [&sv](int ok_status, JsonCall call) {
        return [&sv, ok_status, call](const httplib::Request& req, httplib::Response& res) {
            auto caller = sv.authenticate(req.get_header_value("Authorization"));
            if (!caller) return send_error(res, caller.error());
            if (auto e = repeated_param(req)) return send_error(res, *e);
            auto out = call(*caller, req);
            if (!out) return send_error(res, out.error());
            send_json(res, ok_status, *out);
        };
    };
    s.Post("/v1/runs", route(201, [&sv](const Caller& c, const httplib::Request& r) {
               return sv.submit(c, r.body);
           }));
    s.Get("/v1/runs", route(200, [&sv](const Caller& c, const httplib::Request& r) {
              return sv.list_runs(c, params_of(r));
          }));
    s.Get(R"(/v1/runs/([^/]+)/goodput)", route(200, [&sv](const Caller& c, const httplib::Request& r) {
              return sv.run_goodput(c, r.matches[1].str(), params_of(r));
          }));
    s.Post(R"(/v1/runs/([^/]+)/stop)", route(202, [&sv](const Caller& c, const httplib::Request& r) {
               return sv.stop_run(c, r.matches[1].str(), params_of(r));
           }));
    s.Post(R"(/v1/runs/([^/]+)/progress)", route(200, [&sv](const Caller& c, const httplib::Request& r) {
               return sv.report_progress(c, r.matches[1].str(), params_of(r), r.body);
           }));
    s.Get(R"(/v1/runs/([^/]+)/logs)", route(200, [&sv](const Caller& c, const httplib::Request& r) {
              return sv.run_logs(c, r.matches[1].str(), params_of(r));
          }));
    s.Get(R"(/v1/runs/([^/]+))", route(200, [&sv](const Caller& c, const httplib::Request& r) {
              return sv.show_run(c, r.matches[1].str(), params_of(r));
          }));
    s.Get("/v1/goodput", route(200, [&sv](const Caller& c, const httplib::Request& r) {
              return sv.goodput(c, params_of(r));
          }));
    s.Get("/v1/goodput/weekly", route(200, [&sv](const Caller& c, const httplib::Request& r) {
              return sv.goodput_weekly(c, params_of(r));
          }));
    s.Get(R"(/v1/organizations/([^/]+)/clusters/([^/]+)/goodput)",
          route(200, [&sv](const Caller& c, const httplib::Request& r) {
              return sv.cluster_goodput(c, r.matches[1].str(), r.matches[2].str(), params_of(r));
          }));
    s.Get("/v1/alerts", route(200, [&sv](const Caller& c, const httplib::Request&) {
              return sv.alerts(c);
          }));
    // Machines (operators and org admins) and the node agents' endpoints (agent tokens only).
    s.Get("/v1/machines", route(200, [&sv](const Caller& c, const httplib::Request&) {
              return sv.machines_list(c);
          }));
    s.Post(R"(/v1/machines/([^/]+)/(drain|undrain))", route(200, [&sv](const Caller& c, const httplib::Request& r) {
               return sv.drain_machine(c, r.matches[1].str(), r.matches[2].str() == "drain");
           }));
    auto agent_route = [&sv](std::function<ApiResult<nlohmann::json>(const Caller&, const httplib::Request&)> call) {
        return [&sv, call](const httplib::Request& req, httplib::Response& res) {
            auto caller = sv.authenticate_agent(req.get_header_value("Authorization"));
            if (!caller) return send_error(res, caller.error());
            auto out = call(*caller, req);
            if (!out) return send_error(res, out.error());
            send_json(res, 200, *out);
        };
    };
    s.Post("/v1/agent/register", agent_route([&sv](const Caller& c, const httplib::Request& r) {
               return sv.agent_register(c, r.body, r.remote_addr);
           }));
    s.Post("/v1/agent/heartbeat", agent_route([&sv](const Caller& c, const httplib::Request& r) {
               return sv.agent_heartbeat(c, r.body);
           }));
    s.Post("/v1/agent/events", agent_route([&sv](const Caller& c, const httplib::Request& r) {
               return sv.agent_heartbeat(c, r.body);
           }));
    s.Get("/v1/goodput/metrics", [&sv](const httplib::Request& req, httplib::Response& res) {
        auto caller = sv.authenticate(req.get_header_value("Authorization"));
        if (!caller) return send_error(res, caller.error());
        auto text = sv.metrics(*caller);
        if (!text) return send_error(res, text.error());
        res.status = 200;
        res.set_content(*text, std::string(goodput::kPrometheusContentType).c_str());
    });
    s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return;
        if (res.status == 404) return send_error(res, {404, "no such endpoint: " + req.method + " " + req.path});
        if (res.status == 405) return send_error(res, {405, "method not allowed"});
        if (res.status == 400)
            return send_error(res, {400, "bad request (a POST needs a body, or Content-Length: 0)"});
        if (res.status == 413) return send_error(res, {413, "the body is larger than 1 MiB"});
        send_error(res, {res.status, "request failed"});
    });
    s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
            if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        service::log(service::LogLevel::Error, "http.exception", {{"error", what}});
        send_error(res, {500, "internal error"});
    });
    s.set_logger([](const httplib::Request& req, const httplib::Response& res) {
        service::log(service::LogLevel::Debug, "http.request",
                     {{"method", req.method}, {"path", req.path}, {"status", std::to_string(res.status)}});
    });
}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::bind(const std::string& host, int port) {
    if (port == 0) {
        const int p = impl_->http.bind_to_any_port(host);
        if (p <= 0) return fail("cannot listen on " + host + " (any port)");
        return p;
    }
    if (!impl_->http.bind_to_port(host, port))
        return fail("cannot listen on " + host + ":" + std::to_string(port) + " (in use, or not a local address)");
    return port;
}

void HttpServer::serve() { impl_->http.listen_after_bind(); }

void HttpServer::stop() { impl_->http.stop(); }

}  // namespace astraeus::api
