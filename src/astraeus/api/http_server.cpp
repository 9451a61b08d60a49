// The REST API server (issue 18): Boost.Beast's HTTP/1.1 parser (api/http_request.hpp) on
// Boost.Asio, event-driven. A few I/O threads run every connection's reads and writes (one strand
// each, so one connection's steps never overlap); the service's calls run on two handler pools,
// one for users and one for the node agents (`threads` threads each), so a connection costs a
// socket and a small buffer, never a thread, and slow clients only hold their own socket until
// their deadline. Per request, in order: the line and headers (bounded, deadline), the route,
// the token (on a handler pool: the store), then the body (bounded, deadline; never read for a
// request that failed authentication), then the call, then the answer; answers on one
// connection go out in the order of its requests (HTTP/1.1 pipelining).
#include "astraeus/api/http_server.hpp"

#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "astraeus/api/http_conformance.hpp"
#include "astraeus/api/http_request.hpp"
#include "astraeus/goodput_io/prometheus_text.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/sessions.hpp"
#include "astraeus/web/assets.hpp"

namespace astraeus::api {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using service::ApiError;
using service::ApiResult;
using service::Caller;
using service::Params;

namespace {

/// An answer before it is written.
struct Reply {
    int status = 200;
    std::string content_type;
    std::string body;
    std::vector<std::pair<std::string, std::string>> fields;
    bool close = false;  ///< close the connection after it (the request's body was not read)
};

/// One request after its body, as the handlers see it.
struct Call {
    HttpRequest req;
    std::string path;
    std::vector<std::pair<std::string, std::string>> query;
    std::vector<std::string> captures;  ///< the ([^/]+) segments of the route's pattern
    std::string remote_addr;
    std::optional<Caller> caller;  ///< set for routes with a token
};

enum class Auth { None, User, Agent };
using Handler = std::function<void(Call&, Reply&)>;

struct Route {
    std::string method;
    std::vector<std::string> segments;  ///< "\x01": one non-empty segment (captured)
    bool assets = false;                ///< "/assets/<file>": any path under /assets/
    Auth auth = Auth::User;
    bool inline_ok = false;             ///< answered on the I/O thread (no service lock)
    bool leader_only = false;           ///< a follower refuses it, even a GET (logs: on the leader's disk)
    std::size_t max_body_bytes = 0;     ///< the route's own body bound (0: HttpLimits')
    Handler handler;
};

std::vector<std::string> split_segments(std::string_view p) {
    std::vector<std::string> out;
    std::size_t i = (!p.empty() && p.front() == '/') ? 1 : 0;
    while (i <= p.size()) {
        const std::size_t j = std::min(p.find('/', i), p.size());
        out.emplace_back(p.substr(i, j - i));
        i = j + 1;
    }
    return out;
}

/// "1 MiB", "4 KiB" or "N bytes".
std::string bytes_text(std::size_t n) {
    if (n % (1u << 20) == 0) return std::to_string(n >> 20) + " MiB";
    if (n % 1024 == 0) return std::to_string(n >> 10) + " KiB";
    return std::to_string(n) + " bytes";
}

/// What the CSRF rule (service/sessions.hpp) reads of a request.
service::CsrfRequest csrf_of(const HttpRequest& req, bool tls) {
    return {req.method, req.field(service::kCsrfHeader), req.field("Origin"), req.field("Sec-Fetch-Site"),
            req.field("Host"), tls};
}

void set_json(Reply& r, int status, const nlohmann::json& j) {
    r.status = status;
    r.content_type = "application/json";
    // Invalid UTF-8 (echoed from a request) is replaced, never a serialisation failure.
    r.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void set_error(Reply& r, const ApiError& e) {
    // RFC 7235 / RFC 6750: a 401 names the scheme the client must use.
    if (e.status == 401) r.fields.emplace_back("WWW-Authenticate", "Bearer realm=\"astraeus\"");
    nlohmann::json body{{"error", bounded_message(e.message)}};
    if (e.retry_after_s > 0) {  // also in the body, for clients that read only the JSON (agents)
        r.fields.emplace_back("Retry-After", std::to_string(e.retry_after_s));
        body["retry_after_s"] = e.retry_after_s;
    }
    set_json(r, e.status, body);
}

Reply error_reply(const ApiError& e, bool close = false) {
    Reply r;
    set_error(r, e);
    r.close = close;
    return r;
}

Params params_of(const Call& c) {
    Params p;
    for (const auto& [k, v] : c.query) p[k] = v;
    return p;
}

/// A query parameter given more than once (?by=run&by=pool) is an error, not "the last wins".
std::optional<ApiError> repeated_param(const Call& c) {
    for (std::size_t i = 0; i < c.query.size(); ++i)
        for (std::size_t j = i + 1; j < c.query.size(); ++j)
            if (c.query[i].first == c.query[j].first)
                return ApiError{400, "query parameter '" + c.query[i].first + "' is given more than once"};
    return std::nullopt;
}

/// gzip (RFC 1952) of `in` at level 9; "" on a zlib failure (then sent uncompressed).
std::string gzip(std::string_view in) {
    z_stream z{};
    if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) return {};
    std::string out(deflateBound(&z, static_cast<uLong>(in.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return rc == Z_STREAM_END ? out : std::string{};
}

bool accepts_gzip(std::string_view accept_encoding) {
    // "gzip" listed without ";q=0" (enough for browsers and curl --compressed)
    for (std::size_t i = 0; (i = accept_encoding.find("gzip", i)) != std::string_view::npos; i += 4) {
        std::string_view rest = accept_encoding.substr(i + 4);
        const std::size_t comma = std::min(rest.find(','), rest.size());
        std::string_view params = rest.substr(0, comma);
        params.remove_prefix(std::min(params.size(), params.find_first_not_of(' ')));
        if (params.starts_with(";q=0") && params.find_first_not_of("0. ", 4) == std::string_view::npos) continue;
        return true;
    }
    return false;
}

/// TLS: TLS 1.2 with ECDHE and AES-GCM or ChaCha20-Poly1305 only, or TLS 1.3 (whose suites are
/// all forward-secret AEAD); no renegotiation, no compression, the server's order.
std::unique_ptr<net::ssl::context> make_tls(const TlsFiles& tls, std::string& error) {
    auto ctx = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
    SSL_CTX* c = ctx->native_handle();
    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
    SSL_CTX_set_options(c, SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION |
                               SSL_OP_SINGLE_ECDH_USE);
    if (SSL_CTX_set_cipher_list(c, "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL:!eNULL") != 1 ||
        SSL_CTX_set_ciphersuites(c, "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256") != 1) {
        error = "cannot set the TLS cipher suites";
        return nullptr;
    }
    boost::system::error_code ec;
    ctx->use_certificate_chain_file(tls.cert_file, ec);
    if (!ec) ctx->use_private_key_file(tls.key_file, net::ssl::context::pem, ec);
    if (ec) {
        error = "cannot set up TLS with the given certificate and key (" + ec.message() + ")";
        return nullptr;
    }
    return ctx;
}

/// Raises RLIMIT_NOFILE's soft limit to its hard limit; the soft limit after.
std::size_t raise_fd_limit() {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        const rlim_t before = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) rl.rlim_cur = before;
    }
    return rl.rlim_cur == RLIM_INFINITY ? std::size_t{1} << 20 : static_cast<std::size_t>(rl.rlim_cur);
}

}  // namespace

struct HttpServer::Impl {
    /// One listening socket: the main one, or --agent-listen's (agent routes and health only).
    struct Listener {
        explicit Listener(net::io_context& ioc) : acceptor(net::make_strand(ioc)), retry(acceptor.get_executor()) {}
        tcp::acceptor acceptor;
        net::steady_timer retry;    ///< after EMFILE/ENFILE: accept again later
        bool agents_only = false;
        std::size_t budget = 0;     ///< connections held at once
        /// Connections open now; shared with each connection, which may outlive the listener
        /// when the io_context is destroyed with handlers pending.
        std::shared_ptr<std::atomic<std::size_t>> open = std::make_shared<std::atomic<std::size_t>>(0);
        std::atomic<std::int64_t> refused_log_s{0};
    };

    Impl(std::function<std::shared_ptr<service::Service>()> s, int threads, const TlsFiles& tls, const HttpLimits& l)
        : svc_now(std::move(s)), limits(l), user_pool(static_cast<std::size_t>(threads)),
          agent_pool(static_cast<std::size_t>(threads)) {
        if (tls.enabled()) ssl = make_tls(tls, tls_error);
        fd_limit = raise_fd_limit();
    }
    ~Impl() {
        // The handler pools first: their tasks hold connections of the io_context.
        user_pool.stop();
        agent_pool.stop();
        user_pool.join();
        agent_pool.join();
    }

    template <class Stream>
    class Session;

    void add(std::string method, const std::string& pattern, Auth auth, Handler h, bool inline_ok = false,
             std::size_t max_body_bytes = 0);
    void accept(Listener& l);
    template <class Stream>
    void start_session(Listener& l, tcp::socket sock);
    const Route* match(std::string_view path, std::string_view method, std::vector<std::string>& captures) const;

    /// The service answering now: the leader's one, or a follower's current snapshot (held by
    /// the caller for the duration of one call).
    std::function<std::shared_ptr<service::Service>()> svc_now;
    std::optional<FollowerSource> follower;
    /// A follower's own answer to a request before its token (FollowerSource): health, refusals,
    /// the lease's metrics; nullopt: served from the snapshot as on the leader.
    std::optional<Reply> follower_answer(const HttpRequest& req, const std::string& path, const Route* r) const;
    /// 503 naming the leader (FollowerSource).
    Reply follower_refusal(const std::string& what) const;
    HttpLimits limits;
    net::io_context ioc;
    std::unique_ptr<net::ssl::context> ssl;
    std::string tls_error;
    std::size_t fd_limit = 1024;
    std::vector<Route> routes;
    RouteTable table;
    std::map<std::string, std::string, std::less<>> gzipped;  ///< asset path -> its gzip
    std::vector<std::unique_ptr<Listener>> listeners;
    std::atomic<bool> stopping{false};
    net::thread_pool user_pool;
    net::thread_pool agent_pool;
};

void HttpServer::Impl::add(std::string method, const std::string& pattern, Auth auth, Handler h, bool inline_ok,
                           std::size_t max_body_bytes) {
    table.add(method, pattern);
    Route r;
    r.method = std::move(method);
    r.auth = auth;
    r.inline_ok = inline_ok;
    r.max_body_bytes = max_body_bytes;
    r.handler = std::move(h);
    if (pattern.starts_with("/assets/")) {
        r.assets = true;
    } else {
        // The capture holds a '/': replaced before the split ("\x01" = any one segment).
        constexpr std::string_view kAny = "([^/]+)";
        std::string plain = pattern;
        for (std::size_t i; (i = plain.find(kAny)) != std::string::npos;) plain.replace(i, kAny.size(), "\x01");
        r.segments = split_segments(plain);
    }
    routes.push_back(std::move(r));
}

const Route* HttpServer::Impl::match(std::string_view path, std::string_view method,
                                     std::vector<std::string>& captures) const {
    const auto segs = split_segments(path);
    const std::string_view m = method == "HEAD" ? std::string_view("GET") : method;
    for (const Route& r : routes) {
        if (r.method != m) continue;
        if (r.assets) {
            if (path.starts_with("/assets/") && path.size() > 8) return &r;
            continue;
        }
        if (r.segments.size() != segs.size()) continue;
        std::vector<std::string> caps;
        bool ok = true;
        for (std::size_t k = 0; k < segs.size() && ok; ++k) {
            if (r.segments[k] == "\x01") {
                ok = !segs[k].empty();
                caps.push_back(segs[k]);
            } else {
                ok = r.segments[k] == segs[k];
            }
        }
        if (ok) {
            captures = std::move(caps);
            return &r;
        }
    }
    return nullptr;
}

// ------------------------------------------------------------------------------------------------
// One connection. Every member is used on the connection's strand only, except what is handed to
// a handler pool (moved out, then posted back).
template <class Stream>
class HttpServer::Impl::Session : public std::enable_shared_from_this<Session<Stream>> {
public:
    Session(Impl& srv, Listener& l, Stream stream, std::string remote)
        : srv_(srv), lis_(l), open_(l.open), stream_(std::move(stream)), remote_(std::move(remote)),
          buffer_(srv.limits.max_header_bytes + 4096), strand_(beast::get_lowest_layer(stream_).get_executor()) {}
    ~Session() { open_->fetch_sub(1); }

    void start() {
        if constexpr (kTls) {
            lowest().expires_after(srv_.limits.header_timeout);
            stream_.async_handshake(net::ssl::stream_base::server,
                                    [self = this->shared_from_this()](beast::error_code ec) {
                                        if (!ec) self->read_header();
                                    });
        } else {
            read_header();
        }
    }

private:
    static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

    beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

    void read_header() {
        if (srv_.stopping.load()) return;
        parser_.emplace(srv_.limits);
        lowest().expires_after(srv_.limits.header_timeout);
        bhttp::async_read_header(stream_, buffer_, *parser_,
                                 [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                                     self->on_header(ec);
                                 });
    }

    void on_header(beast::error_code ec) {
        if (ec) {
            // A closed or timed-out connection between requests: nothing to answer.
            if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout ||
                ec == net::error::eof || ec == net::error::operation_aborted ||
                ec == net::error::connection_reset)
                return shutdown();
            if (ec == bhttp::error::header_limit)
                return send(error_reply({431, parser_->too_many_fields()
                                                  ? "too many header fields (at most " + std::to_string(srv_.limits.max_header_fields) + ")"
                                                  : "the request line and headers are larger than " + std::to_string(srv_.limits.max_header_bytes / 1024) + " KiB"},
                                        true));
            if (ec == bhttp::error::bad_content_length)
                return send(error_reply({400, "bad request: a bad Content-Length, two different ones, or Content-Length with chunked"}, true));
            if (ec == bhttp::error::bad_transfer_encoding)
                return send(error_reply({400, "bad request: a Transfer-Encoding other than chunked, or chunked with Content-Length"}, true));
            if (ec == net::error::message_size || ec == bhttp::error::buffer_overflow)
                return send(error_reply({431, "the request line and headers are too large"}, true));
            return send(error_reply({400, "bad request: malformed request line or headers (" + ec.message() + ")"}, true));
        }
        HttpRequest& req = parser_->request();
        if (req.target.size() > srv_.limits.max_target_bytes)
            return send(error_reply({414, "the request target is longer than " + std::to_string(srv_.limits.max_target_bytes) + " bytes"}, true));
        std::string why;
        auto target = parse_target(req.target, &why);
        if (!target) return send(error_reply({400, why}, true));
        call_ = std::make_unique<Call>();
        call_->path = std::move(target->path);
        call_->query = std::move(target->query);
        call_->remote_addr = remote_;
        const Route* r = srv_.match(call_->path, req.method, call_->captures);
        // The agents' listener answers the agent endpoints and health only.
        if (lis_.agents_only && r && r->auth != Auth::Agent && call_->path != "/healthz" && call_->path != "/readyz")
            r = nullptr;
        route_ = r;
        if (srv_.follower)
            if (auto own = srv_.follower_answer(req, call_->path, r)) return send(std::move(*own), true);
        const bool v1 = call_->path == "/v1" || call_->path.starts_with("/v1/");
        const Auth auth = r ? r->auth : (v1 && !lis_.agents_only ? Auth::User : Auth::None);
        if (auth == Auth::None) return after_auth(std::nullopt);
        // The token, before any byte of the body: on a handler pool (the store is read). Without
        // an Authorization header, a user call may carry the web pages' session cookie instead,
        // under the CSRF rule (service/sessions.hpp).
        std::string authorization(req.field("Authorization"));
        std::optional<std::string> session;
        if (auth == Auth::User && authorization.empty()) {
            const bool tls = srv_.ssl != nullptr;
            session = service::cookie_value(req.field("Cookie"), service::session_cookie_name(tls));
            if (session) {
                if (const std::string forged = service::csrf_refusal(csrf_of(req, tls)); !forged.empty())
                    return send(error_reply({403, forged}, req.has_body()));
            }
        }
        auto& pool = auth == Auth::Agent ? srv_.agent_pool : srv_.user_pool;
        net::post(pool, [self = this->shared_from_this(), auth, authorization = std::move(authorization),
                         session = std::move(session)] {
            const auto svc = self->srv_.svc_now();
            ApiResult<Caller> c = !svc                ? ApiResult<Caller>(std::unexpected(ApiError{503, "no state loaded yet", 1}))
                                  : auth == Auth::Agent ? svc->authenticate_agent(authorization)
                                  : session           ? svc->authenticate_session(*session)
                                                      : svc->authenticate(authorization);
            const bool by_session = session.has_value();
            net::post(self->strand_, [self, c = std::move(c), by_session]() mutable {
                if (!c) {
                    Reply refused = error_reply(c.error(), self->parser_->request().has_body());
                    // A session that no longer works: the browser drops its cookie.
                    if (by_session && c.error().status == 401)
                        refused.fields.emplace_back("Set-Cookie", service::session_clear_cookie(self->srv_.ssl != nullptr));
                    return self->send(std::move(refused));
                }
                self->after_auth(std::move(*c));
            });
        });
    }

    /// The route and the caller known: refuse, or read the body.
    void after_auth(std::optional<Caller> caller) {
        HttpRequest& req = parser_->request();
        call_->caller = std::move(caller);
        if (route_ == nullptr) return send(unrouted(), /*unread_body=*/true);
        if (route_->method == "POST" && req.field("Content-Type").starts_with("multipart/form-data"))
            return send(error_reply({400, "a multipart/form-data body: the API takes JSON (Content-Type: application/json)"}), true);
        body_cap_ = route_->max_body_bytes > 0 ? std::min(route_->max_body_bytes, srv_.limits.max_body_bytes)
                                               : srv_.limits.max_body_bytes;
        if (req.content_length && *req.content_length > body_cap_)
            return send(error_reply({413, "the body is larger than " + bytes_text(body_cap_)}), true);
        if (!parser_->is_done()) {
            parser_->allow_body(body_cap_);
            if (iequals(req.field("Expect"), "100-continue") && buffer_.size() == 0) {
                // The client waits for this before sending its body (curl does for large ones).
                static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
                lowest().expires_after(srv_.limits.write_timeout);
                return net::async_write(stream_, net::buffer(kContinue),
                                        [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                                            if (ec) return self->shutdown();
                                            self->read_body();
                                        });
            }
            return read_body();
        }
        run_handler();
    }

    void read_body() {
        lowest().expires_after(srv_.limits.body_timeout);
        bhttp::async_read(stream_, buffer_, *parser_,
                          [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              if (!ec) return self->run_handler();
                              if (ec == bhttp::error::body_limit)
                                  return self->send(error_reply({413, "the body is larger than " + bytes_text(self->body_cap_)}), true);
                              if (ec == bhttp::error::partial_message || ec == net::error::eof ||
                                  ec == net::error::connection_reset)
                                  return self->shutdown();
                              self->send(error_reply({400, "the body could not be read (" + ec.message() + ")"}), true);
                          });
    }

    /// 404 or 405 (+ Allow) for a path and method no route answers (the token, under /v1, was
    /// checked before: without one every such request is a 401).
    Reply unrouted() const {
        const HttpRequest& req = parser_->request();
        const std::string allow = lis_.agents_only ? std::string() : srv_.table.allowed(call_->path);
        if (!allow.empty()) {
            Reply r = error_reply({405, "method " + req.method + " not allowed on " + call_->path + " (allowed: " + allow + ")"});
            r.fields.emplace_back("Allow", allow);
            return r;
        }
        return error_reply({404, "no such endpoint: " + req.method + " '" + call_->path + "'"});
    }

    void run_handler() {
        call_->req = std::move(parser_->request());
        const Route* r = route_;
        auto work = [self = this->shared_from_this(), r, call = std::move(call_)]() mutable {
            Reply reply;
            try {
                r->handler(*call, reply);
            } catch (const std::exception& e) {
                service::log(service::LogLevel::Error, "http.exception", {{"error", e.what()}});
                reply = error_reply({500, "internal error"});
            }
            service::log(service::LogLevel::Debug, "http.request",
                         {{"method", call->req.method}, {"path", call->path}, {"status", std::to_string(reply.status)}});
            const bool head = call->req.method == "HEAD";
            const bool keep = call->req.version == 11 ? !iequals(call->req.field("Connection"), "close")
                                                      : iequals(call->req.field("Connection"), "keep-alive");
            net::post(self->strand_, [self, reply = std::move(reply), head, keep]() mutable {
                if (!keep) reply.close = true;
                self->send(std::move(reply), false, head);
            });
        };
        if (r->inline_ok) return work();
        net::post(r->auth == Auth::Agent ? srv_.agent_pool : srv_.user_pool, std::move(work));
    }

    /// Writes `reply`; then the next request, or (close) the end of the connection. `unread_body`:
    /// the request's body was not read, so the connection cannot carry another request.
    void send(Reply reply, bool unread_body = false, bool head = false) {
        if (unread_body && parser_ && !parser_->is_done() && parser_->request().has_body()) reply.close = true;
        auto res = std::make_shared<bhttp::response<bhttp::string_body>>(
            static_cast<bhttp::status>(reply.status), parser_ ? parser_->request().version : 11);
        for (auto& [k, v] : reply.fields) res->insert(k, v);
        if (srv_.follower) {
            res->insert("X-Astraeus-Role", "follower");
            if (const std::int64_t age = srv_.follower->data_age_ms(); age >= 0)
                res->insert("X-Astraeus-Data-Age-Ms", std::to_string(age));
        }
        if (!reply.content_type.empty()) res->set(bhttp::field::content_type, reply.content_type);
        res->keep_alive(!reply.close);
        if (reply.status == 304 || reply.status == 204) {
            // no body, no length
        } else if (head) {
            res->content_length(reply.body.size());
        } else {
            res->body() = std::move(reply.body);
            res->prepare_payload();
        }
        const bool close = reply.close;
        lowest().expires_after(srv_.limits.write_timeout);
        bhttp::async_write(stream_, *res, [self = this->shared_from_this(), res, close](beast::error_code ec, std::size_t) {
            if (ec) return self->shutdown(true);
            if (close) return self->shutdown();
            self->call_.reset();
            self->read_header();
        });
    }

    /// Ends the connection. Plain TCP with a body left unread: our side shut for writing, then
    /// what the client still sends is read and dropped for up to 2 s and 4 MiB (a close with
    /// unread data would reset the connection and could destroy the answer before the client
    /// reads it). TLS: a close_notify, bounded by the write timeout.
    void shutdown(bool hard = false) {
        beast::error_code ignored;
        if (hard || srv_.stopping.load()) {
            lowest().socket().close(ignored);
            return;
        }
        if constexpr (kTls) {
            lowest().expires_after(std::chrono::seconds(2));
            stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
                beast::error_code e;
                self->lowest().socket().close(e);
            });
        } else {
            lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
            lowest().expires_after(std::chrono::seconds(2));
            drained_ = 0;
            if (!scratch_) scratch_ = std::make_unique<std::array<char, 4096>>();  // only while draining
            drain();
        }
    }

    void drain() {
        lowest().async_read_some(net::buffer(*scratch_), [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
            self->drained_ += n;
            if (ec || self->drained_ > (std::size_t{4} << 20)) {
                beast::error_code e;
                self->lowest().socket().close(e);
                return;
            }
            self->drain();
        });
    }

    Impl& srv_;
    Listener& lis_;
    std::shared_ptr<std::atomic<std::size_t>> open_;
    Stream stream_;
    std::string remote_;
    beast::flat_buffer buffer_;
    std::optional<RequestParser> parser_;
    std::unique_ptr<Call> call_;
    const Route* route_ = nullptr;
    /// The connection's strand, fixed at construction: handler pools post back to it.
    const net::any_io_executor strand_;
    std::size_t drained_ = 0;
    std::size_t body_cap_ = 0;  ///< the current request's body bound
    std::unique_ptr<std::array<char, 4096>> scratch_;  ///< what drain() reads and drops
};

template <class Stream>
void HttpServer::Impl::start_session(Listener& l, tcp::socket sock) {
    beast::error_code ec;
    const auto ep = sock.remote_endpoint(ec);
    std::string remote = ec ? std::string() : ep.address().to_string();
    sock.set_option(tcp::no_delay(true), ec);  // no Nagle delay on kept-alive answers
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
        std::make_shared<Session<Stream>>(*this, l, beast::tcp_stream(std::move(sock)), std::move(remote))->start();
    } else {
        std::make_shared<Session<Stream>>(*this, l, Stream(beast::tcp_stream(std::move(sock)), *ssl), std::move(remote))->start();
    }
}

void HttpServer::Impl::accept(Listener& l) {
    // Each connection gets its own strand: its handlers never run at the same time.
    l.acceptor.async_accept(net::make_strand(ioc), [this, &l](beast::error_code ec, tcp::socket sock) {
        if (stopping.load() || ec == net::error::operation_aborted) return;
        if (ec) {
            // Out of file descriptors (EMFILE, ENFILE) or a transient failure: try again shortly
            // instead of spinning.
            service::log(service::LogLevel::Warn, "http.accept", {{"error", ec.message()}});
            l.retry.expires_after(std::chrono::milliseconds(100));
            l.retry.async_wait([this, &l](beast::error_code e) {
                if (!e) accept(l);
            });
            return;
        }
        if (l.open->load() >= l.budget) {
            // Over the connection budget: closed at once (log once a second at most).
            const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::steady_clock::now().time_since_epoch()).count();
            if (l.refused_log_s.exchange(now) != now)
                service::log(service::LogLevel::Warn, "http.connection_refused",
                             {{"reason", "connection budget reached"}, {"budget", std::to_string(l.budget)}});
            beast::error_code e;
            sock.close(e);
        } else {
            l.open->fetch_add(1);
            if (ssl) start_session<beast::ssl_stream<beast::tcp_stream>>(l, std::move(sock));
            else start_session<beast::tcp_stream>(l, std::move(sock));
        }
        accept(l);
    });
}

// ------------------------------------------------------------------------------------------------

std::optional<Reply> HttpServer::Impl::follower_answer(const HttpRequest& req, const std::string& path,
                                                       const Route* r) const {
    const bool get = req.method == "GET" || req.method == "HEAD";
    if (get && path == "/healthz") {
        Reply ok;
        set_json(ok, 200, nlohmann::json{{"status", "ok"}, {"role", "follower"}});
        return ok;
    }
    if (get && path == "/readyz") return follower_refusal("not ready");
    if (get && (path == "/metrics" || path == "/v1/goodput/metrics")) {
        Reply m;
        m.content_type = std::string(goodput::kPrometheusContentType);
        m.body = follower->lease_metrics();
        return m;
    }
    if (r != nullptr && (r->method != "GET" || r->auth == Auth::Agent))
        return follower_refusal("writes go to the leader");
    if (r != nullptr && r->leader_only) return follower_refusal("served by the leader only");
    if (r != nullptr && r->auth == Auth::None) return std::nullopt;  // the web pages
    if (!follower->snapshot()) return follower_refusal("no state loaded from the database yet");
    return std::nullopt;
}

Reply HttpServer::Impl::follower_refusal(const std::string& what) const {
    const store::LeaseView v = follower->leader();
    Reply r;
    set_json(r, 503,
             nlohmann::json{{"error", what + ": this replica is a follower; the leader is " +
                                          (v.holder.empty() ? std::string("not known yet") : v.holder) +
                                          (v.holder_address.empty() ? "" : " at " + v.holder_address)},
                            {"status", "follower"},
                            {"leader", v.holder},
                            {"leader_address", v.holder_address},
                            {"generation", v.generation},
                            {"retry_after_s", follower->retry_after_s}});
    r.fields.emplace_back("Retry-After", std::to_string(follower->retry_after_s));
    return r;
}

HttpServer::HttpServer(service::Service& svc, int threads, const TlsFiles& tls, const HttpLimits& limits)
    : impl_(std::make_unique<Impl>(
          [p = &svc] { return std::shared_ptr<service::Service>(std::shared_ptr<service::Service>{}, p); }, threads,
          tls, limits)) {
    add_routes();
}

HttpServer::HttpServer(FollowerSource follower, int threads, const TlsFiles& tls, const HttpLimits& limits)
    : impl_(std::make_unique<Impl>(follower.snapshot, threads, tls, limits)) {
    follower.retry_after_s = std::max(1, follower.retry_after_s);
    impl_->follower = std::move(follower);
    add_routes();
}

void HttpServer::add_routes() {
    Impl& s = *impl_;
    /// The service answering this call (a follower's snapshot lives until the call returns).
    struct SvcNow {
        const Impl* impl;
        std::shared_ptr<service::Service> operator()() const { return impl->svc_now(); }
    };
    const SvcNow sv{&s};
    for (const auto& a : web::all_assets())
        if (std::string z = gzip(a.body); !z.empty() && z.size() < a.body.size()) s.gzipped.emplace(std::string(a.path), std::move(z));

    // Every /v1 handler: the caller is authenticated (before the body); then the usual checks
    // and the call; the result as JSON.
    using JsonCall = std::function<ApiResult<nlohmann::json>(const Caller&, const Call&)>;
    auto route = [](int ok_status, JsonCall call) -> Handler {
        return [ok_status, call = std::move(call)](Call& c, Reply& res) {
            if (auto e = repeated_param(c)) return set_error(res, *e);
            if (!valid_utf8(c.req.body))
                return set_error(res, {400, "the body is not valid UTF-8 (RFC 8259 JSON is UTF-8)"});
            if (const std::string dup = duplicate_json_key(c.req.body); !dup.empty())
                return set_error(res, {400, "duplicate key '" + dup + "' in the JSON body"});
            auto out = call(*c.caller, c);
            if (!out) return set_error(res, out.error());
            set_json(res, ok_status, *out);
        };
    };
    auto agent_route = [](JsonCall call) -> Handler {
        return [call = std::move(call)](Call& c, Reply& res) {
            auto out = call(*c.caller, c);
            if (!out) return set_error(res, out.error());
            set_json(res, 200, *out);
        };
    };
    const Auth U = Auth::User;
    s.add("POST", "/v1/runs", U, route(201, [sv](const Caller& c, const Call& r) { return sv()->submit(c, r.req.body, std::string(r.req.field("Idempotency-Key"))); }));
    s.add("GET", "/v1/runs", U, route(200, [sv](const Caller& c, const Call& r) { return sv()->list_runs(c, params_of(r)); }));
    s.add("GET", "/v1/runs/([^/]+)/goodput", U, route(200, [sv](const Caller& c, const Call& r) {
              return sv()->run_goodput(c, r.captures[0], params_of(r));
          }));
    s.add("POST", "/v1/runs/([^/]+)/stop", U, route(202, [sv](const Caller& c, const Call& r) {
              return sv()->stop_run(c, r.captures[0], params_of(r));
          }));
    s.add("POST", "/v1/runs/([^/]+)/progress", U, route(200, [sv](const Caller& c, const Call& r) {
              return sv()->report_progress(c, r.captures[0], params_of(r), r.req.body);
          }));
    s.add("GET", "/v1/runs/([^/]+)/logs", U, route(200, [sv](const Caller& c, const Call& r) {
              return sv()->run_logs(c, r.captures[0], params_of(r));
          }));
    s.routes.back().leader_only = true;  // the logs are on the leader's disk
    s.add("GET", "/v1/runs/([^/]+)", U, route(200, [sv](const Caller& c, const Call& r) {
              return sv()->show_run(c, r.captures[0], params_of(r));
          }));
    s.add("GET", "/v1/goodput", U, route(200, [sv](const Caller& c, const Call& r) { return sv()->goodput(c, params_of(r)); }));
    s.add("GET", "/v1/goodput/weekly", U, route(200, [sv](const Caller& c, const Call& r) {
              return sv()->goodput_weekly(c, params_of(r));
          }));
    s.add("GET", "/v1/fairness", U, route(200, [sv](const Caller& c, const Call&) { return sv()->fairness(c); }));
    s.add("GET", "/v1/whoami", U, route(200, [sv](const Caller& c, const Call&) { return sv()->whoami(c); }));
    s.add("GET", "/v1/stalls", U, route(200, [sv](const Caller& c, const Call&) { return sv()->stalls(c); }));
    s.add("GET", "/v1/runs/([^/]+)/history", U, route(200, [sv](const Caller& c, const Call& r) {
              return sv()->run_history(c, r.captures[0], params_of(r));
          }));
    s.add("GET", "/v1/runs/([^/]+)/attempts", U, route(200, [sv](const Caller& c, const Call& r) {
              return sv()->run_attempts(c, r.captures[0], params_of(r));
          }));
    // The web pages' sessions (docs/security.md "Web sessions"): the page trades its token for
    // an HttpOnly cookie (POST), and ends it (DELETE); both under the CSRF rule, so that another
    // site can neither sign a browser in with its own token nor sign it out. No token needed for
    // the call itself (POST's is in its body, at most 4 KiB).
    {
        const bool https = s.ssl != nullptr;
        s.add("POST", "/v1/session", Auth::None, [sv, https](Call& c, Reply& res) {
            if (const std::string why = service::csrf_refusal(csrf_of(c.req, https)); !why.empty())
                return set_error(res, {403, why});
            if (!valid_utf8(c.req.body)) return set_error(res, {400, "the body is not valid UTF-8 (RFC 8259 JSON is UTF-8)"});
            if (const std::string dup = duplicate_json_key(c.req.body); !dup.empty())
                return set_error(res, {400, "duplicate key '" + dup + "' in the JSON body"});
            auto opened = sv()->open_session(c.req.body);
            if (!opened) return set_error(res, opened.error());
            res.fields = {{"Set-Cookie", service::session_set_cookie(opened->secret, opened->max_age_s, https)},
                          {"Cache-Control", "no-store"}};
            set_json(res, 201, opened->doc);
        }, false, 4096);
        s.add("DELETE", "/v1/session", Auth::None, [sv, https](Call& c, Reply& res) {
            if (const std::string why = service::csrf_refusal(csrf_of(c.req, https)); !why.empty())
                return set_error(res, {403, why});
            if (auto secret = service::cookie_value(c.req.field("Cookie"), service::session_cookie_name(https)))
                if (auto ended = sv()->close_session(*secret); !ended) return set_error(res, ended.error());
            res.fields = {{"Set-Cookie", service::session_clear_cookie(https)}, {"Cache-Control", "no-store"}};
            res.status = 204;
        });
    }
    // The web pages (docs/web.md): embedded files, no token needed (they hold no data; every
    // figure comes from /v1 with the page's session cookie). Compressed (gzip)
    // when the browser asks; API answers never are (no secret beside attacker-chosen text in
    // one compressed answer: BREACH).
    const Impl* impl = &s;
    auto page = [impl](Call& c, Reply& res) {
        const web::Asset* a = web::find_asset(c.path);
        if (a == nullptr) return set_error(res, {404, "no such page: " + c.path});
        res.fields = {{"Content-Security-Policy", std::string(web::kContentSecurityPolicy)},
                      {"X-Content-Type-Options", "nosniff"},
                      {"Referrer-Policy", "no-referrer"},
                      {"X-Frame-Options", "DENY"},
                      // Not fingerprinted: revalidate every time (a 304 when unchanged).
                      {"Cache-Control", "no-cache"},
                      {"ETag", std::string(a->etag)},
                      {"Vary", "Accept-Encoding"}};
        if (c.req.field("If-None-Match") == a->etag) {
            res.status = 304;
            return;
        }
        res.status = 200;
        res.content_type = std::string(a->content_type);
        const auto z = impl->gzipped.find(a->path);
        if (z != impl->gzipped.end() && accepts_gzip(c.req.field("Accept-Encoding"))) {
            res.fields.emplace_back("Content-Encoding", "gzip");
            res.body = z->second;
        } else {
            res.body = std::string(a->body);
        }
    };
    s.add("GET", "/", Auth::None, page, true);
    s.add("GET", "/assets/[A-Za-z0-9_./-]+", Auth::None, page, true);
    s.add("GET", "/v1/organizations/([^/]+)/clusters/([^/]+)/goodput", U,
          route(200, [sv](const Caller& c, const Call& r) {
              return sv()->cluster_goodput(c, r.captures[0], r.captures[1], params_of(r));
          }));
    s.add("GET", "/v1/alerts", U, route(200, [sv](const Caller& c, const Call&) { return sv()->alerts(c); }));
    // Machines (operators and org admins) and the node agents' endpoints (agent tokens only).
    s.add("GET", "/v1/machines", U, route(200, [sv](const Caller& c, const Call&) { return sv()->machines_list(c); }));
    for (const char* op : {"drain", "undrain"})
        s.add("POST", std::string("/v1/machines/([^/]+)/") + op, U,
              route(200, [sv, drain = std::string(op) == "drain"](const Caller& c, const Call& r) {
                  return sv()->drain_machine(c, r.captures[0], drain);
              }));
    const Auth A = Auth::Agent;
    s.add("POST", "/v1/agent/register", A, agent_route([sv](const Caller& c, const Call& r) {
              return sv()->agent_register(c, r.req.body, r.remote_addr);
          }));
    s.add("POST", "/v1/agent/heartbeat", A, agent_route([sv](const Caller& c, const Call& r) {
              return sv()->agent_heartbeat(c, r.req.body);
          }));
    s.add("POST", "/v1/agent/events", A, agent_route([sv](const Caller& c, const Call& r) {
              return sv()->agent_heartbeat(c, r.req.body);
          }));
    s.add("POST", "/v1/agent/logs", A, agent_route([sv](const Caller& c, const Call& r) {
              return sv()->agent_logs(c, r.req.body);
          }));
    s.add("GET", "/v1/goodput/metrics", U, [sv](Call& c, Reply& res) {
        auto text = sv()->metrics(*c.caller);
        if (!text) return set_error(res, text.error());
        res.status = 200;
        res.content_type = std::string(goodput::kPrometheusContentType);
        res.body = std::move(*text);
    });
    // Health (liveness) and readiness, without a token (docs/api.md "Health"). /healthz is
    // answered on the I/O thread: it says the server answers, whatever the handlers do.
    s.add("GET", "/healthz", Auth::None, [](Call&, Reply& res) { set_json(res, 200, nlohmann::json{{"status", "ok"}}); },
          true);
    s.add("GET", "/readyz", Auth::None, [sv](Call&, Reply& res) {
        auto r = sv()->readiness();
        if (!r) return set_error(res, r.error());
        set_json(res, 200, *r);
    });
}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::bind(const std::string& host, int port) { return listen(host, port, false); }

Result<int> HttpServer::bind_agents(const std::string& host, int port) { return listen(host, port, true); }

Result<int> HttpServer::listen(const std::string& host, int port, bool agents_only) {
    if (!impl_->tls_error.empty()) return fail(impl_->tls_error);  // before the port: as it was
    auto sock = ListenSocket::open(host, port);
    if (!sock) return std::unexpected(sock.error());
    return listen(std::move(*sock), agents_only);
}

Result<int> HttpServer::bind(ListenSocket socket) { return listen(std::move(socket), false); }

Result<int> HttpServer::bind_agents(ListenSocket socket) { return listen(std::move(socket), true); }

Result<int> HttpServer::listen(ListenSocket socket, bool agents_only) {
    Impl& s = *impl_;
    if (!s.tls_error.empty()) return fail(s.tls_error);
    if (!socket.valid()) return fail("no listening socket");
    auto l = std::make_unique<Impl::Listener>(s.ioc);
    beast::error_code ec;
    const int fd = socket.release();
    l->acceptor.assign(socket.ipv6() ? tcp::v6() : tcp::v4(), fd, ec);
    if (ec) {
        ::close(fd);
        return fail("cannot serve on port " + std::to_string(socket.port()) + ": " + ec.message());
    }
    l->agents_only = agents_only;
    // File descriptors: 256 kept for the store, logs and workers; the agents' listener 1,024 of
    // the rest; the main listener the others (or HttpLimits::max_connections).
    const std::size_t usable = s.fd_limit > 512 ? s.fd_limit - 256 : s.fd_limit / 2;
    const std::size_t agents = std::min<std::size_t>(1024, usable / 4);
    l->budget = agents_only ? agents : (s.limits.max_connections ? s.limits.max_connections : usable - agents);
    const int bound = l->acceptor.local_endpoint().port();
    s.listeners.push_back(std::move(l));
    return bound;
}

std::size_t HttpServer::connection_budget() const {
    return impl_->listeners.empty() ? 0 : impl_->listeners.front()->budget;
}

void HttpServer::serve() {
    Impl& s = *impl_;
    for (auto& l : s.listeners) s.accept(*l);
    // I/O threads: reads, writes, TLS and parsing only (the service's calls run on the pools).
    const unsigned n = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    std::vector<std::thread> io;
    for (unsigned i = 1; i < n; ++i) io.emplace_back([&s] { s.ioc.run(); });
    s.ioc.run();
    for (auto& t : io) t.join();
}

void HttpServer::stop() {
    Impl& s = *impl_;
    s.stopping.store(true);
    s.ioc.stop();
}

}  // namespace astraeus::api
