// The placers by name: one explicit name -> factory table.
#pragma once
#include <memory>
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/sched/placer.hpp"

namespace astraeus {

/// Makes the placer called `name` (consolidate, pack); an unknown name is an error listing the
/// valid ones.
Result<std::unique_ptr<Placer>> make_placer(const std::string& name);

}  // namespace astraeus
