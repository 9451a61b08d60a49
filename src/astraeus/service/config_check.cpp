#include "astraeus/service/config_check.hpp"

#include "astraeus/goodput/alerts.hpp"
#include "astraeus/placement/registry.hpp"
#include "astraeus/policies/registry.hpp"

namespace astraeus::service {

Result<void> check_config_names(const ServiceConfig& c, const std::string& where) {
    if (auto p = policy_options(c.policy, AstraeaOptions{}); !p)
        return fail(where + ": policy: " + p.error().message);
    if (auto p = scheduler_options(c.policy, c.lease_s, c.starvation_s, c.scheduler); !p)
        return fail(where + ": " + p.error().message);
    if (auto p = make_placer(c.placer); !p) return fail(where + ": placer: " + p.error().message);
    for (std::size_t i = 0; i < c.thresholds.size(); ++i) {
        const std::string w = where + ": threshold_alerts[" + std::to_string(i) + "]: ";
        if (auto m = goodput::parse_metric(c.thresholds[i].metric); !m) return fail(w + m.error().message);
        if (auto o = goodput::parse_op(c.thresholds[i].op); !o) return fail(w + o.error().message);
    }
    return {};
}

}  // namespace astraeus::service
