// Unit tests of the service's parts (issue 6): the SQLite store (migrations, UPSERT-add of goodput
// rows, all-or-nothing batches, tokens), token crypto, the config, the simulated executor's
// timeline and the round adapter (quotas, pending reasons, lease ends), with values worked out by
// hand in the comments.
#include <gtest/gtest.h>

#include <filesystem>

#include "astraeus/service/token.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/service/round_adapter.hpp"
#include "astraeus/service/sim_executor.hpp"
#include "astraeus/store/store.hpp"
#include "store_site.hpp"

namespace fs = std::filesystem;
using namespace astraeus;

namespace {

store::RunRec a_run(store::Id id, store::Id ws, store::Id pool) {
    store::RunRec r;
    r.id = id;
    r.workspace_id = ws;
    r.pool_id = pool;
    r.name = "run-" + std::to_string(id);
    r.state = "pending";
    r.worker_list = {{0, 0, 0, 0, "", -1, 120, 135, "-1,0,7,0,30"}};
    return r;
}

class Store : public ::testing::TestWithParam<store_test::Backend> {};

}  // namespace

TEST_P(Store, MigratesOnceAndKeepsItsVersion) {
    ASTRAEUS_STORE_SITE(d);
    {
        auto s = d.open();
        ASSERT_TRUE(s) << s.error().message;
        EXPECT_EQ((*s)->schema_version(), 6);
    }
    auto again = d.open();
    ASSERT_TRUE(again);
    EXPECT_EQ((*again)->schema_version(), 6);
}

TEST_P(Store, GoodputRowsAddUpAndBatchesAreAllOrNothing) {
    ASTRAEUS_STORE_SITE(d);
    auto s = d.open();
    ASSERT_TRUE(s) << s.error().message;
    store::Store& st = **s;
    auto ids = st.init("acme", "c1");
    ASSERT_TRUE(ids);
    EXPECT_FALSE(st.init("acme", "c1")) << "init twice";
    auto pool = st.add_pool(ids->second, "default");
    ASSERT_TRUE(pool);
    auto ws = st.set_workspace(ids->first, ids->second, "ml", 2.0);
    ASSERT_TRUE(ws);

    store::Batch b;
    b.runs.push_back(a_run(1, *ws, *pool));
    b.goodput.push_back({1, -1, 3600, 7, false, 100});
    b.goodput.push_back({1, -1, 3600, 7, false, 50});   // same key: 100 + 50 = 150
    b.goodput.push_back({1, 5, 3600, 0, true, 480});
    b.meta.push_back({"counted_to_s", 3660});
    ASSERT_TRUE(st.apply(b));
    // A batch whose run names an unknown workspace fails (foreign key): its goodput row must
    // not be written either.
    store::Batch broken;
    broken.goodput.push_back({1, -1, 3600, 7, false, 1000});
    broken.runs.push_back(a_run(2, 999, *pool));
    EXPECT_FALSE(st.apply(broken));

    auto rows = st.goodput_rows();
    ASSERT_TRUE(rows);
    ASSERT_EQ(rows->size(), 2u);
    GpuSeconds waiting = 0, productive = 0;
    for (const auto& r : *rows) (r.held ? productive : waiting) += r.gpu_s;
    EXPECT_EQ(waiting, 150);
    EXPECT_EQ(productive, 480);
    auto runs = st.runs();
    ASSERT_TRUE(runs);
    ASSERT_EQ(runs->size(), 1u);
    ASSERT_EQ(runs->front().worker_list.size(), 1u);
    // Where the worker's count stands (schema 6), as written.
    EXPECT_EQ(runs->front().worker_list[0].counted_s, 120);
    EXPECT_EQ(runs->front().worker_list[0].decided_s, 135);
    EXPECT_EQ(runs->front().worker_list[0].pending, "-1,0,7,0,30");
    EXPECT_EQ(st.meta("counted_to_s").value(), std::optional<std::int64_t>(3660));
    // The workspace's weight on the cluster.
    auto wss = st.workspaces(ids->first, ids->second);
    ASSERT_TRUE(wss);
    ASSERT_EQ(wss->size(), 1u);
    EXPECT_DOUBLE_EQ(wss->front().weight, 2.0);
}

TEST_P(Store, TokensAreFoundByHashAndRevoked) {
    ASTRAEUS_STORE_SITE(d);
    auto s = d.open();
    ASSERT_TRUE(s) << s.error().message;
    auto ids = (*s)->init("acme", "c1");
    ASSERT_TRUE(ids);
    store::TokenRec t;
    t.name = "boss";
    t.scope = store::Scope::OrgAdmin;
    t.org_id = ids->first;
    t.hash = service::sha256_hex("astx_secret");
    auto id = (*s)->add_token(t);
    ASSERT_TRUE(id);
    auto found = (*s)->token_by_hash(service::sha256_hex("astx_secret"));
    ASSERT_TRUE(found && *found);
    EXPECT_EQ((*found)->scope, store::Scope::OrgAdmin);
    EXPECT_FALSE((*found)->revoked);
    ASSERT_TRUE((*s)->revoke_token(*id));
    EXPECT_TRUE((*(*s)->token_by_hash(t.hash))->revoked);
    EXPECT_FALSE((*s)->revoke_token(12345));
    EXPECT_FALSE(*(*s)->token_by_hash(service::sha256_hex("astx_other")));
}

TEST_P(Store, AnAgentTokenIsBoundToItsFirstMachineNameDurably) {
    ASTRAEUS_STORE_SITE(d);
    store::Id a = 0, b = 0;
    {
        auto s = d.open();
        ASSERT_TRUE(s) << s.error().message;
        auto ids = (*s)->init("acme", "c1");
        ASSERT_TRUE(ids);
        store::TokenRec t;
        t.scope = store::Scope::Agent;
        t.org_id = ids->first;
        t.cluster_id = ids->second;
        t.name = "agent-a";
        t.hash = service::sha256_hex("astx_a");
        a = *(*s)->add_token(t);
        t.name = "agent-b";
        t.hash = service::sha256_hex("astx_b");
        b = *(*s)->add_token(t);
        EXPECT_EQ(*(*s)->bind_agent_token(a, "gpu01"), "gpu01");  // the first registration binds
        EXPECT_EQ(*(*s)->bind_agent_token(a, "gpu01"), "gpu01");  // the same name again: fine
        EXPECT_EQ(*(*s)->bind_agent_token(a, "gpu02"), "gpu01");  // another name: still gpu01
        EXPECT_EQ(*(*s)->bind_agent_token(b, "gpu02"), "gpu02");
        EXPECT_FALSE((*s)->bind_agent_token(999, "gpu03")) << "no such token (foreign key)";
    }
    auto again = d.open();  // kept across a restart
    ASSERT_TRUE(again);
    EXPECT_EQ(*(*again)->bind_agent_token(a, "gpu02"), "gpu01");
    EXPECT_EQ(*(*again)->bind_agent_token(b, "gpu01"), "gpu02");
}

// Every field of a batch read back as written (the same values on both stores): a run with two
// workers and an attempt, updated in a second batch; machines registered, drained, marked down
// and heartbeating; alerts replaced; Idempotency-Keys added and pruned; goodput rows pruned.
TEST_P(Store, EveryFieldOfABatchReadsBackAsWritten) {
    ASTRAEUS_STORE_SITE(d);
    auto s = d.open();
    ASSERT_TRUE(s) << s.error().message;
    store::Store& st = **s;
    auto ids = st.init("acme", "c1");
    ASSERT_TRUE(ids) << ids.error().message;
    auto pool = st.add_pool(ids->second, "a100");
    ASSERT_TRUE(pool);
    EXPECT_EQ(*st.add_pool(ids->second, "a100"), *pool) << "an existing pool's id";
    auto ws = st.set_workspace(ids->first, ids->second, "ml", 0.25);
    ASSERT_TRUE(ws);
    auto m1 = st.add_machine(*pool, "a100-1", 8);
    auto m2 = st.register_machine(*pool, "gpu07", 4, "10.0.0.7");
    ASSERT_TRUE(m1 && m2);
    EXPECT_EQ(*st.register_machine(*pool, "gpu07", 4, "10.0.0.8"), *m2) << "re-registration keeps the id";
    auto wrong = st.register_machine(*pool, "gpu07", 8, "10.0.0.8");
    ASSERT_FALSE(wrong);
    EXPECT_NE(wrong.error().message.find("registered with 4 GPUs, not 8"), std::string::npos) << wrong.error().message;

    store::RunRec r = a_run(7, *ws, *pool);
    r.workers = 2;
    r.gpus_per_worker = 4;
    r.command = "python train.py --lr 'a b'";
    r.image = "nvcr.io/x:1";
    r.state = "running";
    r.submitted_s = 1'700'000'000;
    r.started_s = 1'700'000'060;
    r.lease_start_s = 1'700'000'060;
    r.lease_end_s = 1'700'001'860;
    r.attempts = 1;
    r.worker_list = {{0, 3, 0, 1, "a100-1:4", 0.875, 1'700'000'040, 1'700'000'055, "-1,1699999200,7,0,60"},
                     {1, 3, 0, 1, "gpu07:4", 0.1, -1, -1, ""}};
    r.attempt_list = {{1, 1'700'000'060, -1, ""}};
    store::Batch b;
    b.runs.push_back(r);
    b.machine_up.push_back({*m1, false});
    b.machine_drained.push_back({*m2, true});
    b.machine_heartbeat.push_back({*m2, 1'700'000'100});
    b.alerts = std::vector<store::AlertRec>{{"goodput_drop", "pool", "a100", "firing", 1'700'000'000, 0.375}};
    b.idempotency.push_back({1, "k-old", "aa", 7, 201, "{\"id\":7}", 100});
    b.idempotency.push_back({1, "k-new", "bb", 7, 201, "{}", 200});
    b.goodput.push_back({7, *m1, 3600, 0, true, 14400});
    b.goodput.push_back({7, *m1, 7200, 0, true, 3600});
    ASSERT_TRUE(st.apply(b));
    // The run ends: its state, end and the attempt's outcome change; the first worker's level too.
    r.state = "succeeded";
    r.ended_s = 1'700'000'960;
    r.worker_list[0].level = -1;
    r.attempt_list[0] = {1, 1'700'000'060, 1'700'000'960, "succeeded"};
    store::Batch b2;
    b2.runs.push_back(r);
    b2.alerts = std::vector<store::AlertRec>{};
    b2.prune_idempotency_before = 150;
    b2.prune_before_hour = 7200;
    ASSERT_TRUE(st.apply(b2));

    auto runs = st.runs();
    ASSERT_TRUE(runs);
    ASSERT_EQ(runs->size(), 1u);
    const store::RunRec& got = runs->front();
    EXPECT_EQ(got.id, 7);
    EXPECT_EQ(got.command, "python train.py --lr 'a b'");
    EXPECT_EQ(got.image, "nvcr.io/x:1");
    EXPECT_EQ(got.state, "succeeded");
    EXPECT_EQ(got.submitted_s, 1'700'000'000);
    EXPECT_EQ(got.ended_s, 1'700'000'960);
    EXPECT_EQ(got.lease_end_s, 1'700'001'860);
    EXPECT_EQ(got.gpus_per_worker, 4);
    ASSERT_EQ(got.worker_list.size(), 2u);
    EXPECT_EQ(got.worker_list[0].parts, "a100-1:4");
    EXPECT_EQ(got.worker_list[0].level, -1.0);
    EXPECT_EQ(got.worker_list[1].level, 0.1) << "a double read back exactly";
    EXPECT_EQ(got.worker_list[1].phase, 3);
    EXPECT_EQ(got.worker_list[0].counted_s, 1'700'000'040);
    EXPECT_EQ(got.worker_list[0].decided_s, 1'700'000'055);
    EXPECT_EQ(got.worker_list[0].pending, "-1,1699999200,7,0,60");
    EXPECT_EQ(got.worker_list[1].counted_s, -1);
    ASSERT_EQ(got.attempt_list.size(), 1u);
    EXPECT_EQ(got.attempt_list[0].outcome, "succeeded");
    EXPECT_EQ(got.attempt_list[0].ended_s, 1'700'000'960);

    auto ms = st.machines(ids->second);
    ASSERT_TRUE(ms);
    ASSERT_EQ(ms->size(), 2u);
    EXPECT_FALSE((*ms)[0].up);
    EXPECT_FALSE((*ms)[0].from_agent);
    EXPECT_TRUE((*ms)[1].from_agent);
    EXPECT_TRUE((*ms)[1].drained);
    EXPECT_EQ((*ms)[1].addr, "10.0.0.8");
    EXPECT_EQ((*ms)[1].last_heartbeat_s, 1'700'000'100);
    EXPECT_EQ((*ms)[1].gpus, 4);
    EXPECT_TRUE(st.alerts()->empty()) << "the second batch's empty alert list replaced the first";
    auto keys = st.idempotency_keys();
    ASSERT_TRUE(keys);
    ASSERT_EQ(keys->size(), 1u) << "k-old (created at 100 < 150) pruned";
    EXPECT_EQ(keys->front().key, "k-new");
    EXPECT_EQ(keys->front().reply, "") << "the list leaves the replies out";
    auto one = st.idempotency_key(1, "k-new");
    ASSERT_TRUE(one && *one);
    EXPECT_EQ((*one)->reply, "{}");
    EXPECT_EQ((*one)->body_sha256, "bb");
    auto rows = st.goodput_rows();
    ASSERT_TRUE(rows);
    ASSERT_EQ(rows->size(), 1u) << "the hour 3600 row pruned (before 7200)";
    EXPECT_EQ(rows->front().hour, 7200);
    EXPECT_EQ(rows->front().gpu_s, 3600);
    EXPECT_DOUBLE_EQ(st.workspaces(ids->first, ids->second)->front().weight, 0.25);
}

INSTANTIATE_TEST_SUITE_P(, Store, ::testing::Values(store_test::Backend::Sqlite, store_test::Backend::Postgres),
                         [](const auto& p) { return store_test::backend_name(p.param); });

TEST(Token, ShapeAndHash) {
    auto t = service::new_token();
    ASSERT_TRUE(t);
    // astx_ + 43 base64url characters (no std::regex: GCC 12 warns falsely on it under ASan).
    ASSERT_EQ(t->size(), 48u) << *t;
    EXPECT_EQ(t->substr(0, 5), "astx_");
    EXPECT_EQ(t->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", 5),
              std::string::npos)
        << *t;
    EXPECT_NE(*t, *service::new_token());
    // FIPS 180-2 test vector: SHA-256("abc").
    EXPECT_EQ(service::sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Config, DefaultsAndErrors) {
    auto c = service::parse_config("{}", "c.json");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->policy, "astraea");
    ASSERT_EQ(c->pools.size(), 1u);
    EXPECT_EQ(c->pools[0].machines[0].count * c->pools[0].machines[0].gpus, 32);
    auto bad = service::parse_config(R"({"pols": []})", "c.json");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("unknown key 'pols'"), std::string::npos);
    EXPECT_FALSE(service::parse_config(R"({"time_scale": 0})", "c.json"));
    EXPECT_FALSE(service::parse_config(R"({"pools": [{"name": "a", "machines": [{"count": 0, "gpus": 8}]}]})", "c.json"));
    EXPECT_FALSE(service::parse_config("{", "c.json"));
}

TEST(Config, SlurmAccounts) {
    auto c = service::parse_config(R"({"slurm": {"accounts": {"ml": "acct-ml", "cv": ""}}})", "c.json");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->slurm_accounts.size(), 2u);
    EXPECT_EQ(c->slurm_accounts.at("ml"), "acct-ml");
    EXPECT_EQ(c->slurm_accounts.at("cv"), "");  // the user's default account
    EXPECT_TRUE(service::parse_config("{}", "c.json")->slurm_accounts.empty());
    auto bad = service::parse_config(R"({"slurm": {"accounts": {"ml": 3}}})", "c.json");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("slurm: accounts: 'ml' must map to an account name"), std::string::npos);
    bad = service::parse_config(R"({"slurm": {"account": "x"}})", "c.json");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("unknown key 'account'"), std::string::npos);
    EXPECT_FALSE(service::parse_config(R"({"slurm": []})", "c.json"));
}

TEST(Config, SlurmPartitions) {
    auto c = service::parse_config(R"({"slurm": {"partitions": ["astraeus", "gpu-b"]}})", "c.json");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->slurm_partitions, (std::vector<std::string>{"astraeus", "gpu-b"}));
    EXPECT_TRUE(service::parse_config("{}", "c.json")->slurm_partitions.empty());
    auto bad = service::parse_config(R"({"slurm": {"partitions": "astraeus"}})", "c.json");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("slurm: partitions must be a list of Slurm partition names"), std::string::npos);
    bad = service::parse_config(R"({"slurm": {"partitions": ["astraeus", ""]}})", "c.json");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("each must be a partition name"), std::string::npos);
    EXPECT_FALSE(service::parse_config(R"({"slurm": {"partitions": [3]}})", "c.json"));
}

namespace {
service::ExecRun sim_run(std::int64_t run, int workers, Seconds duration_s, Seconds limit_s) {
    service::ExecRun r;
    r.run = run;
    r.workers = workers;
    r.duration_s = duration_s;
    r.time_limit_s = limit_s;
    r.attempt = 1;
    return r;
}
}  // namespace

TEST(SimExecutor, StartFinishTimeLimitAndStop) {
    service::SimExecutor e({60, 30, 60, 90, 0, 1});
    // Run 1: starts at 0; running from 60; 600 s of work -> finished at 660.
    e.launch(0, sim_run(1, 2, 600, 0));
    // Run 2: starts at 0; time limit 300 s of work -> TimeLimit at 360; the stop winds down
    // for 30 s -> StopDone at 390.
    e.launch(0, sim_run(2, 1, 900, 300));
    service::ExecEvent ev;
    std::vector<std::tuple<int, Seconds, std::int64_t>> seen;
    while (e.pop_due(10000, ev)) {
        seen.push_back({static_cast<int>(ev.kind), ev.t, ev.run});
        if (ev.kind == service::ExecEvent::Kind::TimeLimit) e.stop(ev.t, ev.run);
    }
    using K = service::ExecEvent::Kind;
    const std::vector<std::tuple<int, Seconds, std::int64_t>> want{
        {static_cast<int>(K::Started), 60, 1}, {static_cast<int>(K::Started), 60, 2},
        {static_cast<int>(K::TimeLimit), 360, 2}, {static_cast<int>(K::StopDone), 390, 2},
        {static_cast<int>(K::Finished), 660, 1}};
    EXPECT_EQ(seen, want);
    EXPECT_EQ(e.next_event_s(), service::kNever);
}

// A workspace alone in its pool, every GPU held by its own runs: its next run waits for GPUs, not
// for quota (its share is the whole pool; no other workspace holds or asks for any). Values by
// hand: 2 GPUs on one machine, two 1-GPU runs started at 0 with 1800-s leases (ending at 1800);
// the third, submitted at 10, waits; the round at 10 leaves 1800 - 10 = 1790 s to the next end.
TEST(RoundAdapter, AloneInAFullPoolWaitsForGpusNotQuota) {
    AstraeaOptions base;
    base.lease_s = 1800;
    auto opt = policy_options("astraea", base);
    ASSERT_TRUE(opt);
    auto ad = service::RoundAdapter::make(ClusterSpec::uniform(1, 2), *opt, "consolidate");
    ASSERT_TRUE(ad) << ad.error().message;
    service::RoundAdapter& a = **ad;
    a.set_tenants({{"ml", 1.0}});
    const int ml = a.tenant_index("ml");
    const int r1 = *a.submit(ml, 1, 0, 0);
    const int r2 = *a.submit(ml, 1, 0, 0);
    auto d = a.round(0);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].lease_end_s, 1800);
    EXPECT_EQ(d[1].lease_end_s, 1800);
    const int r3 = *a.submit(ml, 1, 10, 0);
    EXPECT_TRUE(a.round(10).empty());
    ASSERT_TRUE(a.is_running(r1) && a.is_running(r2) && a.is_pending(r3));
    auto lease_end = [&](int k) { return k == r1 || k == r2 ? Seconds{1800} : Seconds{-1}; };
    EXPECT_EQ(a.pending_reason(r3, 1, 1, {}, {}, {}, "default", lease_end),
              "waiting for GPUs: all 2 GPUs of pool default are in use (2 by this workspace); "
              "next lease end in 1790 s");
    // Without the pool's name or the leases: the same cause, fewer details.
    EXPECT_EQ(a.pending_reason(r3, 1, 1), "waiting for GPUs: all 2 GPUs of the pool are in use (2 by this workspace)");
    // Another workspace asks for GPUs: now its share is what keeps ml's third run waiting.
    a.set_tenants({{"ml", 1.0}, {"vision", 1.0}});
    const int v1 = *a.submit(a.tenant_index("vision"), 1, 20, 0);
    EXPECT_TRUE(a.round(20).empty());
    ASSERT_TRUE(a.is_pending(v1));
    EXPECT_EQ(a.pending_reason(r3, 1, 1, {}, {}, {}, "default", lease_end), "waiting for quota");
}

// One GPU is "the 1 GPU ... is", one in use "1 of 2 GPUs ... is" (they read "all 1 GPUs ... are").
TEST(RoundAdapter, WaitingForGpusCountsInTheRightNumber) {
    AstraeaOptions base;
    auto opt = policy_options("astraea", base);
    ASSERT_TRUE(opt);
    auto one = service::RoundAdapter::make(ClusterSpec::uniform(1, 1), *opt, "consolidate");
    ASSERT_TRUE(one) << one.error().message;
    (*one)->set_tenants({{"ml", 1.0}});
    const int ml = (*one)->tenant_index("ml");
    ASSERT_TRUE((*one)->submit(ml, 1, 0, 0));
    ASSERT_EQ((*one)->round(0).size(), 1u);
    const int waits = *(*one)->submit(ml, 1, 10, 0);
    EXPECT_TRUE((*one)->round(10).empty());
    EXPECT_EQ((*one)->pending_reason(waits, 1, 1, {}, {}, {}, "p"),
              "waiting for GPUs: the 1 GPU of pool p is in use (1 by this workspace)");
    auto two = service::RoundAdapter::make(ClusterSpec::uniform(1, 2), *opt, "consolidate");
    ASSERT_TRUE(two) << two.error().message;
    (*two)->set_tenants({{"ml", 1.0}});
    ASSERT_TRUE((*two)->submit(ml, 1, 0, 0));
    ASSERT_EQ((*two)->round(0).size(), 1u);
    const int gang = *(*two)->submit(ml, 2, 10, 0);
    EXPECT_TRUE((*two)->round(10).empty());
    EXPECT_EQ((*two)->pending_reason(gang, 1, 2),
              "waiting for GPUs: 1 of 2 GPUs of the pool is in use (1 by this workspace), 1 free");
}

TEST(RoundAdapter, QuotasReasonsAndLeaseEnds) {
    AstraeaOptions base;
    base.lease_s = 1800;
    auto opt = policy_options("astraea", base);
    ASSERT_TRUE(opt);
    auto ad = service::RoundAdapter::make(ClusterSpec::uniform(2, 8), *opt, "consolidate");
    ASSERT_TRUE(ad) << ad.error().message;
    service::RoundAdapter& a = **ad;
    // Two workspaces of weight 1 on 16 GPUs: quotas 8 and 8.
    a.set_tenants({{"ml", 1.0}, {"vision", 1.0}});
    const int ml = a.tenant_index("ml"), vi = a.tenant_index("vision");
    EXPECT_FALSE(a.submit(ml, 17, 0, 100)) << "larger than the pool";
    const int a1 = *a.submit(ml, 8, 0, 0);
    const int a2 = *a.submit(ml, 8, 0, 0);
    // vision is idle: ml borrows its share; both gangs start, each with a 1800-s lease.
    auto d = a.round(0);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].lease_end_s, 1800);
    EXPECT_TRUE(a.is_running(a1) && a.is_running(a2));
    EXPECT_EQ(a.free_gpus(), 0);
    const int b1 = *a.submit(vi, 8, 10, 0);
    const int a3 = *a.submit(ml, 8, 10, 0);
    d = a.round(10);
    EXPECT_TRUE(d.empty());
    // vision holds 0 of its 8: within quota, no free GPUs; ml holds 16 > its quota of 8.
    EXPECT_EQ(a.pending_reason(b1, 1, 8), "no placement for 1 x 8 GPUs");
    EXPECT_EQ(a.pending_reason(a3, 2, 4), "waiting for quota");
    // Both ml leases end at 1800: vision (used nothing) is served first, then ml gets the
    // other 8 GPUs: two starts, one of them vision's, one of ml's.
    a.lease_end(a1, 1800);
    a.lease_end(a2, 1800);
    d = a.round(1800);
    ASSERT_EQ(d.size(), 2u);
    int vision_starts = 0, ml_starts = 0;
    for (const auto& x : d) {
        ASSERT_EQ(x.kind, service::Decision::Kind::Start);
        (x.job == b1 ? vision_starts : ml_starts) += 1;
    }
    EXPECT_EQ(vision_starts, 1);
    EXPECT_EQ(ml_starts, 1);
    EXPECT_TRUE(a.is_running(b1));
    // Removing a running job frees its GPUs.
    a.remove(b1, 1900);
    EXPECT_EQ(a.free_gpus(), 8);
}

// The starving and pending bookkeeping (service/pending_index.hpp) across starts, waits again and
// stops. One machine of 4 GPUs, gangs of 4 (one runs at a time), leases longer than the test
// (every start is a decision of a round on an empty machine), T_starve = 4 h = 14,400 s.
// Without a starving run, never-ran runs go first (F = 0, by submit), then the lowest F =
// 4 x executed / deserved; a starving run (waited T_starve since it last began to wait) goes
// before all of them.
TEST(RoundAdapter, StarvingRunsAcrossStartsWaitsAndStops) {
    AstraeaOptions base;
    base.lease_s = 1'000'000;
    auto opt = policy_options("astraea", base);
    ASSERT_TRUE(opt);
    ASSERT_EQ(opt->starvation_s, 14400);
    auto ad = service::RoundAdapter::make(ClusterSpec::uniform(1, 4), *opt, "consolidate");
    ASSERT_TRUE(ad);
    service::RoundAdapter& a = **ad;
    a.set_tenants({{"ml", 1.0}});
    auto started = [&](Seconds t) {
        std::vector<int> jobs;
        for (const auto& d : a.round(t)) {
            EXPECT_EQ(d.kind, service::Decision::Kind::Start) << "at " << t;
            jobs.push_back(d.job);
        }
        return jobs;
    };
    using V = std::vector<int>;
    const int A = *a.submit(0, 4, 0, 0);
    EXPECT_EQ(started(0), V{A});
    const int B = *a.submit(0, 4, 500, 0);
    const int C = *a.submit(0, 4, 600, 0);
    EXPECT_EQ(started(600), V{});
    a.requeue(A, 1000);  // ran 1,000 s, waits from 1,000
    EXPECT_EQ(started(1000), V{B}) << "never-ran B and C first, by submit";
    EXPECT_EQ(a.next_wake_s(), 600 + 14400) << "C starves first";
    a.requeue(B, 15000);
    EXPECT_EQ(started(15000), V{C}) << "C waited 14,400 s: starving";
    const int D = *a.submit(0, 4, 15100, 0);
    a.requeue(C, 15500);
    EXPECT_EQ(started(15500), V{A}) << "A waited 14,500 s since 1,000: before never-ran D";
    a.requeue(A, 15700);  // waits again from 15,700: no longer starving
    EXPECT_EQ(started(15700), V{D});
    EXPECT_EQ(a.next_wake_s(), 15000 + 14400) << "B starves next (A's wait began again)";
    // B (starving since 29,400) is stopped while pending: wound down, then removed.
    a.wind_down(B, 29500);
    a.remove(B, 29500);
    a.requeue(D, 29500);  // ran 13,800 s
    // None starving (C waited 14,000 s, A 13,800 s): the lowest F, C (500 s run, A 1,200 s).
    EXPECT_EQ(started(29500), V{C});
    a.requeue(C, 29700);  // ran 700 s in all, waits from 29,700
    // A starving since 30,100 goes before C (whose F is lower: 2,800 vs 4,800 GPU-s executed).
    EXPECT_EQ(started(30200), V{A});
    // At 44,200 D (waiting since 29,500) and C (since 29,700) both starve; D, the longer
    // waiting, is stopped while pending: C goes next, before A (just waiting again) and the
    // never-ran E.
    a.remove(D, 44200);
    a.requeue(A, 44200);
    const int E = *a.submit(0, 4, 44200, 0);
    EXPECT_EQ(started(44200), V{C});
    EXPECT_TRUE(a.is_pending(A) && a.is_pending(E));
    EXPECT_EQ(a.next_wake_s(), 44200 + 14400);
}

namespace {
/// A fifo round adapter on 2 machines x 8 GPUs (consolidate placer), one tenant "ml".
Result<std::unique_ptr<service::RoundAdapter>> fifo_adapter_2x8() {
    auto opt = policy_options("fifo", AstraeaOptions{});
    if (!opt) return std::unexpected(opt.error());
    auto ad = service::RoundAdapter::make(ClusterSpec::uniform(2, 8), *opt, "consolidate");
    if (ad) (*ad)->set_tenants({{"ml", 1.0}});
    return ad;
}
}  // namespace

TEST(RoundAdapter, LostMachinesWithholdTheirGpus) {
    auto ad = fifo_adapter_2x8();
    ASSERT_TRUE(ad);
    service::RoundAdapter& a = **ad;
    const int j = *a.submit(0, 6, 0, 0);
    auto d = a.round(0);
    ASSERT_EQ(d.size(), 1u);
    const int m = d[0].placement.parts.at(0).machine;
    EXPECT_EQ(a.free_gpus(), 10);  // 16 - 6
    a.set_machine_up(m, false);    // its 2 free GPUs are withheld: 10 - 2 = 8 free
    EXPECT_EQ(a.free_gpus(), 8);
    a.remove(j, 100);              // the 6 it gave back stay withheld too
    EXPECT_EQ(a.free_gpus(), 8);
    const int k = *a.submit(0, 16, 100, 0);
    EXPECT_TRUE(a.round(100).empty()) << "16 GPUs cannot place with a machine lost";
    a.set_machine_up(m, true);     // all 16 back: the gang places
    EXPECT_EQ(a.free_gpus(), 16);
    d = a.round(200);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].job, k);
}

TEST(RoundAdapter, ForeignGpusLeaveTheRounds) {
    auto ad = fifo_adapter_2x8();
    ASSERT_TRUE(ad);
    service::RoundAdapter& a = **ad;
    a.set_foreign(0, 4);  // a job outside holds 4 of machine 0's 8: 16 - 4 = 12 free
    EXPECT_EQ(a.free_gpus(), 12);
    EXPECT_EQ(a.foreign_gpus(0), 4);
    const int j = *a.submit(0, 8, 0, 0);
    auto d = a.round(0);
    ASSERT_EQ(d.size(), 1u);
    ASSERT_EQ(d[0].placement.parts.size(), 1u);
    EXPECT_EQ(d[0].placement.parts[0].machine, 1) << "8 GPUs fit only machine 1 now";
    const int k = *a.submit(0, 8, 10, 0);
    EXPECT_TRUE(a.round(10).empty()) << "machine 0 has 4 free, machine 1 none";
    EXPECT_EQ(a.pending_reason(k, 1, 8), "4 GPUs of machine 0 are held by jobs outside Astraeus");
    EXPECT_EQ(a.pending_reason(k, 1, 8, {}, [](int m) { return "node gpu" + std::to_string(m + 1); }), "node gpu1");
    a.set_foreign(0, 0);  // the job outside ended: k places on machine 0
    EXPECT_EQ(a.free_gpus(), 8);
    d = a.round(20);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].job, k);
    EXPECT_EQ(d[0].placement.parts.at(0).machine, 0);
    // A job outside on a full machine: withheld as j gives its GPUs back, 3 of its 8.
    a.set_foreign(1, 3);
    EXPECT_EQ(a.foreign_gpus(1), 0);
    a.remove(j, 30);
    EXPECT_EQ(a.foreign_gpus(1), 3);
    EXPECT_EQ(a.free_gpus(), 5);
    // Lost with 3 outside: the 5 free are withheld; back after the job outside ended: all 8.
    a.set_machine_up(1, false);
    EXPECT_EQ(a.free_gpus(), 0);
    a.set_foreign(1, 0);
    EXPECT_EQ(a.free_gpus(), 0);
    a.set_machine_up(1, true);
    EXPECT_EQ(a.free_gpus(), 8);
    EXPECT_EQ(a.foreign_gpus(1), 0);
    a.set_foreign(1, 99);  // clamped to the machine's 8
    EXPECT_EQ(a.foreign_gpus(1), 8);
    EXPECT_EQ(a.free_gpus(), 0);
}

TEST(SimExecutor, MachinesAreLostAndComeBack) {
    service::SimExecutorConfig c;
    c.machine_failures_per_day = 24;  // about one an hour
    c.machine_repair_s = 600;
    service::SimExecutor e(c);
    e.set_machines({7}, 0);
    service::ExecEvent lost, back;
    ASSERT_TRUE(e.pop_due(10 * 86400, lost));
    ASSERT_TRUE(e.pop_due(10 * 86400, back));
    EXPECT_EQ(lost.kind, service::ExecEvent::Kind::MachineLost);
    EXPECT_EQ(back.kind, service::ExecEvent::Kind::MachineBack);
    EXPECT_EQ(lost.machine, 7);
    EXPECT_EQ(back.t - lost.t, 600);
    EXPECT_GT(lost.t, 0);
}
