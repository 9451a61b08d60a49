// The cases users found where the published ASTRAEA fails a cluster's users
// (tests/fixtures/cases/*/README.md), each with the value a user expects under the default
// `astraea` and the published behaviour kept by `astraea-paper` (docs/policies.md, "astraea and
// astraea-paper"). Inputs are the cases' own files; expected values are worked out in each test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "astraeus/config/cluster_config.hpp"
#include "astraeus/config/tenant_config.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/sched/job_order.hpp"
#include "astraeus/placement/registry.hpp"
#include "astraeus/sim/engine.hpp"
#include "astraeus/sim/event_engine.hpp"
#include "astraeus/sim/metrics.hpp"
#include "astraeus/sim/report.hpp"
#include "astraeus/trace/read_trace.hpp"
#include "astraeus/trace/reference_csv.hpp"
#include "astraeus/trace/tenants.hpp"

namespace astraeus {
namespace {

const std::string kCases = ASTRAEUS_TESTS_DIR "/fixtures/cases/";

Workload load(const std::string& dir, const std::string& tenants_file = "tenants.json") {
    auto trace = read_trace(kCases + dir + "/trace.csv", "auto", nullptr);
    EXPECT_TRUE(trace) << (trace ? "" : trace.error().message);
    auto tenants = read_tenant_config(kCases + dir + "/" + tenants_file, "");
    EXPECT_TRUE(tenants) << (tenants ? "" : tenants.error().message);
    auto w = apply_tenants(std::move(*trace), *tenants, UnknownTenant::Error, dir);
    EXPECT_TRUE(w) << (w ? "" : w.error().message);
    return std::move(*w);
}

/// As the cases' run.sh: lease 900 s, starvation 21,600 s, delay 300 s, default costs unless
/// `no_costs`; `tweak` changes the options after the policy's preset.
SimResult run(const Workload& w, const std::string& cluster, const std::string& policy,
              bool no_costs = false, void (*tweak)(AstraeaOptions&) = nullptr) {
    SimConfig c;
    auto spec = resolve_cluster(cluster);
    EXPECT_TRUE(spec) << cluster;
    c.cluster = *spec;
    AstraeaOptions base;
    base.lease_s = 900;
    base.starvation_s = 21600;
    base.delay_s = 300;
    if (no_costs) base.checkpoint_s = base.restore_s = 0;
    auto o = policy_options(policy, base);
    EXPECT_TRUE(o) << policy;
    c.options = *o;
    if (tweak != nullptr) tweak(c.options);
    auto r = simulate(w, c);
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return std::move(*r);
}

int job_named(const Workload& w, std::string_view name) {
    for (std::size_t j = 0; j < w.jobs.size(); ++j)
        if (w.jobs[j].name == name) return static_cast<int>(j);
    ADD_FAILURE() << "no job " << name;
    return 0;
}

const TenantSample* sample(const SimResult& r, Seconds t, int tenant) {
    for (const TenantSample& s : r.tenant_series)
        if (s.time_s == t && s.tenant == tenant) return &s;
    return nullptr;
}

// gang-starved-by-small-stream: L1 (16 GPUs on 2 x 8) arrives at 10 s while tenant S holds all
// 16 GPUs; S's 16 initial jobs end at 225, 450, ..., 3600 s and a stream of 1-GPU S jobs arrives
// every 225 s. Every running lease began at 0 s, so all end at 900 s: the reserved start. The
// GPUs freed at 225, 450 and 675 s are held (the stream jobs that take them get leases ending
// at 900 s), so at 900 s all 16 are free and L1 starts: 900 s. The published algorithm gives
// each freed GPU to a stream job and L1 waits for the stream's end: 10,820 s.
TEST(FairerAstraea, GangStartsAtTheFirstLeaseEndItCanBeHeldFor) {
    const Workload w = load("gang-starved-by-small-stream");
    const int l1 = job_named(w, "L1");
    const SimResult now = run(w, "2x8", "astraea");
    EXPECT_EQ(now.runs[l1].first_start_s, 900);
    const SimResult paper = run(w, "2x8", "astraea-paper");
    EXPECT_EQ(paper.runs[l1].first_start_s, 10820);
    const SimResult off =
        run(w, "2x8", "astraea", false, [](AstraeaOptions& o) { o.improve.reserve = false; });
    EXPECT_GT(off.runs[l1].first_start_s, 3600);  // without reservation: after the stream's start
}

// The same with a stream four times as long (128 jobs, to 28,800 s): the published algorithm
// makes L1 wait past the 21,600-s starvation threshold; with reservation it still starts at 900 s.
TEST(FairerAstraea, GangWaitIsBoundedWhateverTheStreamLength) {
    Workload w = load("gang-starved-by-small-stream");
    const Job model = w.jobs[static_cast<std::size_t>(job_named(w, "L1"))];
    const int s_tenant = w.jobs.front().tenant;
    std::int64_t id = 1000;
    for (Seconds t = 7200 + 225; t <= 28800; t += 225) {
        Job j;
        j.id = id++;
        j.tenant = s_tenant;
        j.gpus = 1;
        j.submit_s = t;
        j.duration_s = 3600;
        w.jobs.push_back(j);
    }
    sort_by_submit(w);
    const int l1 = job_named(w, model.name);
    EXPECT_GT(run(w, "2x8", "astraea-paper").runs[l1].first_start_s, 21600 + 900);
    EXPECT_EQ(run(w, "2x8", "astraea").runs[l1].first_start_s, 900);
}

// tie-goes-to-tenant-order: at 36,000 s A1's lease ends and A2 and B1 (4 GPUs each, 1 x 4) arrive;
// both tenants hold 0 GPUs (a tie on the 20 % guarantee). B's index is 0 (it used nothing), A's
// is above 1, so B1 starts at 36,000 s whichever tenant the file lists first, and runs 3,600 s of
// work in four leases, each ending with a 5-s checkpoint: ends at 39,620 s. The published
// algorithm serves the first tenant in the file.
TEST(FairerAstraea, TieOnTheGuaranteeGoesToHistoryNotFileOrder) {
    for (const std::string file : {"tenants.json", "tenants-b-first.json"}) {
        const Workload w = load("tie-goes-to-tenant-order", file);
        const int b1 = job_named(w, "B1"), a2 = job_named(w, "A2");
        const SimResult r = run(w, "1x4", "astraea");
        EXPECT_EQ(r.runs[b1].first_start_s, 36000) << file;
        EXPECT_EQ(r.runs[b1].end_s, 39620) << file;
        EXPECT_GE(r.runs[a2].first_start_s, 39620) << file;
        const SimResult paper = run(w, "1x4", "astraea-paper");
        const bool a_first = w.tenants[0].name == "A";
        EXPECT_EQ(paper.runs[a_first ? a2 : b1].first_start_s, 36000) << file;
    }
}

/// GPU-seconds tenant u received in the window ending at t (all of the run here: t <= 24 h):
/// F_u x D_u, D_u = min(demand, Q_u) x the seconds it had demand.
double received(const SimResult& r, Seconds t, int u, Seconds demand_from) {
    const TenantSample* s = sample(r, t, u);
    EXPECT_NE(s, nullptr);
    return s == nullptr ? 0 : s->fairness * r.quotas[u] * static_cast<double>(t - demand_from);
}

// equal-weights-odd-cluster: 11 GPUs (5 x 2 + 1), A and B weight 1 (quotas rounded to 6 and 5),
// five 2-GPU jobs each (A at 0 s, B at 60 s), all wanting more than their share for 36,000 s.
// Exact entitlements (5.5 GPUs each) make the split alternate at lease ends, so the GPU-time
// received by 36,000 s is equal within one job's size over one lease (2 GPUs x 900 s). The
// published rule (entitlement = rounded quota) gives 196,200 vs 163,800 GPU-seconds.
TEST(FairerAstraea, EqualWeightsGetEqualGpuTimeOnAnOddCluster) {
    const Workload w = load("equal-weights-odd-cluster");
    const std::string cluster = kCases + "equal-weights-odd-cluster/cluster.csv";
    const SimResult r = run(w, cluster, "astraea");
    ASSERT_EQ(r.quotas, (std::vector<int>{6, 5}));
    const double a = received(r, 36000, 0, 0), b = received(r, 36000, 1, 60);
    EXPECT_LE(std::abs(a - b), 2 * 900 + 1e-6) << a << " vs " << b;
    const SimResult paper = run(w, cluster, "astraea-paper");
    EXPECT_NEAR(received(paper, 36000, 0, 0), 196200, 1);
    EXPECT_NEAR(received(paper, 36000, 1, 60), 163800, 1);
}

// idle-tenant-returns-swing: A keeps 1 x 8 GPUs busy with hourly 1-GPU jobs; B returns after six
// idle days with eight 86,400-s jobs at 518,400 s. B first gets 7 GPUs (A keeps its 20 %
// guarantee), the indexes approach, and once they meet (within 12 h here) the split is 4/4 at
// every hourly sample through 662,400 s (40 h: past the 24-h window's echo), never 7/1 or 1/7.
// The published algorithm swings 7/1 <-> 1/7 for hours (the case's README).
TEST(FairerAstraea, ReturningTenantSettlesWithoutSwingOrEcho) {
    const Workload w = load("idle-tenant-returns-swing");
    const SimResult r = run(w, "1x8", "astraea", true);
    for (Seconds t = 518400 + 12 * 3600; t <= 662400; t += 3600) {
        const TenantSample* a = sample(r, t, 0);
        const TenantSample* b = sample(r, t, 1);
        ASSERT_TRUE(a && b) << t;
        EXPECT_EQ(a->used_gpus, 4) << t;
        EXPECT_EQ(b->used_gpus, 4) << t;
    }
    EXPECT_EQ(sample(r, 518400 + 3600, 1)->used_gpus, 7);
    const SimResult paper = run(w, "1x8", "astraea-paper", true);
    int swings = 0;
    for (Seconds t = 518400 + 12 * 3600; t <= 662400; t += 3600)
        swings += std::abs(sample(paper, t, 0)->used_gpus - sample(paper, t, 1)->used_gpus) >= 6;
    EXPECT_GT(swings, 10);
}

// longest_wait_s, on the tie case's timeline under astraea (tenants.json, fairness order): A1
// runs from 0 s with every lease renewed in place (waits 0) until 36,000 s, when B1 takes the 4
// GPUs (B1 waits 0). B1 ends at 39,620 s; A2 (F_j 0) runs four leases to 43,220 s (4 x 895 s of
// work, 20 s left); then A1 (lower F_j) restarts: 20 s restore + 200 s of work, ends 43,440 s, and
// A2 finishes at 43,480 s. Longest waits: A1 36,000 -> 43,220 = 7,220 s; A2 36,000 -> 39,620 =
// 3,620 s (its second wait, 43,220 -> 43,440, is shorter); B1 0 s. jobs.csv's last column and the
// summary's max and p99 say so.
TEST(FairerAstraea, LongestWaitIsTheLongestStretchPending) {
    const Workload w = load("tie-goes-to-tenant-order");
    const SimResult r = run(w, "1x4", "astraea");
    const int a1 = job_named(w, "A1"), a2 = job_named(w, "A2"), b1 = job_named(w, "B1");
    EXPECT_EQ(r.runs[a1].end_s, 43440);
    EXPECT_EQ(r.runs[a2].end_s, 43480);
    EXPECT_EQ(r.runs[a1].longest_wait_s, 7220);
    EXPECT_EQ(r.runs[a2].longest_wait_s, 3620);
    EXPECT_EQ(r.runs[b1].longest_wait_s, 0);
    const std::string csv = jobs_csv(w, r);
    EXPECT_NE(csv.find(",status,longest_wait_s\n"), std::string::npos);
    EXPECT_NE(csv.find("\n1,A,4,0,0,43440,43440,0,36000,"), std::string::npos);
    EXPECT_NE(csv.find(",done,7220\n"), std::string::npos);
    const Summary s = summarize(w, r, 4);
    const nlohmann::json j = summary_json(w, r, s);
    EXPECT_EQ(j["longest_wait_s"]["max"].get<double>(), 7220);
    // p99 of {0, 3620, 7220} (linear interpolation): 3620 + 0.98 * 3600.
    EXPECT_NEAR(j["longest_wait_s"]["p99"].get<double>(), 3620 + 0.98 * 3600, 1e-6);
}

// astraea-paper is today's default-mode astraea: the same options give the same schedule as
// astraea with every change switched off by hand.
TEST(FairerAstraea, PaperEqualsAstraeaWithEveryChangeOff) {
    const Workload w = load("gang-starved-by-small-stream");
    const SimResult paper = run(w, "2x8", "astraea-paper");
    const SimResult off = run(w, "2x8", "astraea", false, [](AstraeaOptions& o) {
        o.improve = {false, false, 0, false, 0, false, false, 0, false, false, false};
        o.job_order = JobOrder::Fairness;
    });
    ASSERT_EQ(paper.runs.size(), off.runs.size());
    for (std::size_t j = 0; j < paper.runs.size(); ++j) {
        EXPECT_EQ(paper.runs[j].first_start_s, off.runs[j].first_start_s) << j;
        EXPECT_EQ(paper.runs[j].end_s, off.runs[j].end_s) << j;
    }
}

// Gang-weighted fairness order: jobs rank by F_j * g_j^gamma. Job 0: 16 GPUs, F_j 0.5 -> key
// 0.5 * 16^0.5 = 2.0; job 1: 1 GPU, F_j 0.8 -> 0.8; job 2: new (F_j 0) -> 0 whatever its gang.
// gamma 0.5: 2, 1, 0 -> order 2, 1, 0; gamma 0 (as published): 0, 0.5, 0.8 -> 2, 0, 1.
// Victims are the reverse (highest key first): gamma 0.5 -> 0 then 1; gamma 0 -> 1 then 0.
TEST(FairerAstraea, GangWeightedOrderPutsTheSmallerGangFirst) {
    std::vector<Job> jobs(3);
    jobs[0].gpus = 16;
    jobs[1].gpus = 1;
    jobs[2].gpus = 8;
    for (int j = 0; j < 3; ++j) jobs[static_cast<std::size_t>(j)].submit_s = j;
    std::vector<RunState> runs(3);
    runs[0].fairness = 0.5;
    runs[1].fairness = 0.8;
    runs[2].fairness = 0;
    std::vector<double> rho(3, 1.0);
    Rng rng(1);
    const std::vector<int> pending{0, 1, 2};
    for (const auto& [gamma, first, second, third] :
         {std::tuple{0.5, 2, 1, 0}, std::tuple{0.0, 2, 0, 1}}) {
        LazyRanking ranked;
        rank_pending(JobOrder::Fairness, jobs, runs, pending, ranked, rho, rng, gamma);
        ASSERT_EQ(ranked.size(), 3u);
        EXPECT_EQ(ranked[0], first) << gamma;
        EXPECT_EQ(ranked[1], second) << gamma;
        EXPECT_EQ(ranked[2], third) << gamma;
        std::vector<int> delay{1, 0};
        order_victims(JobOrder::Fairness, jobs, runs, delay, rho, gamma);
        EXPECT_EQ(delay, (gamma > 0 ? std::vector<int>{0, 1} : std::vector<int>{1, 0})) << gamma;
    }
}

/// Runs `inner` with every job's run time shown as 0: each hook sees the blanked jobs (what a
/// scheduler that does not predict run times knows), the engine still runs the real ones.
class Blinded final : public Policy {
public:
    Blinded(std::unique_ptr<Policy> inner, const Workload& w) : inner_(std::move(inner)) {
        blind_ = w.jobs;
        for (Job& j : blind_) j.duration_s = 0;
    }
    std::string_view name() const override { return inner_->name(); }
    bool predicts_run_times() const override { return inner_->predicts_run_times(); }
    bool astraea_lists() const override { return inner_->astraea_lists(); }
    bool round_on_wake() const override { return inner_->round_on_wake(); }
    bool admits(const RoundInput& in, int j) const override {
        return blind(in, [&](const RoundInput& b) { return inner_->admits(b, j); });
    }
    Seconds lease_s(const RoundInput& in, int j, Seconds restore_s) const override {
        return blind(in, [&](const RoundInput& b) { return inner_->lease_s(b, j, restore_s); });
    }
    Seconds wake_after_s(const RoundInput& in, int j) const override {
        return blind(in, [&](const RoundInput& b) { return inner_->wake_after_s(b, j); });
    }
    void on_admit(const RoundInput& in, int j, PolicyLedger& l) const override {
        blind(in, [&](const RoundInput& b) { inner_->on_admit(b, j, l); return 0; });
    }
    void on_release(const RoundInput& in, int j, Seconds held, PolicyLedger& l) const override {
        blind(in, [&](const RoundInput& b) { inner_->on_release(b, j, held, l); return 0; });
    }
    void round(RoundInput& in, ClusterState& cluster, const Placer& placer, Rng& rng,
               std::vector<Action>& actions) override {
        blind(in, [&](const RoundInput&) { inner_->round(in, cluster, placer, rng, actions); return 0; });
    }

private:
    /// Calls f with in.jobs blanked, then puts the real jobs back (the engine's own input).
    template <class F>
    std::invoke_result_t<F, const RoundInput&> blind(const RoundInput& in, F f) const {
        RoundInput& io = const_cast<RoundInput&>(in);
        const std::span<const Job> real = io.jobs;
        io.jobs = blind_;
        auto r = f(io);
        io.jobs = real;
        return r;
    }
    std::unique_ptr<Policy> inner_;
    std::vector<Job> blind_;
};

// A policy that does not declare that it predicts run times (srtf, themis, astraea with the
// srtf/themis order or --backfill do) must not read them: the engine hands policies the real
// jobs. Every such built-in policy gives the same schedule when it is shown run times of 0.
TEST(FairerAstraea, PoliciesThatDoNotPredictRunTimesNeverReadThem) {
    const std::string dir = ASTRAEUS_DATA_DIR "/astraea-artifact/";
    auto tenants = read_tenant_config(dir + "share.csv", dir + "name.lst");
    auto trace = read_reference_jobs(dir + "fake_job.csv");
    ASSERT_TRUE(tenants && trace);
    const Workload w = *apply_tenants(std::move(*trace), *tenants, UnknownTenant::Drop, "fake_job");
    std::vector<AstraeaOptions> cases;
    for (const char* p : {"astraea", "astraea-paper", "fifo", "yarn-cs", "yarn-cs-elastic", "drf",
                          "tiresias", "gandiva-fair"})
        cases.push_back(*policy_options(p, AstraeaOptions{}));
    cases.push_back(cases[0]);
    cases.back().job_order = JobOrder::Las;
    for (AstraeaOptions o : cases) {
        o.lease_s = 900;
        SimConfig c;
        c.options = o;
        ASSERT_FALSE((*make_policy(o))->predicts_run_times()) << o.policy;
        auto quotas = tenant_quotas(w, c.cluster.total_gpus(), o.mode);
        auto seen = detail::run_event_engine(w, c, *quotas, *make_placer("consolidate"),
                                             std::move(*make_policy(o)), {});
        auto blinded = detail::run_event_engine(
            w, c, *quotas, *make_placer("consolidate"),
            std::make_unique<Blinded>(std::move(*make_policy(o)), w), {});
        ASSERT_TRUE(seen && blinded);
        EXPECT_EQ(jobs_csv(w, *seen), jobs_csv(w, *blinded)) << o.policy;
    }
    auto srtf = policy_options("srtf", AstraeaOptions{});
    EXPECT_TRUE((*make_policy(*srtf))->predicts_run_times());
    auto las = policy_options("astraea", AstraeaOptions{});
    las->job_order = JobOrder::Las;
    EXPECT_FALSE((*make_policy(*las))->predicts_run_times());
}

}  // namespace
}  // namespace astraeus
