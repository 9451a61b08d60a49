// The checks of a service configuration that need the scheduler's and the alerts' registries
// (policy, placer, threshold metric and operator names): done when the file is loaded, so that
// `astraeus serve` and `astraeus admin init --config` refuse the same files with the same
// message (exit 2) before touching a data directory. Thread safety: a pure function.
#pragma once
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/service/config.hpp"

namespace astraeus::service {

/// OK when `c`'s policy, placer and every threshold alert's metric and op are known names;
/// else "WHERE: policy: unknown policy 'x'; valid: ..." (likewise "placer", and
/// "threshold_alerts[i]: ..."). Scope names are checked when the service opens (they name
/// workspaces, pools and machines of the store).
Result<void> check_config_names(const ServiceConfig& c, const std::string& where);

}  // namespace astraeus::service
