#include "astraeus/client/http_transport.hpp"

#include <httplib.h>

namespace astraeus::client {

namespace {
std::string describe(httplib::Error e) {
    switch (e) {
        case httplib::Error::Connection: return "connection refused or host unreachable";
        case httplib::Error::ConnectionTimeout: return "connection timed out";
        case httplib::Error::Read: return "no answer (read failed or timed out)";
        case httplib::Error::Write: return "the request could not be sent";
        case httplib::Error::SSLServerVerification:
            return "the server's TLS certificate is not trusted (an unknown CA, or not for this host name): "
                   "give its CA with --cacert FILE";
        case httplib::Error::SSLConnection: return "the TLS handshake failed (is the server https?)";
        case httplib::Error::SSLLoadingCerts: return "the CA certificates could not be loaded";
        default: return httplib::to_string(e);
    }
}
}  // namespace

Result<HttpResponse> http_send(const HttpRequest& request) {
    httplib::Client cli(request.origin);
    if (!cli.is_valid()) return fail("invalid server address '" + request.origin + "'");
    if (!request.ca_cert_file.empty()) cli.set_ca_cert_path(request.ca_cert_file.c_str());
    cli.enable_server_certificate_verification(true);
    cli.set_connection_timeout(request.connect_timeout_s, 0);
    cli.set_read_timeout(request.read_timeout_s, 0);
    cli.set_write_timeout(request.read_timeout_s, 0);
    httplib::Headers headers;
    if (!request.bearer_token.empty())
        headers.emplace("Authorization", "Bearer " + request.bearer_token);
    if (!request.idempotency_key.empty()) headers.emplace("Idempotency-Key", request.idempotency_key);
    httplib::Result res = request.method == "POST"
                              ? cli.Post(request.target, headers, request.body, "application/json")
                              : cli.Get(request.target, headers);
    if (!res) return fail(describe(res.error()));
    HttpResponse out;
    out.status = res->status;
    out.body = res->body;
    out.content_type = res->get_header_value("Content-Type");
    out.retry_after = res->get_header_value("Retry-After");
    return out;
}

}  // namespace astraeus::client
