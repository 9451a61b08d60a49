// Fuzz target of the server's HTTP/1.1 request parser (api/http_request.hpp): the bytes are a
// connection's input, parsed as the server does (header, then the body once allowed, then the
// next request from what is left), fed in pieces whose size comes from the first byte (as reads
// split them). Properties: a parsed header never holds more fields than the bound; a body never
// exceeds its bound, nor its buffer's capacity the bound; a request with Content-Length and
// chunked, or a Transfer-Encoding other than chunked, is never accepted; an accepted target's
// path starts with '/' and its query names are non-empty; a refused target says why.
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>

#include "astraeus/api/http_request.hpp"

namespace api = astraeus::api;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::size_t piece = 1 + data[0] % 64;
    std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
    api::HttpLimits limits;
    limits.max_header_bytes = 2048;  // small bounds, reached by short inputs
    limits.max_header_fields = 8;
    limits.max_body_bytes = 4096;
    std::string buf;  // received, not yet consumed by a parser
    for (int requests = 0; requests < 8; ++requests) {
        api::RequestParser p(limits);
        boost::beast::error_code ec;
        bool header = false;
        for (int guard = 0; !p.is_done() && guard < 1000000; ++guard) {
            std::size_t used = buf.empty() ? 0 : p.put(boost::asio::buffer(buf), ec);
            if (buf.empty() || ec == boost::beast::http::error::need_more) {
                if (in.empty()) break;
                ec = {};
                const std::size_t n = std::min(piece, in.size());
                buf.append(in.substr(0, n));
                in.remove_prefix(n);
            }
            buf.erase(0, used);
            if (ec) break;
            if (!header && p.is_header_done()) {
                header = true;
                const api::HttpRequest& r = p.request();
                if (r.fields.size() > limits.max_header_fields) __builtin_trap();
                if (r.chunked && r.content_length) __builtin_trap();
                if (r.has_field("Transfer-Encoding") && !r.chunked) __builtin_trap();
                std::string why;
                if (auto t = api::parse_target(r.target, &why)) {
                    if (t->path.empty() || t->path.front() != '/') __builtin_trap();
                    for (const auto& [k, v] : t->query)
                        if (k.empty()) __builtin_trap();
                } else if (why.empty()) {
                    __builtin_trap();
                }
                p.allow_body();
            }
        }
        const api::HttpRequest& r = p.request();
        if (r.body.size() > limits.max_body_bytes || r.body.capacity() > limits.max_body_bytes) __builtin_trap();
        if (r.fields.size() > limits.max_header_fields) __builtin_trap();
        if (ec || !p.is_done()) break;
    }
    return 0;
}
