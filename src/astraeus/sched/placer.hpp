// Placer: chooses GPUs for a whole gang, or nothing (all-or-nothing gang placement).
// Implementations live in placement/. Thread safety: stateless placers are thread-safe.
#pragma once
#include <optional>
#include <string_view>

#include "astraeus/model/cluster.hpp"

namespace astraeus {

class Placer {
public:
    virtual ~Placer() = default;
    virtual std::string_view name() const = 0;
    /// Places a gang of `gpus` GPUs on `cluster`. On success the GPUs are taken from `cluster`
    /// and returned; on failure `cluster` is unchanged and the result is empty.
    virtual std::optional<Placement> place(ClusterState& cluster, int gpus) const = 0;
};

}  // namespace astraeus
