#include "astraeus/client/api_client.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "astraeus/client/http_transport.hpp"

namespace astraeus::client {

Result<ApiLocation> parse_api_url(std::string_view url) {
    const std::string_view expected =
        " (expected http[s]://HOST[:PORT][/PATH], e.g. http://127.0.0.1:8080/v1)";
    std::string_view rest = url;
    std::string scheme;
    if (rest.starts_with("http://")) scheme = "http://";
    else if (rest.starts_with("https://")) scheme = "https://";
    else
        return fail("ASTRALYX_API '" + std::string(url) + "' is not an http(s) URL" +
                    std::string(expected));
    rest.remove_prefix(scheme.size());
    const auto slash = rest.find('/');
    const std::string_view hostport = rest.substr(0, slash);
    if (hostport.empty() || hostport.find_first_of(" ?#@") != std::string_view::npos)
        return fail("ASTRALYX_API '" + std::string(url) + "' has no valid host" +
                    std::string(expected));
    ApiLocation loc;
    loc.origin = scheme + std::string(hostport);
    if (slash != std::string_view::npos) {
        std::string_view path = rest.substr(slash);
        if (path.find_first_of("?# ") != std::string_view::npos)
            return fail("ASTRALYX_API '" + std::string(url) + "' has a query or fragment" +
                        std::string(expected));
        while (!path.empty() && path.back() == '/') path.remove_suffix(1);
        loc.base_path = std::string(path);
    }
    return loc;
}

std::string percent_encode(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                                (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                                c == '~';
        if (unreserved) out += static_cast<char>(c);
        else out += fmt::format("%{:02X}", c);
    }
    return out;
}

std::expected<ApiClient, CallFailure> ApiClient::from_env(const char* api, const char* token) {
    if (api == nullptr || *api == '\0')
        return std::unexpected(CallFailure{
            kExitUsage, "ASTRALYX_API is not set; set it to the API's base URL, e.g. "
                        "export ASTRALYX_API=http://127.0.0.1:8080/v1"});
    if (token == nullptr || *token == '\0')
        return std::unexpected(CallFailure{
            kExitUsage, "ASTRALYX_TOKEN is not set; set it to an API token "
                        "(`astraeus admin` creates one), e.g. export ASTRALYX_TOKEN=astx_..."});
    auto loc = parse_api_url(api);
    if (!loc) return std::unexpected(CallFailure{kExitUsage, loc.error().message});
    return ApiClient(std::move(*loc), token);
}

ApiClient::ApiClient(ApiLocation location, std::string token)
    : location_(std::move(location)), token_(std::move(token)) {}

Result<void> ApiClient::set_ca_cert(const std::string& path) {
    std::ifstream in(path);
    if (!in) return fail("--cacert " + path + ": cannot read the file");
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos)
        return fail("--cacert " + path + ": no PEM certificate in the file (-----BEGIN CERTIFICATE-----)");
    ca_cert_file_ = path;
    return {};
}

CallResult ApiClient::get(std::string_view path,
                          const std::map<std::string, std::string>& query) const {
    return call("GET", path, query, {});
}

CallResult ApiClient::post(std::string_view path, const std::string& json_body,
                           const std::map<std::string, std::string>& query) const {
    return call("POST", path, query, json_body);
}

CallResult ApiClient::submit_run(const std::string& json_body, int retries, std::ostream& notes) const {
    // 128 random bits (the kernel's generator through std::random_device), as hex.
    std::random_device rd;
    std::string key = "astra-";
    for (int i = 0; i < 4; ++i) key += fmt::format("{:08x}", rd());
    for (int attempt = 0;; ++attempt) {
        auto res = call("POST", "/runs", {}, json_body, key);
        if (res) return res;
        const int st = res.error().http_status;
        const bool again = st == 0 || st == 429 || (st >= 500 && st != 507);
        if (!again || attempt >= retries) return res;
        int wait_s = 1 << std::min(attempt, 4);
        if (st == 429 && res.error().retry_after_s > 0) wait_s = std::min(res.error().retry_after_s, 30);
        notes << "astra: " << res.error().message << "; retrying in " << wait_s << " s (same Idempotency-Key)\n";
        std::this_thread::sleep_for(std::chrono::seconds(wait_s));
    }
}

CallResult ApiClient::call(std::string method, std::string_view path,
                           const std::map<std::string, std::string>& query,
                           std::string body, const std::string& idempotency_key) const {
    HttpRequest req;
    req.method = std::move(method);
    req.origin = location_.origin;
    req.target = location_.base_path;
    req.target += path;
    char sep = '?';
    for (const auto& [k, v] : query) {
        req.target += sep;
        req.target += percent_encode(k);
        req.target += '=';
        req.target += percent_encode(v);
        sep = '&';
    }
    req.bearer_token = token_;
    req.ca_cert_file = ca_cert_file_;
    req.body = std::move(body);
    req.idempotency_key = idempotency_key;
    auto res = http_send(req);
    if (!res)
        return std::unexpected(CallFailure{
            kExitServer, "cannot reach the API at " + location_.origin + location_.base_path +
                             " (ASTRALYX_API): " + res.error().message});
    if (res->status >= 200 && res->status < 300) return std::move(res->body);
    // The server's message: {"error": "..."}; the raw body (trimmed) otherwise.
    std::string message;
    const auto j = nlohmann::json::parse(res->body, nullptr, false);
    const bool contract = !j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string();
    if (contract)
        message = j["error"].get<std::string>();
    else {
        message = res->body.substr(0, 200);
        while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
            message.pop_back();
        if (message.empty()) message = "no message";
    }
    std::string text = "HTTP ";
    text += std::to_string(res->status);
    text += ": ";
    text += message;
    if (message.starts_with("no such endpoint") && !location_.base_path.ends_with("/v1"))
        text += " (ASTRALYX_API should end with the API's base path, e.g. http://127.0.0.1:8080/v1)";
    // A 4xx in the contract's form ({"error": ...}) is the caller's mistake (2); any other answer
    // (an empty 404 from a proxy or another server) is not the API's: 1, as docs/api.md says.
    if (!contract) text += " (not an Astraeus API answer: is ASTRALYX_API the API's URL?)";
    const int code = contract && res->status >= 400 && res->status < 500 ? kExitUsage : kExitServer;
    int retry_after = 0;
    if (!res->retry_after.empty() && res->retry_after.size() <= 6 &&
        res->retry_after.find_first_not_of("0123456789") == std::string::npos)
        retry_after = std::stoi(res->retry_after);
    return std::unexpected(CallFailure{code, std::move(text), res->status, retry_after});
}

}  // namespace astraeus::client
