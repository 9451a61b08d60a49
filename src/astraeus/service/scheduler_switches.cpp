#include "astraeus/service/scheduler_switches.hpp"

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "astraeus/policies/registry.hpp"

namespace astraeus::service {
namespace {

using nlohmann::json;

#define TRY(x)                                                         \
    do {                                                               \
        if (auto ok_ = (x); !ok_) return std::unexpected(ok_.error()); \
    } while (0)

const std::set<std::string> kKeys = {"arrival_headroom",     "arrival_headroom_fraction", "free_before_victims",
                                     "placed_victims_only",  "reclaim_within_quota",      "keep_reservation",
                                     "due_first",            "gang_weight",               "victim_margin"};

Result<void> read_bool(const json& j, const char* key, std::optional<bool>& out, const std::string& where) {
    if (!j.contains(key)) return {};
    if (!j.at(key).is_boolean()) return fail(where + ": key '" + key + "' must be true or false");
    out = j.at(key).get<bool>();
    return {};
}

Result<void> read_number(const json& j, const char* key, double lo, double hi, std::optional<double>& out,
                         const std::string& where) {
    if (!j.contains(key)) return {};
    const json& v = j.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo || v.get<double>() > hi)
        return fail(where + ": key '" + key + "' must be a number in " + json(lo).dump() + ".." + json(hi).dump());
    out = v.get<double>();
    return {};
}

}  // namespace

bool SchedulerSwitches::empty() const { return describe().empty(); }

std::string SchedulerSwitches::describe() const {
    std::string s;
    auto add = [&](const char* k, const std::string& v) {
        if (!s.empty()) s.push_back(' ');
        s.append(k).append("=").append(v);
    };
    auto b = [](bool v) { return std::string(v ? "true" : "false"); };
    if (arrival_headroom) add("arrival_headroom", std::to_string(*arrival_headroom));
    if (arrival_headroom_fraction) add("arrival_headroom_fraction", json(*arrival_headroom_fraction).dump());
    if (free_before_victims) add("free_before_victims", b(*free_before_victims));
    if (placed_victims_only) add("placed_victims_only", b(*placed_victims_only));
    if (reclaim_within_quota) add("reclaim_within_quota", b(*reclaim_within_quota));
    if (keep_reservation) add("keep_reservation", b(*keep_reservation));
    if (due_first) add("due_first", b(*due_first));
    if (gang_weight) add("gang_weight", json(*gang_weight).dump());
    if (victim_margin) add("victim_margin", json(*victim_margin).dump());
    return s;
}

Result<SchedulerSwitches> parse_scheduler_switches(const json& j, const std::string& where) {
    if (!j.is_object()) return fail(where + ": expected an object");
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!kKeys.contains(it.key())) {
            std::string m = where + ": unknown key '" + it.key() + "' (valid:";
            for (const auto& k : kKeys) m += " " + k;
            return fail(m + ")");
        }
    SchedulerSwitches s;
    if (j.contains("arrival_headroom")) {
        const json& v = j.at("arrival_headroom");
        if (!v.is_number_integer() || v.get<long long>() < -1 || v.get<long long>() > 100000)
            return fail(where +
                        ": key 'arrival_headroom' must be an integer in -1..100000 (GPUs; 0: off; -1: "
                        "arrival_headroom_fraction of the pool's GPUs)");
        s.arrival_headroom = static_cast<int>(v.get<long long>());
    }
    TRY(read_number(j, "arrival_headroom_fraction", 0, 0.5, s.arrival_headroom_fraction, where));
    TRY(read_bool(j, "free_before_victims", s.free_before_victims, where));
    TRY(read_bool(j, "placed_victims_only", s.placed_victims_only, where));
    TRY(read_bool(j, "reclaim_within_quota", s.reclaim_within_quota, where));
    TRY(read_bool(j, "keep_reservation", s.keep_reservation, where));
    TRY(read_bool(j, "due_first", s.due_first, where));
    TRY(read_number(j, "gang_weight", 0, 4, s.gang_weight, where));
    TRY(read_number(j, "victim_margin", -1e9, 1e9, s.victim_margin, where));
    return s;
}

Result<AstraeaOptions> scheduler_options(const std::string& policy, Seconds lease_s, Seconds starvation_s,
                                         const SchedulerSwitches& sw) {
    AstraeaOptions base;
    base.lease_s = lease_s;
    base.starvation_s = starvation_s;
    auto opt = policy_options(policy, base);
    if (!opt) return opt;
    if (sw.empty()) return opt;
    if (policy != "astraea")
        return fail("scheduler: the switches (" + sw.describe() + ") are rules of policy 'astraea', not of '" +
                    policy + "'");
    AstraeaImprovements& imp = opt->improve;
    if (sw.arrival_headroom) imp.arrival_headroom = *sw.arrival_headroom;
    if (sw.arrival_headroom_fraction) imp.arrival_headroom_fraction = *sw.arrival_headroom_fraction;
    if (sw.free_before_victims) imp.free_before_victims = *sw.free_before_victims;
    if (sw.placed_victims_only) imp.placed_victims_only = *sw.placed_victims_only;
    if (sw.reclaim_within_quota) imp.reclaim_within_quota = *sw.reclaim_within_quota;
    if (sw.keep_reservation) imp.keep_reservation = *sw.keep_reservation;
    if (sw.due_first) imp.due_first = *sw.due_first;
    if (sw.gang_weight) imp.gang_weight = *sw.gang_weight;
    if (sw.victim_margin) imp.victim_margin = *sw.victim_margin;
    return opt;
}

}  // namespace astraeus::service
