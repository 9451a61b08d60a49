// Authentication does not wait behind the service's writes (issue 18: "reads never wait behind
// writes"; before, every call's token lookup took the service's lock, so a caller of any
// workspace waited for whatever held it: a submission's transaction, a round). A scripted
// executor blocks inside launch(), which a submission's round calls under the service's lock;
// while it is blocked, another thread authenticates and asks /whoami. On both stores (PostgreSQL when
// ASTRAEUS_TEST_PG is set). Also: a token revoked by another process (`astraeus admin token
// revoke` writes the store directly) is refused at once, and a token added later is accepted.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/token.hpp"
#include "store_site.hpp"

namespace {

using namespace astraeus;
namespace svc = astraeus::service;
namespace st = astraeus::store;
using namespace std::chrono_literals;

constexpr Seconds T0 = 1793613600;  // 2026-11-02T10:00:00Z

/// An executor whose launch() blocks until the test opens the gate (it holds the service's lock
/// meanwhile: rounds run under it).
struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool entered = false, open = false;
};

class BlockingExecutor final : public svc::Executor {
public:
    explicit BlockingExecutor(std::shared_ptr<Gate> g) : g_(std::move(g)) {}
    void launch(Seconds, const svc::ExecRun&) override {
        std::unique_lock lk(g_->mu);
        g_->entered = true;
        g_->cv.notify_all();
        g_->cv.wait(lk, [&] { return g_->open; });
    }
    void stop(Seconds, std::int64_t) override {}
    void forget(std::int64_t) override {}
    void restore(const svc::ExecRun&, svc::ExecPhase, Seconds, Seconds) override {}
    Seconds next_event_s() const override { return svc::kNever; }
    bool pop_due(Seconds, svc::ExecEvent&) override { return false; }
    Seconds executed_s(std::int64_t, Seconds) const override { return 0; }

private:
    std::shared_ptr<Gate> g_;
};

class AuthOffLock : public ::testing::TestWithParam<store_test::Backend> {};

TEST_P(AuthOffLock, ACallerIsAuthenticatedWhileARoundHoldsTheServiceLock) {
    ASTRAEUS_STORE_SITE(site);
    svc::set_log_level("error");
    auto store = site.open();
    ASSERT_TRUE(store) << store.error().message;
    auto ids = (*store)->init("org", "c1");
    ASSERT_TRUE(ids);
    auto ws = (*store)->set_workspace(ids->first, ids->second, "ml", 1.0);
    ASSERT_TRUE(ws);
    auto secret = svc::new_token();
    ASSERT_TRUE(secret);
    st::TokenRec t{0, "ml-token", st::Scope::Workspace, ids->first, *ws, 0, svc::sha256_hex(*secret), T0, false};
    auto tok_id = (*store)->add_token(t);
    ASSERT_TRUE(tok_id);

    svc::ServiceConfig cfg;
    cfg.organization = "org";
    cfg.cluster = "c1";
    cfg.pools = {{"default", {{1, 8}}}};
    cfg.pools_given = true;
    cfg.data_dir = site.dir.string();
    auto time = std::make_shared<svc::ManualTime>(T0);
    auto gate = std::make_shared<Gate>();
    auto opened = svc::Service::open_manual(cfg, std::move(*store), std::make_unique<BlockingExecutor>(gate), time);
    ASSERT_TRUE(opened) << opened.error().message;
    svc::Service& s = **opened;
    const std::string bearer = "Bearer " + *secret;

    auto me = s.authenticate(bearer);
    ASSERT_TRUE(me) << me.error().message;

    // The submission's round places r1 and blocks in launch(), under the service's lock.
    std::thread round([&] { (void)s.submit(*me, R"({"name": "r1", "workers": 1, "gpus_per_worker": 8})"); });
    {
        std::unique_lock lk(gate->mu);
        ASSERT_TRUE(gate->cv.wait_for(lk, 10s, [&] { return gate->entered; })) << "the round did not launch r1";
    }
    auto other = std::async(std::launch::async, [&] {
        auto c = s.authenticate(bearer);
        if (!c) return std::string("authenticate: ") + c.error().message;
        auto who = s.whoami(*c);
        if (!who) return std::string("whoami: ") + who.error().message;
        return who->dump();
    });
    const bool answered = other.wait_for(5s) == std::future_status::ready;
    {
        std::lock_guard lk(gate->mu);
        gate->open = true;
    }
    gate->cv.notify_all();
    round.join();
    ASSERT_TRUE(answered) << "authentication waited for the service's lock (a round held it)";
    EXPECT_EQ(other.get(),
              R"({"cluster":"c1","organization":"org","scope":"workspace","token":"ml-token","workspace":"ml"})");

    // Another process's store writes are seen at once: a token added, then revoked.
    auto outside = site.open();  // a second connection, as `astraeus admin` opens
    ASSERT_TRUE(outside) << outside.error().message;
    auto secret2 = svc::new_token();
    ASSERT_TRUE(secret2);
    st::TokenRec t2{0, "ml-2", st::Scope::Workspace, ids->first, *ws, 0, svc::sha256_hex(*secret2), T0, false};
    auto id2 = (*outside)->add_token(t2);
    ASSERT_TRUE(id2);
    EXPECT_TRUE(s.authenticate("Bearer " + *secret2));
    ASSERT_TRUE((*outside)->revoke_token(*id2));
    auto refused = s.authenticate("Bearer " + *secret2);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().status, 401);
    EXPECT_EQ(refused.error().message, "the token was revoked");
    EXPECT_TRUE(s.authenticate(bearer));
}

INSTANTIATE_TEST_SUITE_P(, AuthOffLock,
                         ::testing::Values(store_test::Backend::Sqlite, store_test::Backend::Postgres),
                         [](const auto& p) { return store_test::backend_name(p.param); });

}  // namespace
