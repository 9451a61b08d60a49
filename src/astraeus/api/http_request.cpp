#include "astraeus/api/http_request.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/impl/basic_parser.ipp>  // NOLINT: Beast's parser is header-only

#include <algorithm>
#include <limits>

namespace astraeus::api {

namespace http = boost::beast::http;
using boost::beast::error_code;
using boost::beast::string_view;

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

std::string_view HttpRequest::field(std::string_view name) const {
    for (const auto& [k, v] : fields)
        if (iequals(k, name)) return v;
    return {};
}

bool HttpRequest::has_field(std::string_view name) const {
    return std::any_of(fields.begin(), fields.end(),
                       [&](const auto& f) { return iequals(f.first, name); });
}

RequestParser::RequestParser(const HttpLimits& limits) : limits_(limits) {
    header_limit(static_cast<std::uint32_t>(limits_.max_header_bytes));
    // No body until allow_body(). Not 0 and not boost::none: Beast 1.74 compares a declared
    // Content-Length with the limit when the header ends (none compares as less than any length),
    // and the server must answer 401 before 413; on_body_init_impl checks the length instead.
    body_limit(std::numeric_limits<std::uint64_t>::max());
}

void RequestParser::allow_body(std::size_t max_bytes) {
    if (max_bytes > 0) limits_.max_body_bytes = std::min(limits_.max_body_bytes, max_bytes);
    body_limit(static_cast<std::uint64_t>(limits_.max_body_bytes));
}

void RequestParser::on_request_impl(http::verb, string_view method, string_view target, int version,
                                    error_code&) {
    req_.method.assign(method.data(), method.size());
    req_.target.assign(target.data(), target.size());
    req_.version = version;
}

void RequestParser::on_response_impl(int, string_view, int, error_code& ec) {
    ec = http::error::bad_method;  // never called for a request parser
}

void RequestParser::on_field_impl(http::field, string_view name, string_view value, error_code& ec) {
    if (req_.fields.size() >= limits_.max_header_fields) {
        too_many_fields_ = true;
        ec = http::error::header_limit;
        return;
    }
    req_.fields.emplace_back(std::string(name.data(), name.size()), std::string(value.data(), value.size()));
}

void RequestParser::on_header_impl(error_code& ec) {
    // RFC 9112 6.1/6.3: a request whose Transfer-Encoding does not end in chunked cannot be
    // framed (a smuggling vector between proxies): refused, not read as "no body".
    if (req_.has_field("Transfer-Encoding") && !chunked()) {
        ec = http::error::bad_transfer_encoding;
        return;
    }
    req_.chunked = chunked();
    if (const auto n = content_length(); n && !req_.chunked) req_.content_length = *n;
}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>& content_length, error_code& ec) {
    if (content_length) {
        if (*content_length > limits_.max_body_bytes) {
            ec = http::error::body_limit;
            return;
        }
        req_.body.reserve(static_cast<std::size_t>(*content_length));
    }
}

bool RequestParser::append(string_view data, error_code& ec) {
    const std::size_t need = req_.body.size() + data.size();
    if (need > limits_.max_body_bytes) {
        ec = http::error::body_limit;
        return false;
    }
    if (need > req_.body.capacity()) {
        // Doubling, capped at the bound. A fresh string: reserve() on a non-empty one may double
        // past the requested capacity (libstdc++), and so past the bound.
        std::string grown;
        grown.reserve(std::min(limits_.max_body_bytes, std::max(need, 2 * req_.body.capacity())));
        grown.append(req_.body);
        req_.body.swap(grown);
    }
    req_.body.append(data.data(), data.size());
    return true;
}

std::size_t RequestParser::on_body_impl(string_view body, error_code& ec) {
    return append(body, ec) ? body.size() : 0;
}

void RequestParser::on_chunk_header_impl(std::uint64_t size, string_view, error_code& ec) {
    // Refused at the chunk's header, before any of its bytes are kept.
    if (size > limits_.max_body_bytes - std::min(limits_.max_body_bytes, req_.body.size()))
        ec = http::error::body_limit;
}

std::size_t RequestParser::on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) {
    return append(body, ec) ? body.size() : 0;
}

void RequestParser::on_finish_impl(error_code&) {}

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool iequals_prefix(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

}  // namespace

std::string percent_decode(std::string_view s, bool plus_as_space) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '%' && i + 2 < s.size()) {
            const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
            if (hi >= 0 && lo >= 0) {
                out += static_cast<char>(hi * 16 + lo);
                i += 2;
                continue;
            }
        }
        out += (plus_as_space && c == '+') ? ' ' : c;
    }
    return out;
}

namespace {

/// "a=1&b=2": decoded pairs in order; an item without a name ("&&", "=v") is skipped (as
/// cpp-httplib did).
void split_query(std::string_view q, std::vector<std::pair<std::string, std::string>>& out) {
    while (!q.empty()) {
        const std::size_t amp = std::min(q.find('&'), q.size());
        const std::string_view item = q.substr(0, amp);
        q.remove_prefix(std::min(q.size(), amp + 1));
        const std::size_t eq = std::min(item.find('='), item.size());
        std::string k = percent_decode(item.substr(0, eq), true);
        if (k.empty()) continue;
        out.emplace_back(std::move(k), percent_decode(item.substr(std::min(item.size(), eq + 1)), true));
    }
}

}  // namespace

std::optional<RequestTarget> parse_target(std::string_view target, std::string* error) {
    std::string_view t = target;
    if (iequals_prefix(t, "http://") || iequals_prefix(t, "https://")) {
        // absolute-form (RFC 9112 3.2.2): scheme "://" authority [path-abempty] ["?" query]
        t.remove_prefix(t.find("://") + 3);
        const std::size_t end = std::min(t.find_first_of("/?"), t.size());
        if (end == 0) {
            if (error) *error = "the request target has no host: '" + std::string(target) + "'";
            return std::nullopt;
        }
        t.remove_prefix(end);
        RequestTarget rt;
        const std::size_t qpos = std::min(t.find('?'), t.size());
        rt.path = qpos == 0 ? "/" : percent_decode(t.substr(0, qpos), false);
        if (qpos < t.size()) split_query(t.substr(qpos + 1), rt.query);
        return rt;
    }
    if (t.empty() || t.front() != '/') {
        if (error)
            *error = "the request target must be a path ('/v1/...') or an absolute URL, got '" +
                     std::string(target) + "'";
        return std::nullopt;
    }
    RequestTarget rt;
    const std::size_t qpos = std::min(t.find('?'), t.size());
    rt.path = percent_decode(t.substr(0, qpos), false);
    if (qpos < t.size()) split_query(t.substr(qpos + 1), rt.query);
    return rt;
}

}  // namespace astraeus::api
