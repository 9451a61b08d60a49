// A follower replica's API server (api/http_server.hpp FollowerSource; issue 23) over a read-only
// snapshot of a SQLite store (no PostgreSQL needed: the snapshot and the server do not care which
// store is read): the reads answered as the leader's Service answers them, with the follower's
// headers; writes, agent endpoints, logs and /readyz refused with 503 naming the leader; every
// request refused before a snapshot exists.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "astraeus/api/http_server.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/sim_executor.hpp"
#include "astraeus/service/token.hpp"
#include "astraeus/store/read_only_store.hpp"

using namespace astraeus;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

store::Id add_token(store::Store& s, store::Id org, store::Id ws, const std::string& secret) {
    store::TokenRec t;
    t.name = secret;
    t.scope = store::Scope::Workspace;
    t.org_id = org;
    t.workspace_id = ws;
    t.hash = service::sha256_hex(secret);
    return *s.add_token(t);
}

}  // namespace

TEST(FollowerHttp, ServesReadsFromTheSnapshotAndRefusesTheRestNamingTheLeader) {
    const fs::path dir = fs::temp_directory_path() / ("astraeus-follower-http-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    auto cfg = service::parse_config(R"({"organization": "acme", "cluster": "c1",
        "pools": [{"name": "default", "machines": [{"count": 1, "gpus": 8}]}]})", "c.json");
    ASSERT_TRUE(cfg);
    cfg->data_dir = dir.string();
    auto leader_store = store::open_sqlite(dir.string());
    ASSERT_TRUE(leader_store) << leader_store.error().message;
    auto leader = service::Service::open(*cfg, std::move(*leader_store),
                                         std::make_unique<service::SimExecutor>(service::SimExecutorConfig{}));
    ASSERT_TRUE(leader) << leader.error().message;
    auto admin = store::open_sqlite(dir.string());
    ASSERT_TRUE(admin);
    const store::Id org = (*admin)->orgs()->front().id;
    const store::Id ml = *(*admin)->set_workspace(org, 1, "ml", 1.0), cv = *(*admin)->set_workspace(org, 1, "cv", 1.0);
    add_token(**admin, org, ml, "astx_ml");
    add_token(**admin, org, cv, "astx_cv");
    auto caller = (*leader)->authenticate("Bearer astx_ml");
    ASSERT_TRUE(caller);
    ASSERT_TRUE((*leader)->submit(*caller, R"({"name": "r1", "workers": 1, "gpus_per_worker": 4})"));

    std::shared_ptr<service::Service> snapshot;  // none yet
    api::FollowerSource src;
    src.snapshot = [&snapshot] { return snapshot; };
    src.data_age_ms = [] { return std::int64_t{1234}; };
    src.leader = [] {
        store::LeaseView v;
        v.holder = "ra";
        v.holder_address = "http://replica-a.example:8080";
        v.generation = 3;
        return v;
    };
    src.lease_metrics = [] { return std::string("astraeus_leader{replica=\"rb\"} 0\n"); };
    src.retry_after_s = 2;
    api::HttpServer http(src, 2);
    auto port = http.bind("127.0.0.1", 0);
    ASSERT_TRUE(port) << port.error().message;
    std::thread serving([&http] { http.serve(); });
    httplib::Client cl("127.0.0.1", *port);
    cl.set_read_timeout(10, 0);
    const httplib::Headers ml_auth{{"Authorization", "Bearer astx_ml"}};
    auto refused_naming_leader = [](const httplib::Result& r) {
        if (!r || r->status != 503 || r->get_header_value("Retry-After") != "2") return false;
        const json b = json::parse(r->body);
        return b["status"] == "follower" && b["leader"] == "ra" && b["leader_address"] == "http://replica-a.example:8080" &&
               b["generation"] == 3 && b["error"].get<std::string>().find("the leader is ra at http://replica-a.example:8080") != std::string::npos;
    };

    // Before the first snapshot: refused, but health answers.
    EXPECT_TRUE(refused_naming_leader(cl.Get("/v1/runs", ml_auth)));
    auto health = cl.Get("/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    EXPECT_EQ(json::parse(health->body)["role"], "follower");

    auto ro = store::open_sqlite(dir.string());
    ASSERT_TRUE(ro);
    auto shared = std::make_shared<store::SharedStore>();
    shared->store = std::move(*ro);
    auto snap = service::Service::open_snapshot(*cfg, store::read_only_view(shared), false);
    ASSERT_TRUE(snap) << snap.error().message;
    snapshot = std::move(*snap);

    auto got = cl.Get("/v1/runs/r1", ml_auth);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->status, 200) << got->body;
    EXPECT_EQ(got->get_header_value("X-Astraeus-Role"), "follower");
    EXPECT_EQ(got->get_header_value("X-Astraeus-Data-Age-Ms"), "1234");
    json want = *(*leader)->show_run(*caller, "r1", {}), have = json::parse(got->body);
    want.erase("history");
    have.erase("history");
    EXPECT_EQ(have.dump(), want.dump());
    EXPECT_EQ(have["state"], "starting");
    auto list = cl.Get("/v1/runs", ml_auth);
    ASSERT_TRUE(list);
    EXPECT_EQ(json::parse(list->body)["matches"], 1);
    // The leader's visibility: cv's token does not see ml's run; a bad token is refused.
    auto other = cl.Get("/v1/runs/r1", httplib::Headers{{"Authorization", "Bearer astx_cv"}});
    ASSERT_TRUE(other);
    EXPECT_EQ(other->status, 404);
    EXPECT_EQ(json::parse(cl.Get("/v1/runs", httplib::Headers{{"Authorization", "Bearer astx_cv"}})->body)["matches"], 0);
    auto bad = cl.Get("/v1/runs", httplib::Headers{{"Authorization", "Bearer astx_nobody"}});
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 401);

    // Refused, naming the leader: writes, agent endpoints, logs, readiness.
    EXPECT_TRUE(refused_naming_leader(cl.Post("/v1/runs", ml_auth, R"({"name": "r2", "workers": 1, "gpus_per_worker": 1})", "application/json")));
    EXPECT_TRUE(refused_naming_leader(cl.Post("/v1/runs/r1/stop", ml_auth, "{}", "application/json")));
    EXPECT_TRUE(refused_naming_leader(cl.Post("/v1/agent/heartbeat", ml_auth, "{}", "application/json")));
    EXPECT_TRUE(refused_naming_leader(cl.Post("/v1/session", R"({"token": "astx_ml"})", "application/json")));
    EXPECT_TRUE(refused_naming_leader(cl.Delete("/v1/session")));
    auto no_route = cl.Delete("/v1/runs/r1", ml_auth);  // no such route: as the leader, 405
    ASSERT_TRUE(no_route);
    EXPECT_EQ(no_route->status, 405);
    EXPECT_TRUE(refused_naming_leader(cl.Get("/v1/runs/r1/logs", ml_auth)));
    EXPECT_TRUE(refused_naming_leader(cl.Get("/readyz")));
    auto metrics = cl.Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_EQ(metrics->body, "astraeus_leader{replica=\"rb\"} 0\n");
    auto page = cl.Get("/");
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
    // Nothing was written: r2 is nowhere, r1 still the only run.
    EXPECT_EQ((*admin)->runs()->size(), 1u);

    http.stop();
    serving.join();
    snapshot.reset();
    fs::remove_all(dir);
}
