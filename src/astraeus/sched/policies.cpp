#include "astraeus/sched/policies.hpp"

#include <array>
#include <functional>
#include <utility>

namespace astraeus {
namespace {

using Preset = void (*)(AstraeaOptions&);

constexpr std::array<std::pair<std::string_view, Preset>, 2> kPolicies{{
    {"astraea", [](AstraeaOptions&) {}},
    {"yarn-cs-emu",
     [](AstraeaOptions& o) {
         o.job_order = JobOrder::Fifo;
         o.quota_mode = QuotaMode::Static;
         o.lease_s = 10'000'000;
     }},
}};

}  // namespace

Result<AstraeaOptions> policy_options(std::string_view name, AstraeaOptions base) {
    for (const auto& [n, preset] : kPolicies) {
        if (n != name) continue;
        preset(base);
        return base;
    }
    return fail("unknown policy '" + std::string(name) + "'; valid: " + policy_names());
}

std::string policy_names() {
    std::string out;
    for (const auto& [n, preset] : kPolicies) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
}

}  // namespace astraeus
