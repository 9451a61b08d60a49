#include "astraeus/policies/gandiva_fair.hpp"

#include "astraeus/policies/common.hpp"

namespace astraeus {

void GandivaFairPolicy::on_admit(const RoundInput& in, int j, PolicyLedger& ledger) const {
    if (ledger.job.size() < in.jobs.size()) ledger.job.resize(in.jobs.size(), 0.0);  // first use
    ledger.job[j] = ledger.run;
}

void GandivaFairPolicy::on_release(const RoundInput& in, int j, Seconds held_s,
                                   PolicyLedger& ledger) const {
    const Job& job = in.jobs[j];
    const double service = static_cast<double>(GpuSeconds{job.gpus} * held_s);
    const double weight = in.tenant_info[job.tenant].weight;
    if (weight > 0) ledger.job[j] += service * in.active[job.tenant] / weight;
    double active_weight = 0;
    for (std::size_t u = 0; u < in.active.size(); ++u)
        if (in.active[u] > 0) active_weight += in.tenant_info[u].weight;
    if (active_weight > 0) ledger.run += service / active_weight;
}

void GandivaFairPolicy::round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng&,
                              std::vector<Action>& actions) {
    actions.clear();
    if (cluster.free_gpus() == 0) return;  // descheduling only at quantum ends
    // The rank (pass, submit) does not change while a job waits: passes move at releases.
    index_.update(
        in, 1,
        [&](int j) {
            // Zero tickets (a zero-weight tenant): after every job that has some.
            const double no_tickets = in.tenant_info[in.jobs[j].tenant].weight > 0 ? 0 : 1;
            return RankKey{no_tickets, in.ledger->job[j], double(in.jobs[j].submit_s), j, j};
        },
        [](int) { return 0; });
    policy_detail::start_in_key_order(in, cluster, placer, index_, 0, failed_, actions);
}

}  // namespace astraeus
