#include "astraeus/api/http_conformance.hpp"

#include <algorithm>

namespace astraeus::api {

namespace {

std::vector<std::string> split_path(std::string_view p) {
    std::vector<std::string> out;
    std::size_t i = 0;
    if (!p.empty() && p.front() == '/') i = 1;
    while (i <= p.size()) {
        const std::size_t j = std::min(p.find('/', i), p.size());
        out.emplace_back(p.substr(i, j - i));
        i = j + 1;
    }
    return out;
}

/// Length of the UTF-8 sequence at s[i] if valid, 0 otherwise.
std::size_t utf8_len(std::string_view s, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) n = 3, lo = 0xA0;
    else if (c == 0xED) n = 3, hi = 0x9F;  // no surrogates
    else if (c >= 0xE1 && c <= 0xEF) n = 3;
    else if (c == 0xF0) n = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) n = 4, hi = 0x8F;  // <= U+10FFFF
    else return 0;
    if (i + n > s.size()) return 0;
    if (b(i + 1) < lo || b(i + 1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
    return n;
}

/// s with invalid bytes replaced by '?', cut to at most max bytes (whole characters) + "...".
std::string clean(std::string_view s, std::size_t max) {
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
        const std::size_t n = utf8_len(s, i);
        if (out.size() + std::max<std::size_t>(n, 1) > max) {
            out += "...";
            return out;
        }
        if (n == 0) {
            out += '?';
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

}  // namespace

void RouteTable::add(std::string method, std::string pattern) {
    Route r;
    r.method = std::move(method);
    // The capture holds a '/', so it is replaced before the split: "\x01" = any one segment.
    constexpr std::string_view kAny = "([^/]+)";
    std::string plain;
    for (std::size_t i = 0; i < pattern.size();) {
        if (std::string_view(pattern).substr(i, kAny.size()) == kAny) {
            plain += '\x01';
            i += kAny.size();
        } else {
            plain += pattern[i++];
        }
    }
    // (an empty segment is the path "/" itself, never a wildcard)
    for (auto& seg : split_path(plain)) r.segments.push_back(seg);
    routes_.push_back(std::move(r));
}

std::string RouteTable::allowed(std::string_view path) const {
    const auto segs = split_path(path);
    std::vector<std::string> methods;
    for (const Route& r : routes_) {
        if (r.segments.size() != segs.size()) continue;
        bool match = true;
        for (std::size_t k = 0; k < segs.size() && match; ++k)
            match = r.segments[k] == "\x01" ? !segs[k].empty() : r.segments[k] == segs[k];
        if (!match) continue;
        if (std::find(methods.begin(), methods.end(), r.method) == methods.end()) methods.push_back(r.method);
        if (r.method == "GET" && std::find(methods.begin(), methods.end(), "HEAD") == methods.end())
            methods.push_back("HEAD");
    }
    std::sort(methods.begin(), methods.end());
    std::string out;
    for (const auto& m : methods) out += (out.empty() ? "" : ", ") + m;
    return out;
}

bool RouteTable::allows(std::string_view path, std::string_view method) const {
    const std::string all = ", " + allowed(path) + ",";
    return all.find(", " + std::string(method) + ",") != std::string::npos;
}

bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_len(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string bounded_message(std::string_view message, std::size_t max_echo) {
    // Quoted echoes first: text between a quote and the next quote.
    std::string out;
    std::size_t i = 0;
    while (i < message.size()) {
        const std::size_t open = message.find('\'', i);
        if (open == std::string_view::npos) {
            out.append(message.substr(i));
            break;
        }
        out.append(message.substr(i, open + 1 - i));
        const std::size_t close = message.find('\'', open + 1);
        if (close == std::string_view::npos) {
            out += clean(message.substr(open + 1), max_echo);
            break;
        }
        out += clean(message.substr(open + 1, close - open - 1), max_echo);
        out += '\'';
        i = close + 1;
    }
    return clean(out, 4 * max_echo);
}

}  // namespace astraeus::api
