// The HTTP/1.1 request parser of `astraeus serve` (issue 18): Boost.Beast's basic_parser with
// our own storage and bounds, and the request target split into a path and query parameters.
// Everything here is pure (no sockets): api/http_server.cpp feeds it bytes read by Boost.Asio,
// fuzz/fuzz_http_request.cpp feeds it arbitrary bytes.
// Bounds, each checked while parsing (nothing past a bound is stored):
//   request line + header fields <= HttpLimits::max_header_bytes (else 431),
//   number of header fields      <= HttpLimits::max_header_fields (else 431),
//   body, Content-Length or chunked, <= HttpLimits::max_body_bytes (else 413; the body buffer
//   never grows past the bound), two different Content-Length values or Content-Length with
//   chunked: 400 (Beast's own checks, kept).
// Thread safety: one parser per request, used by one thread at a time.
#pragma once
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "astraeus/api/http_limits.hpp"

namespace astraeus::api {

/// One request as received: method, target, version, header fields in order, body.
struct HttpRequest {
    std::string method;  ///< as sent ("GET", or any token)
    std::string target;  ///< the request target, undecoded
    int version = 11;    ///< 10 or 11
    std::vector<std::pair<std::string, std::string>> fields;  ///< name, value (as sent)
    std::string body;    ///< de-chunked
    std::optional<std::uint64_t> content_length;  ///< when the request declared one
    bool chunked = false;

    /// The first field named `name` (case-insensitive), "" when absent.
    std::string_view field(std::string_view name) const;
    /// True when a field `name` is present.
    bool has_field(std::string_view name) const;
    /// True when the request announces a body (a Content-Length > 0, or chunked).
    bool has_body() const { return chunked || content_length.value_or(0) > 0; }
};

/// Beast's HTTP/1 parser storing into an HttpRequest, with the bounds of `limits`. Errors (the
/// `ec` of Beast's read functions): http::error::header_limit (line and headers too large, or
/// too_many_fields()), http::error::body_limit (413), others (malformed: 400).
/// Body reading is off until allow_body(): the server authenticates between the two.
class RequestParser : public boost::beast::http::basic_parser<true> {
public:
    explicit RequestParser(const HttpLimits& limits);
    HttpRequest& request() { return req_; }
    const HttpRequest& request() const { return req_; }
    /// True when parsing stopped at the field count bound.
    bool too_many_fields() const { return too_many_fields_; }
    /// Lets the body be read, bounded by limits.max_body_bytes, or by `max_bytes` when smaller
    /// (a route's own bound; 0: none), (call after the header).
    void allow_body(std::size_t max_bytes = 0);

private:
    void on_request_impl(boost::beast::http::verb, boost::beast::string_view method,
                         boost::beast::string_view target, int version,
                         boost::beast::error_code& ec) override;
    void on_response_impl(int, boost::beast::string_view, int, boost::beast::error_code& ec) override;
    void on_field_impl(boost::beast::http::field, boost::beast::string_view name,
                       boost::beast::string_view value, boost::beast::error_code& ec) override;
    void on_header_impl(boost::beast::error_code& ec) override;
    void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                           boost::beast::error_code& ec) override;
    std::size_t on_body_impl(boost::beast::string_view body, boost::beast::error_code& ec) override;
    void on_chunk_header_impl(std::uint64_t size, boost::beast::string_view extensions,
                              boost::beast::error_code& ec) override;
    std::size_t on_chunk_body_impl(std::uint64_t remain, boost::beast::string_view body,
                                   boost::beast::error_code& ec) override;
    void on_finish_impl(boost::beast::error_code& ec) override;
    /// Appends to the body without its capacity ever passing max_body_bytes.
    bool append(boost::beast::string_view data, boost::beast::error_code& ec);

    HttpLimits limits_;
    HttpRequest req_;
    bool too_many_fields_ = false;
};

/// A request target split: the path percent-decoded, the query parameters in order (names and
/// values percent-decoded, '+' as a space; a parameter without '=' has the value "").
struct RequestTarget {
    std::string path;
    std::vector<std::pair<std::string, std::string>> query;
};

/// Splits an origin-form target ("/v1/runs?state=running") or an absolute-form one
/// ("http://host:8080/v1/runs?...", RFC 9112 3.2.2: the scheme and authority are dropped; no
/// path = "/"). Any other form ("*", "runs", "ftp://...") is an error message (400).
/// Never throws; linear in the target's length.
std::optional<RequestTarget> parse_target(std::string_view target, std::string* error = nullptr);

/// ASCII case-insensitive equality (header names, tokens).
bool iequals(std::string_view a, std::string_view b);

/// Percent-decodes `s` (%XX with two hex digits; any other '%' is kept as is); '+' becomes a
/// space when `plus_as_space`.
std::string percent_decode(std::string_view s, bool plus_as_space);

}  // namespace astraeus::api
