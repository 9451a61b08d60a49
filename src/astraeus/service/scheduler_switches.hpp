// The astraea policy's opt-in rules that `astraeus serve` can run with (config key "scheduler"),
// each one of AstraeaImprovements (sched/options.hpp), measured in docs/policies.md:
//   "scheduler": {"arrival_headroom": 2, "arrival_headroom_fraction": 0.003,
//                 "free_before_victims": true, "placed_victims_only": false,
//                 "reclaim_within_quota": true, "keep_reservation": false, "due_first": false,
//                 "gang_weight": 1, "victim_margin": -1}
// An absent key keeps the policy's preset (astraea's defaults, the simulator's: the headroom scaled
// to the pool, 0.003 of its GPUs, free_before_victims, placed_victims_only, reclaim_within_quota). The same names as `astraeus simulate`'s flags
// (--arrival-headroom, --free-before-victims, ...), so that a what-if on the site's history and
// the live service run the same rules. Thread safety: plain values.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"
#include "astraeus/sched/options.hpp"

namespace astraeus::service {

struct SchedulerSwitches {
    std::optional<int> arrival_headroom;          ///< GPUs, -1..100000 (0: off; -1: scaled)
    std::optional<double> arrival_headroom_fraction;  ///< of the pool's GPUs, 0..0.5 (with -1)
    std::optional<bool> free_before_victims;
    std::optional<bool> placed_victims_only;
    std::optional<bool> reclaim_within_quota;
    std::optional<bool> keep_reservation;
    std::optional<bool> due_first;
    std::optional<double> gang_weight;            ///< W in F_j x g_j^W, 0..4
    std::optional<double> victim_margin;          ///< < 0: off

    bool empty() const;
    /// "arrival_headroom=2 free_before_victims=true" (the keys set, in the order above); "" if none.
    std::string describe() const;
};

/// The switches in `j` (the value of the "scheduler" key); an error naming `where`, the key and
/// what it must hold for an unknown key, a wrong type or a value out of range.
Result<SchedulerSwitches> parse_scheduler_switches(const nlohmann::json& j, const std::string& where);

/// The options the service schedules with: the preset of `policy` (policies/registry.hpp) with
/// the lease term and T_starve (seconds) and the switches over it. An error when the policy is
/// unknown, or when switches are given for a policy other than "astraea" (they are its rules).
Result<AstraeaOptions> scheduler_options(const std::string& policy, Seconds lease_s, Seconds starvation_s,
                                         const SchedulerSwitches& switches);

}  // namespace astraeus::service
