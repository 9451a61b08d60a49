// The policy registry and properties every baseline must keep on a real input (the reference
// simulator's fake_job.csv, 500 jobs, 20 tenants, 320 GPUs, default mode): every admitted job
// finishes, no job runs before its submit or shorter than its work, the GPUs held never exceed
// the cluster, the same input gives the same bytes, and each policy's own promises (no leases
// for the non-preemptive ones, quotas never exceeded by YARN-CS, no mid-lease preemption where
// there is none). Timelines of each policy's defining behaviour: tests/scenarios/policy_*.scn.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "astraeus/config/tenant_config.hpp"
#include "astraeus/placement/consolidate.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/sched/astraea_round.hpp"
#include "astraeus/sim/engine.hpp"
#include "astraeus/sim/metrics.hpp"
#include "astraeus/sim/report.hpp"
#include "astraeus/trace/reference_csv.hpp"

namespace astraeus {
namespace {

const std::vector<std::string> kBaselines = {"fifo", "yarn-cs", "yarn-cs-elastic", "drf",
                                             "tiresias", "themis", "gandiva-fair", "srtf"};

const Workload& fake_job() {
    static const Workload w = [] {
        const std::string dir = ASTRAEUS_DATA_DIR "/astraea-artifact/";
        auto tenants = read_tenant_config(dir + "share.csv", dir + "name.lst");
        auto trace = read_reference_jobs(dir + "fake_job.csv");
        return *apply_tenants(std::move(*trace), *tenants, UnknownTenant::Drop, "fake_job.csv");
    }();
    return w;
}

SimConfig config_for(const std::string& policy) {
    SimConfig c;  // 40 x 8 GPUs, default mode
    c.options.lease_s = 900;
    c.options.starvation_s = 21600;
    auto o = policy_options(policy, c.options);
    EXPECT_TRUE(o) << policy;
    c.options = *o;
    return c;
}

TEST(PolicyRegistry, NamesEveryBuiltInAndRefusesOthers) {
    const std::string names = policy_names();
    for (const std::string& p : kBaselines) {
        EXPECT_NE(names.find(p), std::string::npos) << p;
        auto o = policy_options(p, AstraeaOptions{});
        ASSERT_TRUE(o) << p;
        EXPECT_EQ(o->policy, p);
        auto made = make_policy(*o);
        ASSERT_TRUE(made) << p;
        EXPECT_EQ((*made)->name(), p);
    }
    // ASTRAEA and the paper's YARN-CS emulation run the ASTRAEA round.
    EXPECT_EQ(policy_options("astraea", AstraeaOptions{})->policy, "astraea");
    auto emu = policy_options("yarn-cs-emu", AstraeaOptions{});
    EXPECT_EQ(emu->policy, "astraea");
    EXPECT_EQ(emu->quota_mode, QuotaMode::Static);
    EXPECT_EQ(emu->lease_s, 10'000'000);
    EXPECT_FALSE(emu->improve.reserve);
    // The published algorithm: every change of the default astraea off.
    auto paper = policy_options("astraea-paper", AstraeaOptions{});
    ASSERT_TRUE(paper);
    EXPECT_EQ(paper->policy, "astraea-paper");
    EXPECT_FALSE(paper->improve.reserve || paper->improve.history_ties ||
                 paper->improve.exact_entitlement);
    EXPECT_EQ(paper->improve.index_half_life_s, 0);
    EXPECT_EQ(paper->improve.index_tolerance, 0);
    EXPECT_EQ((*make_policy(*paper))->name(), "astraea-paper");

    auto bad = policy_options("lottery", AstraeaOptions{});
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("unknown policy 'lottery'; valid: astraea, astraea-paper, fifo"),
              std::string::npos);
    AstraeaOptions o;
    o.policy = "lottery";
    EXPECT_FALSE(make_policy(o));
}

TEST(PolicyRegistry, BadParametersAreErrors) {
    auto with = [](const std::string& p, auto change) {
        AstraeaOptions o = *policy_options(p, AstraeaOptions{});
        change(o.params);
        auto made = make_policy(o);
        return made ? std::string() : made.error().message;
    };
    EXPECT_NE(with("tiresias", [](PolicyParams& q) { q.tiresias_thresholds_gpu_s = {500, 100}; })
                  .find("ascending"),
              std::string::npos);
    EXPECT_NE(with("tiresias", [](PolicyParams& q) { q.tiresias_promote_knob = -1; }).find("P"),
              std::string::npos);
    EXPECT_NE(with("themis", [](PolicyParams& q) { q.themis_fairness_knob = 1; }).find("f"),
              std::string::npos);
    EXPECT_NE(with("themis", [](PolicyParams& q) { q.themis_lease_s = 25; }).find("lease"),
              std::string::npos);
    EXPECT_NE(with("gandiva-fair", [](PolicyParams& q) { q.gandiva_quantum_s = 10; })
                  .find("quantum"),
              std::string::npos);
    EXPECT_NE(with("yarn-cs-elastic", [](PolicyParams& q) { q.yarn_max_share = 0; })
                  .find("maximum capacity"),
              std::string::npos);
    // Tiresias without thresholds is plain FIFO-with-leases: legal.
    EXPECT_EQ(with("tiresias", [](PolicyParams& q) { q.tiresias_thresholds_gpu_s.clear(); }), "");
}

TEST(PolicyRegistry, BaselinesRunInDefaultModeOnly) {
    for (const std::string& p : kBaselines) {
        SimConfig c = config_for(p);
        c.options.mode = Mode::Compat;
        c.options.checkpoint_s = c.options.restore_s = 0;
        auto r = simulate(fake_job(), c);
        ASSERT_FALSE(r) << p;
        EXPECT_NE(r.error().message.find("default mode only"), std::string::npos) << p;
    }
}

class EveryBaseline : public testing::TestWithParam<std::string> {};

TEST_P(EveryBaseline, KeepsTheSimulatorsInvariants) {
    const std::string policy = GetParam();
    const Workload& w = fake_job();
    const SimConfig c = config_for(policy);
    auto r = simulate(w, c);
    ASSERT_TRUE(r) << r.error().message;
    const int total = c.cluster.total_gpus();
    GpuSeconds work = 0;
    std::size_t done = 0;
    for (std::size_t j = 0; j < w.jobs.size(); ++j) {
        const Job& job = w.jobs[j];
        const RunState& run = r->runs[j];
        if (run.status == RunStatus::Dropped) continue;
        ASSERT_EQ(run.status, RunStatus::Done) << policy << " job " << job.id;
        ++done;
        EXPECT_GE(run.first_start_s, job.submit_s);
        EXPECT_GE(run.end_s - run.first_start_s, job.duration_s);
        work += GpuSeconds{job.gpus} * job.duration_s;
    }
    EXPECT_GT(done, 400u) << policy;
    // Held GPU-time covers the work, and never more GPUs than the cluster has.
    EXPECT_GE(r->busy_gpu_s, work);
    EXPECT_LE(r->busy_gpu_s, GpuSeconds{total} * r->end_s);
    for (const TenantSample& s : r->tenant_series) EXPECT_LE(s.used_gpus, total);

    // The same input gives the same bytes.
    auto again = simulate(w, c);
    ASSERT_TRUE(again);
    const Summary s1 = summarize(w, *r, total), s2 = summarize(w, *again, total);
    EXPECT_EQ(jobs_csv(w, *r), jobs_csv(w, *again));
    EXPECT_EQ(tenants_csv(w, *r), tenants_csv(w, *again));
    EXPECT_EQ(summary_json(w, *r, s1).dump(), summary_json(w, *again, s2).dump());

    int preemptions = 0, expiries = 0;
    for (const RunState& run : r->runs) {
        preemptions += run.preemptions;
        expiries += run.lease_expiries;
    }
    if (policy == "fifo" || policy == "yarn-cs") {  // no leases, no preemption
        EXPECT_EQ(expiries, 0) << policy;
        EXPECT_EQ(r->overhead_gpu_s, 0) << policy;
    }
    if (policy == "themis" || policy == "gandiva-fair" || policy == "srtf" || policy == "fifo" ||
        policy == "yarn-cs") {  // preempt at lease ends only, or never
        EXPECT_EQ(preemptions, 0) << policy;
    }
    if (policy == "yarn-cs") {  // never above its quota, never borrows
        for (const TenantSample& s : r->tenant_series)
            EXPECT_LE(s.used_gpus, r->quotas[s.tenant]) << "tenant " << s.tenant << " at "
                                                        << s.time_s;
    }
}

INSTANTIATE_TEST_SUITE_P(Policies, EveryBaseline, testing::ValuesIn(kBaselines),
                         [](const testing::TestParamInfo<std::string>& p) {
                             std::string n = p.param;
                             std::replace(n.begin(), n.end(), '-', '_');
                             return n;
                         });

}  // namespace
}  // namespace astraeus

namespace astraeus {
namespace {

/// One ASTRAEA round on a hand-made state: 3 tenants on 4 x 8 GPUs, running jobs (two of
/// tenant 0 restarted 60 s ago: delay jobs), pending new jobs, a starving gang, and jobs that
/// already ran. Returns its actions as (kind, job, machine:gpus...) text.
std::vector<std::string> round_with_durations(const std::vector<Seconds>& durations) {
    static const std::vector<Tenant> tenants = {{"a", 1}, {"b", 2}, {"c", 1}};
    std::vector<Job> jobs;
    const int gpus[] = {8, 4, 4, 2, 8, 1, 16, 2, 4, 1, 8, 2};
    const int owner[] = {0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 0, 1};
    for (int j = 0; j < 12; ++j) {
        Job x;
        x.id = j;
        x.tenant = owner[j];
        x.gpus = gpus[j];
        x.submit_s = 100 * j;
        x.duration_s = durations[static_cast<std::size_t>(j)];
        jobs.push_back(x);
    }
    std::vector<RunState> runs(jobs.size());
    ClusterState cluster(ClusterSpec::uniform(4, 8));
    const Seconds now = 30000;
    std::vector<Seconds> lease_end(jobs.size(), 0), wait_begin(jobs.size(), 0);
    // Running: 0 (8 GPUs, machine 0), 1 and 2 (tenant 0's delay jobs, machine 1), 3 (machine 2).
    auto run_on = [&](int j, int m, Seconds since, Seconds executed) {
        RunState& r = runs[static_cast<std::size_t>(j)];
        r.status = RunStatus::Running;
        r.placement.parts.push_back({m, gpus[j]});
        r.executed_s = executed;
        r.lease_expiries = 1;
        r.utilized_gpu_s = static_cast<double>(executed * gpus[j]);
        r.deserved_gpu_s = 2000.0 * gpus[j];
        r.fairness = r.utilized_gpu_s / r.deserved_gpu_s;
        cluster.take(m, gpus[j]);
        lease_end[static_cast<std::size_t>(j)] = now - since + 900;
    };
    run_on(0, 0, 600, 5000);
    run_on(1, 1, 60, 3000);
    run_on(2, 1, 60, 900);
    run_on(3, 2, 300, 100);
    std::vector<int> pending = {4, 5, 6, 7, 8, 9, 10, 11};
    for (int j : pending) {
        RunState& r = runs[static_cast<std::size_t>(j)];
        r.status = RunStatus::Pending;
        r.executed_s = j % 2 == 0 ? 0 : 1200;  // odd ones already ran
        r.utilized_gpu_s = static_cast<double>(r.executed_s * gpus[j]);
        r.deserved_gpu_s = 1500.0 * gpus[j] + j;
        r.fairness = r.utilized_gpu_s / r.deserved_gpu_s;
        wait_begin[static_cast<std::size_t>(j)] = j == 6 ? 0 : now - 500;  // 6 is starving
    }
    RoundInput in;
    in.jobs = jobs;
    in.runs = runs;
    in.tenant_info = tenants;
    in.now = now;
    in.sticky_renewals = true;
    in.pending_jobs = static_cast<int>(pending.size());
    in.lease_end_s = lease_end;
    in.wait_begin_s = wait_begin;
    const std::vector<int> running = {0, 1, 2, 3}, share_order = {0, 1, 2};
    in.running_all = running;
    in.share_order = share_order;
    const int quota[] = {8, 16, 8}, used[] = {16, 2, 0};
    const double index[] = {1.4, 0.6, 0.9};
    in.tenants.resize(3);
    for (std::size_t u = 0; u < 3; ++u) {
        TenantQueue& q = in.tenants[u];
        q.quota = quota[u];
        q.used = used[u];
        q.index = index[u];
        q.utilized = static_cast<GpuSeconds>(index[u] * 100000);
        q.entitled = 100000;
        q.min_gpus = 1;
        q.new_jobs = 2;
        q.starving_jobs = u == 1 ? 1 : 0;
    }
    static const std::vector<int> starving_b = {6};
    in.prepare = [&](std::size_t u, TenantQueue& q) {
        q.pending.clear();
        for (int j : pending)
            if (owner[j] == static_cast<int>(u) && j != 6) q.pending.push_back(j);
        q.starving = u == 1 ? std::span<const int>(starving_b) : std::span<const int>();
        q.delay.clear();
        if (u == 0) q.delay = {1, 2};
    };
    AstraeaOptions opt;
    opt.lease_s = 900;
    ConsolidatePlacer placer;
    Rng rng(1);
    std::vector<Action> actions;
    astraea_round(in, cluster, opt, placer, rng, actions);
    std::vector<std::string> out;
    for (const Action& a : actions) {
        std::string s = fmt::format("{} {}", a.kind == Action::Kind::Start ? "start" : "preempt", a.job);
        for (const auto& p : a.placement.parts) s += fmt::format(" {}:{}", p.machine, p.gpus);
        out.push_back(s);
    }
    return out;
}

// The default ASTRAEA (fairness order, no backfill) does not predict run times
// (predicts_run_times() is false), so the simulator hands it the real jobs: its decisions must
// not depend on them. Two very different sets of run times give the same round.
TEST(AstraeaRound, DecisionsDoNotDependOnRunTimes) {
    const std::vector<Seconds> short_ones(12, 60);
    std::vector<Seconds> mixed;
    for (int j = 0; j < 12; ++j) mixed.push_back(j % 3 == 0 ? 9'000'000 : 1 + 37 * j);
    const auto a = round_with_durations(short_ones);
    const auto b = round_with_durations(mixed);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace astraeus
