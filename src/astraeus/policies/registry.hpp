// The built-in scheduling policies: one explicit name -> (options preset, factory) table
// (DESIGN.md). Every policy runs through the same scheduler shell, placer, lease and
// checkpoint/restore model and metrics (spec/astraea.md section 8; docs/policies.md).
// An unknown name is an error listing the valid ones. Thread safety: pure.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"
#include "astraeus/sched/options.hpp"
#include "astraeus/sched/policy.hpp"

namespace astraeus {

/// The options of policy `name`, starting from `base` (the command line's options); sets
/// `policy` to the Policy that runs the rounds. E.g.
///  - astraea: `base` as given (ASTRAEA, Ye et al., IEEE TPDS 2022);
///  - yarn-cs-emu: the YARN capacity-scheduler emulation of the ASTRAEA paper's evaluation
///    (spec section 7, row 5): the ASTRAEA round with fifo order, static quotas, leases that
///    never expire (1e7 s);
///  - fifo, yarn-cs, yarn-cs-elastic, drf, tiresias, themis, gandiva-fair, srtf: the baselines
///    of spec section 8 (policies/*.hpp, docs/policies.md).
Result<AstraeaOptions> policy_options(std::string_view name, AstraeaOptions base);

/// Comma-separated valid policy names.
std::string policy_names();

/// The Policy object that runs the rounds for `options` (options.policy names it); an error for
/// an unknown name or a bad parameter.
Result<std::unique_ptr<Policy>> make_policy(const AstraeaOptions& options);

}  // namespace astraeus
