// Built-in scheduling policies by name: one explicit name -> options table. Every policy runs
// through the same scheduler, placer, lease and overhead model (spec/astraea.md section 8).
// An unknown name is an error listing the valid ones. Thread safety: pure.
#pragma once
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"
#include "astraeus/sched/options.hpp"

namespace astraeus {

/// The options of policy `name`, starting from `base` (the command line's options):
///  - astraea: `base` as given (ASTRAEA, Ye et al., IEEE TPDS 2022);
///  - yarn-cs-emu: the YARN capacity-scheduler emulation of the ASTRAEA paper's evaluation
///    (spec section 7, row 5): fifo order, static quotas, leases that never expire (1e7 s).
Result<AstraeaOptions> policy_options(std::string_view name, AstraeaOptions base);

/// Comma-separated valid policy names.
std::string policy_names();

}  // namespace astraeus
