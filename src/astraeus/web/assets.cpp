#include "astraeus/web/assets.hpp"

namespace astraeus::web {

std::span<const Asset> all_assets() { return {generated::kAssets, generated::kAssetCount}; }

const Asset* find_asset(std::string_view path) {
    for (const Asset& a : all_assets())
        if (a.path == path) return &a;
    return nullptr;
}

}  // namespace astraeus::web
