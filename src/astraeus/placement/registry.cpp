#include "astraeus/placement/registry.hpp"

#include "astraeus/placement/consolidate.hpp"
#include "astraeus/placement/pack.hpp"

namespace astraeus {

Result<std::unique_ptr<Placer>> make_placer(const std::string& name) {
    if (name == "consolidate") return std::make_unique<ConsolidatePlacer>();
    if (name == "pack") return std::make_unique<PackPlacer>();
    return fail("unknown placement '" + name + "'; valid: consolidate, pack");
}

}  // namespace astraeus
