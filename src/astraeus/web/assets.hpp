// The web pages' files (HTML, JavaScript modules, CSS), embedded in the binary at build time by
// cmake/embed_web_assets.cmake from src/astraeus/web/assets/, served by api/http_server.cpp at
// `/` (index.html) and `/assets/<file>` on the same origin as the REST API (docs/web.md).
// Nothing is read from disk or fetched from another host at run time.
// Thread safety: immutable data; every function is thread-safe.
#pragma once
#include <cstddef>
#include <span>
#include <string_view>

namespace astraeus::web {

struct Asset {
    std::string_view path;          ///< the URL path: "/" or "/assets/app.js"
    std::string_view content_type;  ///< e.g. "text/javascript; charset=utf-8"
    std::string_view body;          ///< the file's bytes
    std::string_view etag;          ///< a quoted strong ETag (from the file's SHA-256)
};

/// The asset served at URL path `path` (exact match), or nullptr.
const Asset* find_asset(std::string_view path);
/// Every embedded asset, in path order.
std::span<const Asset> all_assets();

/// The Content-Security-Policy sent with every page and asset: scripts, styles and API calls
/// from this origin only, no inline script, no frames, no other host.
inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

namespace generated {
extern const Asset kAssets[];
extern const std::size_t kAssetCount;
}  // namespace generated

}  // namespace astraeus::web
