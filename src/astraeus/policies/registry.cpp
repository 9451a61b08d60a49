#include "astraeus/policies/registry.hpp"

#include <array>

#include "astraeus/policies/astraea.hpp"
#include "astraeus/policies/drf.hpp"
#include "astraeus/policies/fifo.hpp"
#include "astraeus/policies/gandiva_fair.hpp"
#include "astraeus/policies/srtf.hpp"
#include "astraeus/policies/themis.hpp"
#include "astraeus/policies/tiresias.hpp"
#include "astraeus/policies/yarn_cs.hpp"

namespace astraeus {
namespace {

using Preset = void (*)(AstraeaOptions&);
using Factory = Result<std::unique_ptr<Policy>> (*)(const AstraeaOptions&);

struct Entry {
    std::string_view name;
    Preset preset;
    Factory factory;
};

template <class P>
Result<std::unique_ptr<Policy>> make(const AstraeaOptions& o) {
    return std::unique_ptr<Policy>(std::make_unique<P>(o));
}

/// The leases a preemptive baseline gives must leave time for work.
Result<void> check_lease(const AstraeaOptions& o, Seconds lease_s, const std::string& what) {
    if (lease_s <= o.checkpoint_s + o.restore_s)
        return fail(what + " (" + std::to_string(lease_s) +
                    " s) must be longer than checkpoint + restore (" +
                    std::to_string(o.checkpoint_s + o.restore_s) + " s), or no job progresses");
    return {};
}

Result<std::unique_ptr<Policy>> make_yarn_cs(const AstraeaOptions& o) {
    return std::unique_ptr<Policy>(std::make_unique<YarnCsPolicy>(o, false));
}

Result<std::unique_ptr<Policy>> make_yarn_cs_elastic(const AstraeaOptions& o) {
    const double s = o.params.yarn_max_share;
    if (!(s > 0 && s <= 1))
        return fail("yarn-cs-elastic: the maximum capacity share must be in (0, 1], got " +
                    std::to_string(s));
    return std::unique_ptr<Policy>(std::make_unique<YarnCsPolicy>(o, true));
}

Result<std::unique_ptr<Policy>> make_tiresias(const AstraeaOptions& o) {
    const auto& th = o.params.tiresias_thresholds_gpu_s;
    for (std::size_t k = 0; k < th.size(); ++k)
        if (th[k] <= 0 || (k > 0 && th[k] <= th[k - 1]))
            return fail("tiresias: queue thresholds must be positive GPU-seconds in ascending "
                        "order");
    if (!(o.params.tiresias_promote_knob >= 0))
        return fail("tiresias: the promotion knob P must be >= 0 (0 = off)");
    return std::unique_ptr<Policy>(std::make_unique<TiresiasPolicy>(o));
}

Result<std::unique_ptr<Policy>> make_themis(const AstraeaOptions& o) {
    const double f = o.params.themis_fairness_knob;
    if (!(f >= 0 && f < 1)) return fail("themis: the fairness knob f must be in [0, 1)");
    if (auto ok = check_lease(o, o.params.themis_lease_s, "themis: the lease"); !ok)
        return std::unexpected(ok.error());
    return std::unique_ptr<Policy>(std::make_unique<ThemisPolicy>(o));
}

Result<std::unique_ptr<Policy>> make_gandiva_fair(const AstraeaOptions& o) {
    if (o.params.gandiva_quantum_s < 0) return fail("gandiva-fair: the quantum must be >= 0");
    if (auto ok = check_lease(o, GandivaFairPolicy(o).quantum_s(), "gandiva-fair: the quantum");
        !ok)
        return std::unexpected(ok.error());
    return std::unique_ptr<Policy>(std::make_unique<GandivaFairPolicy>(o));
}

void named(AstraeaOptions& o, const char* policy) { o.policy = policy; }

/// The published algorithm: none of the default astraea's changes.
void as_published(AstraeaOptions& o) {
    o.improve.reserve = false;
    o.improve.history_ties = false;
    o.improve.index_half_life_s = 0;
    o.improve.exact_entitlement = false;
    o.improve.index_tolerance = 0;
    o.improve.overserved_victims = false;
    o.improve.reserve_own = false;
    o.improve.gang_weight = 0;
    o.improve.due_first = false;
    o.improve.keep_reservation = false;
    o.improve.placed_victims_only = false;
    o.improve.keep_renewals = false;
    o.improve.free_before_victims = false;
    o.improve.victim_margin = -1;
    o.improve.preempt_horizon_s = 0;
    o.improve.arrival_headroom = 0;
    o.improve.arrival_headroom_fraction = 0;
    o.improve.reclaim_within_quota = false;
}

/// The default astraea: its changes in default mode (compat reproduces the reference).
void astraea_preset(AstraeaOptions& o) {
    named(o, "astraea");
    if (o.mode == Mode::Compat) as_published(o);
}

constexpr std::array<Entry, 11> kPolicies{{
    {"astraea", astraea_preset, make<AstraeaPolicy>},
    {"astraea-paper",
     [](AstraeaOptions& o) {
         named(o, "astraea-paper");
         as_published(o);
     },
     make<AstraeaPolicy>},
    {"fifo", [](AstraeaOptions& o) { named(o, "fifo"); }, make<FifoPolicy>},
    {"yarn-cs",
     [](AstraeaOptions& o) {
         named(o, "yarn-cs");
         o.quota_mode = QuotaMode::Static;
     },
     make_yarn_cs},
    {"yarn-cs-elastic", [](AstraeaOptions& o) { named(o, "yarn-cs-elastic"); },
     make_yarn_cs_elastic},
    {"drf", [](AstraeaOptions& o) { named(o, "drf"); }, make<DrfPolicy>},
    {"tiresias", [](AstraeaOptions& o) { named(o, "tiresias"); }, make_tiresias},
    {"themis", [](AstraeaOptions& o) { named(o, "themis"); }, make_themis},
    {"gandiva-fair", [](AstraeaOptions& o) { named(o, "gandiva-fair"); }, make_gandiva_fair},
    {"srtf", [](AstraeaOptions& o) { named(o, "srtf"); }, make<SrtfPolicy>},
    {"yarn-cs-emu",
     [](AstraeaOptions& o) {
         named(o, "astraea");
         as_published(o);
         o.job_order = JobOrder::Fifo;
         o.quota_mode = QuotaMode::Static;
         o.lease_s = 10'000'000;
     },
     make<AstraeaPolicy>},
}};

const Entry* find(std::string_view name) {
    for (const Entry& e : kPolicies)
        if (e.name == name) return &e;
    return nullptr;
}

}  // namespace

Result<AstraeaOptions> policy_options(std::string_view name, AstraeaOptions base) {
    const Entry* e = find(name);
    if (e == nullptr)
        return fail("unknown policy '" + std::string(name) + "'; valid: " + policy_names());
    e->preset(base);
    return base;
}

std::string policy_names() {
    std::string out;
    for (const Entry& e : kPolicies) out += (out.empty() ? "" : ", ") + std::string(e.name);
    return out;
}

Result<std::unique_ptr<Policy>> make_policy(const AstraeaOptions& options) {
    const Entry* e = find(options.policy);
    if (e == nullptr)
        return fail("unknown policy '" + options.policy + "'; valid: " + policy_names());
    return e->factory(options);
}

}  // namespace astraeus
