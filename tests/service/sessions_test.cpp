// The web sessions' pure parts (service/sessions.hpp: cookies, the CSRF rule) and their store
// (schema 5: add_session's expiry sweep and per-token bound, revoke_token ending the sessions).
// The live checks (flags on the wire, scope, sign-out, expiry) are tests/service/web_session_test.sh.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "astraeus/service/config.hpp"
#include "astraeus/service/sessions.hpp"
#include "astraeus/store/store.hpp"
#include "store_site.hpp"

using namespace astraeus;
using service::csrf_refusal;
using service::CsrfRequest;
namespace fs = std::filesystem;

TEST(Sessions, CookieValueFindsItsNameOnly) {
    EXPECT_EQ(service::cookie_value("astraeus_session=asts_abc", "astraeus_session"), "asts_abc");
    EXPECT_EQ(service::cookie_value("a=1; astraeus_session=x;b=2", "astraeus_session"), "x");
    EXPECT_EQ(service::cookie_value("a=1;  astraeus_session = \"q\" ", "astraeus_session"), "q");
    // The first of two; a longer name that ends like ours is not ours; no '=' is no cookie.
    EXPECT_EQ(service::cookie_value("astraeus_session=first; astraeus_session=second", "astraeus_session"), "first");
    EXPECT_EQ(service::cookie_value("__Host-astraeus_session=x", "astraeus_session"), std::nullopt);
    EXPECT_EQ(service::cookie_value("astraeus_session", "astraeus_session"), std::nullopt);
    EXPECT_EQ(service::cookie_value("", "astraeus_session"), std::nullopt);
    EXPECT_EQ(service::cookie_value("__Host-astraeus_session=y", service::session_cookie_name(true)), "y");
}

TEST(Sessions, SetCookieHasEveryFlagAndSecureOverTls) {
    EXPECT_EQ(service::session_set_cookie("asts_k", 43200, false),
              "astraeus_session=asts_k; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200");
    EXPECT_EQ(service::session_set_cookie("asts_k", 60, true),
              "__Host-astraeus_session=asts_k; Path=/; HttpOnly; SameSite=Strict; Secure; Max-Age=60");
    EXPECT_EQ(service::session_clear_cookie(false), "astraeus_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
}

TEST(Sessions, NewSecretsAreRandomAndShaped) {
    auto a = service::new_session_secret(), b = service::new_session_secret();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->size(), 48u);
    EXPECT_TRUE(a->starts_with("asts_"));
    EXPECT_NE(*a, *b);
}

TEST(Sessions, CsrfRuleRefusesWhatAnotherOriginCanSend) {
    const CsrfRequest ok{"POST", "1", "http://127.0.0.1:8080", "same-origin", "127.0.0.1:8080", false};
    EXPECT_EQ(csrf_refusal(ok), "");
    // Without Origin and Sec-Fetch-Site (an old browser, curl): the header is enough.
    EXPECT_EQ(csrf_refusal({"DELETE", "1", "", "", "127.0.0.1:8080", false}), "");
    // Behind a TLS proxy the page's origin is https.
    EXPECT_EQ(csrf_refusal({"POST", "1", "https://127.0.0.1:8080", "", "127.0.0.1:8080", false}), "");

    auto refused = [](const CsrfRequest& r) { return !csrf_refusal(r).empty(); };
    EXPECT_TRUE(refused({"POST", "", "http://127.0.0.1:8080", "same-origin", "127.0.0.1:8080", false}));  // a form
    EXPECT_TRUE(refused({"POST", "0", "", "", "127.0.0.1:8080", false}));
    EXPECT_TRUE(refused({"POST", "1", "http://evil.example", "", "127.0.0.1:8080", false}));
    EXPECT_TRUE(refused({"POST", "1", "http://127.0.0.1:9999", "", "127.0.0.1:8080", false}));  // same site
    EXPECT_TRUE(refused({"POST", "1", "null", "", "127.0.0.1:8080", false}));
    EXPECT_TRUE(refused({"POST", "1", "http://127.0.0.1:8080", "", "", false}));  // no Host to match
    EXPECT_TRUE(refused({"POST", "1", "http://127.0.0.1:8080", "", "127.0.0.1:8080", true}));  // TLS: https only
    EXPECT_TRUE(refused({"POST", "1", "http://127.0.0.1:8080", "same-site", "127.0.0.1:8080", false}));
    // GET changes nothing: no header needed, but never from another site.
    EXPECT_EQ(csrf_refusal({"GET", "", "", "same-origin", "h", false}), "");
    EXPECT_EQ(csrf_refusal({"GET", "", "", "none", "h", false}), "");
    EXPECT_EQ(csrf_refusal({"HEAD", "", "http://evil.example", "", "h", false}), "");
    EXPECT_TRUE(refused({"GET", "", "", "cross-site", "h", false}));
}

TEST(Sessions, ConfigBoundsLifetimeAndSessionsPerToken) {
    auto c = service::parse_config(R"({"web_sessions": {"lifetime_s": 2, "max_per_token": 3}})", "t");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->web_sessions.lifetime_s, 2);
    EXPECT_EQ(c->web_sessions.max_per_token, 3);
    auto d = service::parse_config("{}", "t");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->web_sessions.lifetime_s, 43200);
    EXPECT_EQ(d->web_sessions.max_per_token, 16);
    for (const char* bad : {R"({"web_sessions": {"lifetime_s": 0}})", R"({"web_sessions": {"lifetime_s": 2592001}})",
                            R"({"web_sessions": {"max_per_token": 0}})", R"({"web_sessions": {"idle_s": 5}})"}) {
        auto e = service::parse_config(bad, "t");
        ASSERT_FALSE(e) << bad;
        EXPECT_NE(e.error().message.find("web_sessions"), std::string::npos) << e.error().message;
    }
}

namespace {
class SessionStore : public ::testing::TestWithParam<store_test::Backend> {};
}  // namespace

// On both stores (PostgreSQL when ASTRAEUS_TEST_PG is set).
TEST_P(SessionStore, BoundsSessionsPerTokenSweepsExpiredAndRevokeEndsThem) {
    ASTRAEUS_STORE_SITE(d);
    auto s = d.open();
    ASSERT_TRUE(s) << s.error().message;
    store::Store& st = **s;
    auto ids = st.init("acme", "c1");
    ASSERT_TRUE(ids);
    auto ws = st.set_workspace(ids->first, ids->second, "ml", 1);
    ASSERT_TRUE(ws);
    store::TokenRec t;
    t.name = "ml";
    t.org_id = ids->first;
    t.workspace_id = *ws;
    t.hash = "t1";
    auto tok = st.add_token(t);
    t.hash = "t2";
    auto other = st.add_token(t);
    ASSERT_TRUE(tok && other);

    auto add = [&](store::Id token, const std::string& hash, Seconds created, Seconds expires, Seconds now) {
        store::SessionRec r;
        r.token_id = token;
        r.hash = hash;
        r.created_s = created;
        r.expires_s = expires;
        return st.add_session(r, 3, now);
    };
    // Four sessions of one token with a bound of 3: the oldest (s1) goes; the other token's stays.
    ASSERT_TRUE(add(*other, "o1", 100, 10'000, 100));
    for (int k = 1; k <= 4; ++k) ASSERT_TRUE(add(*tok, "s" + std::to_string(k), 100 + k, 10'000, 100 + k));
    auto mine = st.sessions(*tok);
    ASSERT_TRUE(mine);
    ASSERT_EQ(mine->size(), 3u);
    EXPECT_EQ((*mine)[0].hash, "s2");
    EXPECT_EQ((*mine)[2].hash, "s4");
    auto found = st.session_by_hash("s3");
    ASSERT_TRUE(found && *found);
    EXPECT_EQ((*found)->first.expires_s, 10'000);
    EXPECT_EQ((*found)->second.id, *tok);
    EXPECT_EQ((*found)->second.workspace_id, *ws);
    EXPECT_FALSE(*st.session_by_hash("s1"));

    // A sign-in at 10'000 sweeps every session expired then (the other token's too).
    ASSERT_TRUE(add(*tok, "s5", 10'000, 20'000, 10'000));
    EXPECT_EQ(st.sessions(*tok)->size(), 1u);
    EXPECT_TRUE(st.sessions(*other)->empty());

    // Sign-out deletes one; revoking the token deletes the rest.
    ASSERT_TRUE(add(*tok, "s6", 10'001, 20'000, 10'001));
    EXPECT_TRUE(*st.delete_session("s5"));
    EXPECT_FALSE(*st.delete_session("s5"));
    ASSERT_TRUE(st.revoke_token(*tok));
    EXPECT_TRUE(st.sessions(*tok)->empty());
    EXPECT_FALSE(*st.session_by_hash("s6"));
}

INSTANTIATE_TEST_SUITE_P(, SessionStore,
                         ::testing::Values(store_test::Backend::Sqlite, store_test::Backend::Postgres),
                         [](const auto& p) { return store_test::backend_name(p.param); });
