// A submission neither shows nor asks for a forecast (issue 18): the forecaster's fork of the
// pool is O(backlog) under the service's lock, so a submission that woke it cost O(backlog).
// The forecaster thread starts at the first read that asks for a forecast: after submissions
// alone the process has no new thread; the first GET of a pending run starts it and shows
// the run's position (hand-worked: one 8-GPU machine, r0 starts, r1 and r2 wait in that order).
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "astraeus/service/service.hpp"
#include "astraeus/service/sim_executor.hpp"
#include "astraeus/service/token.hpp"
#include "astraeus/store/store.hpp"

using namespace astraeus;

namespace {

/// The threads of this process now (/proc/self/task).
std::size_t threads_now() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
}

}  // namespace

TEST(SubmitForecast, ASubmissionDoesNotStartTheForecasterAndTheFirstReadDoes) {
    const auto dir = std::filesystem::temp_directory_path() / ("astraeus_submit_forecast_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    auto st = store::open_sqlite(dir.string());
    ASSERT_TRUE(st) << st.error().message;
    service::ServiceConfig cfg;
    cfg.pools = {{"default", {{1, 8}}}};
    store::Store* raw = st->get();
    auto svc = service::Service::open(cfg, std::move(*st), std::make_unique<service::SimExecutor>(cfg.executor));
    ASSERT_TRUE(svc) << svc.error().message;
    auto orgs = raw->orgs();
    auto clusters = raw->clusters();
    auto ws = raw->set_workspace(orgs->front().id, clusters->front().id, "ml", 1.0);
    ASSERT_TRUE(ws);
    store::TokenRec tok;
    tok.name = "t";
    tok.scope = store::Scope::Workspace;
    tok.org_id = orgs->front().id;
    tok.workspace_id = *ws;
    tok.hash = service::sha256_hex("astx_submit_forecast");
    ASSERT_TRUE(raw->add_token(tok));
    auto caller = (*svc)->authenticate("Bearer astx_submit_forecast");
    ASSERT_TRUE(caller);

    const std::size_t before = threads_now();
    for (int i = 0; i < 3; ++i) {
        auto r = (*svc)->submit(*caller, R"({"name":"r)" + std::to_string(i) +
                                             R"(","workers":1,"gpus_per_worker":8,"sim_duration_s":3600})");
        ASSERT_TRUE(r) << r.error().message;
        EXPECT_EQ((*r)["state"], i == 0 ? "starting" : "pending") << r->dump();
        EXPECT_FALSE(r->contains("position")) << r->dump();
        EXPECT_FALSE(r->contains("estimated_start")) << r->dump();
    }
    EXPECT_EQ(threads_now(), before) << "a submission started the forecaster";

    auto shown = (*svc)->show_run(*caller, "r2", {});
    ASSERT_TRUE(shown) << shown.error().message;
    EXPECT_EQ((*shown)["state"], "pending");
    EXPECT_EQ((*shown)["position"], 2) << shown->dump();  // behind r1
    EXPECT_EQ(threads_now(), before + 1) << "the first read that asks starts the forecaster";
    svc->reset();
    std::filesystem::remove_all(dir);
}
