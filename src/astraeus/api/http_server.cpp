#include "astraeus/api/http_server.hpp"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "astraeus/api/http_conformance.hpp"
#include "astraeus/goodput_io/prometheus_text.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/web/assets.hpp"

namespace astraeus::api {

using service::ApiError;
using service::ApiResult;
using service::Caller;
using service::Params;

struct HttpServer::Impl {
    service::Service& svc;
    std::unique_ptr<httplib::Server> owned;
    httplib::Server& http;
    RouteTable routes;
    Impl(service::Service& s, std::unique_ptr<httplib::Server> server)
        : svc(s), owned(std::move(server)), http(*owned) {}
};

namespace {

void send_error(httplib::Response& res, const ApiError& e);

/// A POST handler that reads the body itself. cpp-httplib 0.11 (Debian 12) refuses with 413 any
/// body over 8,192 bytes whose Content-Type is application/x-www-form-urlencoded (its
/// CPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH; curl -d sends that type) before a handler
/// runs; a content-reader handler skips that form parsing, so only set_payload_max_length (1 MiB)
/// limits a body, whatever its Content-Type. POSTs without a body still reach the plain handler.
httplib::Server::HandlerWithContentReader reading_body(httplib::Server::Handler h) {
    return [h = std::move(h)](const httplib::Request& req, httplib::Response& res,
                              const httplib::ContentReader& reader) {
        if (req.is_multipart_form_data())  // its reader needs multipart callbacks: JSON only here
            return send_error(res, {400, "a multipart/form-data body: the API takes JSON (Content-Type: application/json)"});
        std::string body;
        // Neither Content-Length nor chunked: the request has no body (RFC 9112 6.3), e.g.
        // `curl -X POST URL` without -d. cpp-httplib's reader fails on it ("could not be read").
        const bool has_body = req.has_header("Content-Length") ||
                              req.get_header_value("Transfer-Encoding").find("chunked") !=
                                  std::string::npos;
        const bool ok = !has_body || reader([&body](const char* data, std::size_t n) {
            body.append(data, n);
            return true;
        });
        if (!ok) {
            if (res.status == 413) return send_error(res, {413, "the body is larger than 1 MiB"});
            return send_error(res, {400, "the body could not be read (shorter than its Content-Length?)"});
        }
        httplib::Request full = req;
        full.body = std::move(body);
        h(full, res);
    };
}

/// Registers handlers with cpp-httplib and records their method and pattern (405 + Allow).
struct RouteRecorder {
    httplib::Server& http;
    RouteTable& table;
    RouteRecorder& Get(const std::string& p, httplib::Server::Handler h) {
        table.add("GET", p);
        http.Get(p, std::move(h));
        return *this;
    }
    RouteRecorder& Post(const std::string& p, httplib::Server::Handler h) {
        table.add("POST", p);
        http.Post(p, reading_body(h));
        http.Post(p, std::move(h));
        return *this;
    }
    RouteRecorder& Put(const std::string& p, httplib::Server::Handler h) {
        table.add("PUT", p);
        http.Put(p, std::move(h));
        return *this;
    }
    RouteRecorder& Delete(const std::string& p, httplib::Server::Handler h) {
        table.add("DELETE", p);
        http.Delete(p, std::move(h));
        return *this;
    }
};

void send_json(httplib::Response& res, int status, const nlohmann::json& j) {
    res.status = status;
    // Invalid UTF-8 (echoed from a request) is replaced, never a serialisation failure.
    res.set_content(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                    "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
    // RFC 7235 / RFC 6750: a 401 names the scheme the client must use.
    if (e.status == 401) res.set_header("WWW-Authenticate", "Bearer realm=\"astraeus\"");
    if (e.retry_after_s > 0) res.set_header("Retry-After", std::to_string(e.retry_after_s));
    send_json(res, e.status, nlohmann::json{{"error", bounded_message(e.message)}});
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

/// Pool threads beyond the handler threads: connections that are slow to send their request
/// (or idle keep-alive ones) hold one each until their read timeout (docs/security.md).
constexpr std::size_t kSlowClientSlots = 128;

std::unique_ptr<httplib::Server> make_server(const TlsFiles& tls) {
    if (!tls.enabled()) return std::make_unique<httplib::Server>();
    return std::make_unique<httplib::SSLServer>(tls.cert_file.c_str(), tls.key_file.c_str());
}

}  // namespace

HttpServer::HttpServer(service::Service& svc, int threads, const TlsFiles& tls)
    : impl_(std::make_unique<Impl>(svc, make_server(tls))) {
    httplib::Server& http = impl_->http;
    RouteRecorder s{http, impl_->routes};
    service::Service& sv = svc;
    // Slow clients (issue 14): cpp-httplib gives each connection a pool thread until it closes,
    // so a client that never finishes its headers holds one for up to the read timeout. The
    // pool has kSlowClientSlots threads more than `threads`; reads time out after 2 s and idle
    // keep-alive connections after 2 s (docs/security.md).
    const std::size_t n = static_cast<std::size_t>(threads) + kSlowClientSlots;
    http.new_task_queue = [n] { return new httplib::ThreadPool(n); };
    http.set_read_timeout(2, 0);
    http.set_write_timeout(5, 0);
    http.set_keep_alive_timeout(2);
    http.set_payload_max_length(1 << 20);
    // httplib's default also sets SO_REUSEPORT, which lets a second server bind the same port
    // and take half of the requests: keep SO_REUSEADDR only (a second bind then fails).
    http.set_socket_options([](socket_t sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
        // No Nagle delay (inherited by accepted sockets): without it a second answer on a kept-alive
        // connection waited ~40 ms for the client's delayed ACK (docs/web.md, "Budget").
        setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, reinterpret_cast<const void*>(&yes), sizeof(yes));
    });

    // Every handler: authenticate, then the call; the result as JSON.
    using JsonCall = std::function<ApiResult<nlohmann::json>(const Caller&, const httplib::Request&)>;
    auto route = [&sv](int ok_status, JsonCall call) {
        return [&sv, ok_status, call](const httplib::Request& req, httplib::Response& res) {
            auto caller = sv.authenticate(req.get_header_value("Authorization"));
            if (!caller) return send_error(res, caller.error());
            if (auto e = repeated_param(req)) return send_error(res, *e);
            if (!valid_utf8(req.body))
                return send_error(res, {400, "the body is not valid UTF-8 (RFC 8259 JSON is UTF-8)"});
            if (const std::string dup = duplicate_json_key(req.body); !dup.empty())
                return send_error(res, {400, "duplicate key '" + dup + "' in the JSON body"});
            auto out = call(*caller, req);
            if (!out) return send_error(res, out.error());
            send_json(res, ok_status, *out);
        };
    };
    s.Post("/v1/runs", route(201, [&sv](const Caller& c, const httplib::Request& r) {
               return sv.submit(c, r.body, r.get_header_value("Idempotency-Key"));
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
    s.Get("/v1/fairness", route(200, [&sv](const Caller& c, const httplib::Request&) {
              return sv.fairness(c);
          }));
    s.Get("/v1/whoami", route(200, [&sv](const Caller& c, const httplib::Request&) {
              return sv.whoami(c);
          }));
    s.Get("/v1/stalls", route(200, [&sv](const Caller& c, const httplib::Request&) {
              return sv.stalls(c);
          }));
    s.Get(R"(/v1/runs/([^/]+)/history)", route(200, [&sv](const Caller& c, const httplib::Request& r) {
              return sv.run_history(c, r.matches[1].str(), params_of(r));
          }));
    s.Get(R"(/v1/runs/([^/]+)/attempts)", route(200, [&sv](const Caller& c, const httplib::Request& r) {
              return sv.run_attempts(c, r.matches[1].str(), params_of(r));
          }));
    // The web pages (docs/web.md): embedded files, no token needed (they hold no data; every
    // figure comes from /v1 with the token the page keeps in sessionStorage).
    auto page = [](const httplib::Request& req, httplib::Response& res) {
        const web::Asset* a = web::find_asset(req.path);
        if (a == nullptr) return send_error(res, {404, "no such page: " + req.path});
        res.set_header("Content-Security-Policy", std::string(web::kContentSecurityPolicy));
        res.set_header("X-Content-Type-Options", "nosniff");
        res.set_header("Referrer-Policy", "no-referrer");
        res.set_header("X-Frame-Options", "DENY");
        // Not fingerprinted: revalidate every time (a 304 when unchanged).
        res.set_header("Cache-Control", "no-cache");
        res.set_header("ETag", std::string(a->etag));
        if (req.get_header_value("If-None-Match") == a->etag) {
            res.status = 304;
            return;
        }
        res.status = 200;
        res.set_content(std::string(a->body), std::string(a->content_type));
    };
    s.Get("/", page);
    s.Get(R"(/assets/[A-Za-z0-9_./-]+)", page);
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
    s.Post("/v1/agent/logs", agent_route([&sv](const Caller& c, const httplib::Request& r) {
               return sv.agent_logs(c, r.body);
           }));
    s.Get("/v1/goodput/metrics", [&sv](const httplib::Request& req, httplib::Response& res) {
        auto caller = sv.authenticate(req.get_header_value("Authorization"));
        if (!caller) return send_error(res, caller.error());
        auto text = sv.metrics(*caller);
        if (!text) return send_error(res, text.error());
        res.status = 200;
        res.set_content(*text, std::string(goodput::kPrometheusContentType).c_str());
    });
    // Health (liveness) and readiness, without a token (docs/api.md "Health").
    s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
        send_json(res, 200, nlohmann::json{{"status", "ok"}});
    });
    s.Get("/readyz", [&sv](const httplib::Request&, httplib::Response& res) {
        auto r = sv.readiness();
        if (!r) return send_error(res, r.error());
        send_json(res, 200, *r);
    });
    // Unknown paths and methods. Under /v1 the token is checked first: without a valid one
    // every request is a 401, whatever the path or method (nothing is learnt about the
    // endpoints); then a known path with another method is a 405 with Allow, else a 404.
    const RouteTable& routes = impl_->routes;
    http.set_error_handler([&sv, &routes](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return;
        // cpp-httplib answers 404 when no route has the method, and 400 before routing for a
        // PUT, PATCH or DELETE without a body or an unknown method: both are unrouted when no
        // route of the path has the method.
        const std::string allow = routes.allowed(req.path);
        const bool unrouted =
            res.status == 404 || (res.status == 400 && !req.path.empty() && !routes.allows(req.path, req.method));
        if (unrouted && (req.path == "/v1" || req.path.starts_with("/v1/"))) {
            auto caller = sv.authenticate(req.get_header_value("Authorization"));
            if (!caller) return send_error(res, caller.error());
        }
        if (unrouted) {
            if (!allow.empty()) {
                res.set_header("Allow", allow);
                return send_error(res, {405, "method " + req.method + " not allowed on " + req.path + " (allowed: " + allow + ")"});
            }
            return send_error(res, {404, "no such endpoint: " + req.method + " '" + req.path + "'"});
        }
        if (res.status == 405) return send_error(res, {405, "method not allowed"});
        if (res.status == 400) {
            // cpp-httplib answers 400 both for a POST/PUT/PATCH without a length and for headers
            // it cannot read (a header line over 8,192 bytes, or malformed ones).
            const bool needs_body = req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
            if (needs_body && !req.has_header("Content-Length") && !req.has_header("Transfer-Encoding"))
                return send_error(res, {400, "bad request (a POST needs a body, or Content-Length: 0)"});
            return send_error(res, {400, "bad request: the headers are too large (a header line is "
                                         "limited to 8,192 bytes) or malformed"});
        }
        if (res.status == 413) return send_error(res, {413, "the body is larger than 1 MiB"});
        send_error(res, {res.status, "request failed"});
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
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
    http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
        service::log(service::LogLevel::Debug, "http.request",
                     {{"method", req.method}, {"path", req.path}, {"status", std::to_string(res.status)}});
    });
}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::bind(const std::string& host, int port) {
    if (!impl_->http.is_valid()) return fail("cannot set up TLS with the given certificate and key");
    if (port == 0) {
        const int p = impl_->http.bind_to_any_port(host);
        if (p <= 0) return fail("cannot listen on " + host + " (any port)");
        return p;
    }
    if (!impl_->http.is_valid()) return fail("cannot set up TLS with the given certificate and key");
    if (!impl_->http.bind_to_port(host, port))
        return fail("cannot listen on " + host + ":" + std::to_string(port) + " (in use, or not a local address)");
    return port;
}

void HttpServer::serve() { impl_->http.listen_after_bind(); }

void HttpServer::stop() { impl_->http.stop(); }

}  // namespace astraeus::api
