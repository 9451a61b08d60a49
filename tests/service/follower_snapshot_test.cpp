// A follower's read-only snapshot (issue 23, service/follower_snapshots.hpp) on a fresh database of
// ASTRAEUS_TEST_PG (skipped when unset): the leader's state read back with the same JSON, writes
// refused at three levels (the snapshot's API 503, the read-only store view, PostgreSQL's
// read-only session), and the database unchanged by the snapshot's load and reads.
#include <gtest/gtest.h>

#include "astraeus/service/config.hpp"
#include "astraeus/service/follower_snapshots.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/sim_executor.hpp"
#include "astraeus/service/token.hpp"
#include "astraeus/store/pg_store.hpp"
#include "astraeus/store/read_only_store.hpp"
#include "store_site.hpp"

using namespace astraeus;
using nlohmann::json;

namespace {

/// A fingerprint of every table the service writes (the lease's aside): their rows as text.
std::string data_of(store::Store& s) {
    json j;
    const auto runs = s.runs();
    const auto rows = s.goodput_rows();
    const auto tokens = s.tokens();
    const auto machines = s.machines(1);
    if (!runs || !rows || !tokens || !machines) return "a read failed";
    for (const auto& r : *runs) j["runs"].push_back({r.id, r.name, r.state, r.phase_since_s, r.attempts, r.worker_list.size()});
    for (const auto& g : *rows) j["goodput"].push_back({g.run_id, g.hour, g.category, g.gpu_s});
    for (const auto& t : *tokens) j["tokens"].push_back({t.id, t.revoked});
    for (const auto& m : *machines) j["machines"].push_back({m.id, m.up, m.drained, m.last_heartbeat_s});
    for (const char* k : {"last_event_s", "counted_to_s", "local_machine_id"}) j["meta"][k] = s.meta(k)->value_or(-1);
    return j.dump();
}

}  // namespace

TEST(FollowerSnapshot, ServesTheLeadersStateAndNeverWrites) {
    if (store_test::test_pg().empty()) GTEST_SKIP() << "ASTRAEUS_TEST_PG is not set (scripts/postgres-test-server.sh start prints it)";
    store_test::StoreSite site(store_test::Backend::Postgres);
    ASSERT_EQ(site.error, "") << "cannot create the test database";
    auto cfg = service::parse_config(R"({"organization": "acme", "cluster": "c1",
        "pools": [{"name": "default", "machines": [{"count": 2, "gpus": 4}]}]})", "c.json");
    ASSERT_TRUE(cfg) << cfg.error().message;

    // The leader: a workspace, its token, two runs (one placed, one waiting: 8 GPUs are in use).
    auto rw = store::open_postgresql(site.conninfo);
    ASSERT_TRUE(rw) << rw.error().message;
    store::Store& db = **rw;
    auto leader = service::Service::open(*cfg, std::move(*rw), std::make_unique<service::SimExecutor>(service::SimExecutorConfig{}));
    ASSERT_TRUE(leader) << leader.error().message;
    auto check = store::open_postgresql(site.conninfo);  // a second connection to look at the data
    ASSERT_TRUE(check);
    auto orgs = (*check)->orgs();
    ASSERT_TRUE(orgs && orgs->size() == 1);
    auto ws = (*check)->set_workspace(orgs->front().id, 1, "ml", 1.0);
    ASSERT_TRUE(ws);
    store::TokenRec t;
    t.name = "ml";
    t.scope = store::Scope::Workspace;
    t.org_id = orgs->front().id;
    t.workspace_id = *ws;
    t.hash = service::sha256_hex("astx_ml");
    ASSERT_TRUE((*check)->add_token(t));
    auto caller = (*leader)->authenticate("Bearer astx_ml");
    ASSERT_TRUE(caller) << caller.error().message;
    ASSERT_TRUE((*leader)->submit(*caller, R"({"name": "big", "workers": 2, "gpus_per_worker": 4})"));
    ASSERT_TRUE((*leader)->submit(*caller, R"({"name": "waits", "workers": 1, "gpus_per_worker": 4})"));
    (void)db;
    const std::string before = data_of(**check);

    // PostgreSQL's read-only session refuses a write whatever the program asks.
    auto ro = store::open_postgresql_read_only(site.conninfo);
    ASSERT_TRUE(ro) << ro.error().message;
    store::Batch b;
    b.meta.push_back({"follower_wrote", 1});
    auto refused = (*ro)->apply(b);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("read-only transaction"), std::string::npos) << refused.error().message;

    // The snapshot over the read-only view.
    auto shared = std::make_shared<store::SharedStore>();
    shared->store = std::move(*ro);
    auto view = store::read_only_view(shared);
    auto v_refused = view->apply(b);
    ASSERT_FALSE(v_refused);
    EXPECT_EQ(v_refused.error().message.rfind("read-only:", 0), 0u) << v_refused.error().message;
    auto snap = service::Service::open_snapshot(*cfg, std::move(view), false);
    ASSERT_TRUE(snap) << snap.error().message;
    auto fcaller = (*snap)->authenticate("Bearer astx_ml");
    ASSERT_TRUE(fcaller) << fcaller.error().message;
    EXPECT_EQ((*snap)->authenticate("Bearer astx_other").error().status, 401);
    for (const char* name : {"big", "waits"}) {
        auto a = (*leader)->show_run(*caller, name, {});
        auto f = (*snap)->show_run(*fcaller, name, {});
        ASSERT_TRUE(a && f) << name;
        a->erase("history");
        f->erase("history");
        EXPECT_EQ(a->dump(), f->dump()) << name;
    }
    EXPECT_EQ((*snap)->show_run(*fcaller, "big", {})->at("state"), "starting");
    EXPECT_EQ((*snap)->show_run(*fcaller, "waits", {})->at("state"), "pending");
    auto list = (*snap)->list_runs(*fcaller, {});
    ASSERT_TRUE(list);
    EXPECT_EQ(list->at("matches"), 2);
    EXPECT_EQ(list->dump(), (*leader)->list_runs(*caller, {})->dump());
    EXPECT_TRUE((*snap)->fairness(*fcaller));
    EXPECT_TRUE((*snap)->goodput(*fcaller, {}));
    // Writes through the snapshot's API: 503, nothing placed nor stored.
    auto sub = (*snap)->submit(*fcaller, R"({"name": "ghost", "workers": 1, "gpus_per_worker": 1})");
    ASSERT_FALSE(sub);
    EXPECT_EQ(sub.error().status, 503);
    auto stop = (*snap)->stop_run(*fcaller, "big", {});
    ASSERT_FALSE(stop);
    EXPECT_EQ(stop.error().status, 503);
    (*snap)->tick();  // no rounds, no count, no write
    EXPECT_EQ((*snap)->show_run(*fcaller, "waits", {})->at("state"), "pending");

    EXPECT_EQ(data_of(**check), before);
    EXPECT_FALSE((*check)->meta("follower_wrote")->has_value());

    // FollowerSnapshots: a first load at start, the age of the data, the same answers.
    service::ServiceConfig fc = *cfg;
    fc.follower_refresh_s = 0.1;
    const std::string conninfo = site.conninfo;
    service::FollowerSnapshots snaps(fc, [conninfo] { return store::open_postgresql_read_only(conninfo); }, false);
    snaps.start();
    ASSERT_TRUE(snaps.current()) << snaps.last_error();
    EXPECT_GE(snaps.age_ms(), 0);
    EXPECT_EQ(snaps.current()->list_runs(*fcaller, {})->dump(), list->dump());
    snaps.stop();
    EXPECT_EQ(data_of(**check), before);
}
