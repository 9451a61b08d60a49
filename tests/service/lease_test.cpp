// The leader lease (store/lease.hpp) on a fresh database of ASTRAEUS_TEST_PG (skipped when unset):
// two replicas' leases on one database. Expiry is made by moving the row's renewed_at back in the
// database (no sleeps): the database clock is the only one the lease reads.
#include <gtest/gtest.h>

#include "astraeus/service/config.hpp"
#include "astraeus/store/lease.hpp"
#include "store_site.hpp"

using namespace astraeus;
using store_test::Backend;
using store_test::StoreSite;

namespace {

#define LEASE_SITE(site)                                                                                   \
    if (store_test::test_pg().empty())                                                                     \
        GTEST_SKIP() << "ASTRAEUS_TEST_PG is not set (scripts/postgres-test-server.sh start prints it)";    \
    StoreSite site(Backend::Postgres);                                                                     \
    ASSERT_EQ(site.error, "") << "cannot create the test database"

/// Moves the lease's last renewal `s` seconds back (as if its holder stopped renewing then).
void age_lease(const StoreSite& site, int s) {
    ASSERT_EQ(store_test::pg_command(site.conninfo, "UPDATE astraeus_leader_lease SET renewed_at = renewed_at - interval '" +
                                                        std::to_string(s) + " seconds'"),
              "");
}

}  // namespace

TEST(LeaderLease, TheSecondReplicaTakesOverOnlyAfterExpiryWithTheNextGeneration) {
    LEASE_SITE(site);
    auto a = store::LeaderLease::open(site.conninfo, "host-a:/data/a", "http://a:8080", 30);
    auto b = store::LeaderLease::open(site.conninfo, "host-b:/data/b", "http://b:8080", 30);
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_TRUE(b) << b.error().message;

    auto free_view = (*b)->read();
    ASSERT_TRUE(free_view);
    EXPECT_EQ(free_view->holder, "");
    EXPECT_EQ(free_view->generation, 0);

    auto va = (*a)->acquire_or_renew();
    ASSERT_TRUE(va) << va.error().message;
    EXPECT_TRUE(va->held);
    EXPECT_TRUE(va->took_over);
    EXPECT_EQ(va->generation, 1);
    EXPECT_EQ((*a)->generation(), 1);

    // b sees a's fresh lease and does not take it.
    auto vb = (*b)->acquire_or_renew();
    ASSERT_TRUE(vb) << vb.error().message;
    EXPECT_FALSE(vb->held);
    EXPECT_EQ(vb->holder, "host-a:/data/a");
    EXPECT_EQ(vb->holder_address, "http://a:8080");
    EXPECT_EQ(vb->generation, 1);
    EXPECT_EQ((*b)->generation(), 0);

    // a renews: same generation, still held.
    auto ra = (*a)->renew();
    ASSERT_TRUE(ra);
    EXPECT_TRUE(ra->held);
    EXPECT_FALSE(ra->took_over);
    EXPECT_EQ(ra->generation, 1);

    // 29 s without a renewal: not expired yet (30 s lease).
    age_lease(site, 29);
    vb = (*b)->acquire_or_renew();
    ASSERT_TRUE(vb);
    EXPECT_FALSE(vb->held);
    EXPECT_GT(vb->age_s, 28.9);

    // 31 s: expired; b takes over with generation 2.
    age_lease(site, 2);
    vb = (*b)->acquire_or_renew();
    ASSERT_TRUE(vb);
    EXPECT_TRUE(vb->held);
    EXPECT_TRUE(vb->took_over);
    EXPECT_EQ(vb->generation, 2);
    EXPECT_EQ((*b)->generation(), 2);

    // The deposed a: its renew fails (not held), and it cannot take the fresh lease back.
    ra = (*a)->renew();
    ASSERT_TRUE(ra);
    EXPECT_FALSE(ra->held);
    EXPECT_EQ(ra->holder, "host-b:/data/b");
    EXPECT_EQ(ra->generation, 2);
    ra = (*a)->acquire_or_renew();
    ASSERT_TRUE(ra);
    EXPECT_FALSE(ra->held);
    EXPECT_EQ((*a)->generation(), 1);

    // b releases (clean shutdown): a takes it at once, generation 3.
    (*b)->release();
    ra = (*a)->acquire_or_renew();
    ASSERT_TRUE(ra);
    EXPECT_TRUE(ra->held);
    EXPECT_EQ(ra->generation, 3);
    vb = (*b)->renew();
    ASSERT_TRUE(vb);
    EXPECT_FALSE(vb->held);
}

TEST(LeaderLease, TheSameReplicaIdRestartedWaitsForItsOldLeaseToExpire) {
    LEASE_SITE(site);
    auto a1 = store::LeaderLease::open(site.conninfo, "host-a:/data/a", "", 30);
    ASSERT_TRUE(a1);
    ASSERT_TRUE((*a1)->acquire_or_renew()->held);
    // A second process with the same id (the first may only be stopped, not dead): no take-over.
    auto a2 = store::LeaderLease::open(site.conninfo, "host-a:/data/a", "", 30);
    ASSERT_TRUE(a2);
    EXPECT_FALSE((*a2)->acquire_or_renew()->held);
    age_lease(site, 31);
    auto v = (*a2)->acquire_or_renew();
    ASSERT_TRUE(v);
    EXPECT_TRUE(v->held);
    EXPECT_EQ(v->generation, 2);
    // With an exclusive id (serve: the data directory's lock is held), a restart takes it back at once.
    auto a3 = store::LeaderLease::open(site.conninfo, "host-a:/data/a", "", 30, /*id_is_exclusive=*/true);
    ASSERT_TRUE(a3);
    v = (*a3)->acquire_or_renew();
    ASSERT_TRUE(v);
    EXPECT_TRUE(v->held);
    EXPECT_EQ(v->generation, 3);
    auto other = store::LeaderLease::open(site.conninfo, "host-b:/data/b", "", 30, true);
    ASSERT_TRUE(other);
    EXPECT_FALSE((*other)->acquire_or_renew()->held) << "exclusivity is about its own id only";
}

TEST(LeaderLease, BadArgumentsAndAnUnreachableDatabaseAreClearErrors) {
    auto e = store::LeaderLease::open("host=127.0.0.1 port=1 dbname=x connect_timeout=5", "r", "", 6);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message.rfind("cannot connect to PostgreSQL: ", 0), 0u) << e.error().message;
    e = store::LeaderLease::open("dbname=x", "", "", 6);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message, "leader lease: the replica id is empty");
    e = store::LeaderLease::open("dbname=x", "r", "", 0);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message, "leader lease: lease_duration_s must be > 0");
    const std::string id = store::default_replica_id("rel/dir");
    EXPECT_NE(id.find(":/"), std::string::npos) << id;
    EXPECT_EQ(id.substr(id.size() - 8), "/rel/dir") << id;
}

// Fencing (store/pg_store.hpp set_fencing_generation): a leader's store writes while its lease
// generation holds and is refused ("fenced: ...") once another replica took over; a store without
// a fence (admin) and the new leader's store write on.
TEST(LeaderLease, ADeposedLeadersWritesAreFenced) {
    LEASE_SITE(site);
    auto a = store::LeaderLease::open(site.conninfo, "a", "", 30);
    auto b = store::LeaderLease::open(site.conninfo, "b", "", 30);
    ASSERT_TRUE(a && b);
    ASSERT_TRUE((*a)->acquire_or_renew()->held);
    auto sa = store::open_postgresql(site.conninfo);
    auto sb = store::open_postgresql(site.conninfo);
    auto admin = store::open_postgresql(site.conninfo);
    ASSERT_TRUE(sa && sb && admin);
    (*sa)->set_fencing_generation((*a)->generation());
    store::Batch w;
    w.meta.push_back({"counted_to_s", 60});
    ASSERT_TRUE((*sa)->apply(w)) << "the leader writes";

    age_lease(site, 31);
    ASSERT_TRUE((*b)->acquire_or_renew()->held);
    (*sb)->set_fencing_generation((*b)->generation());

    w.meta[0].second = 120;
    auto refused = (*sa)->apply(w);
    ASSERT_FALSE(refused);
    EXPECT_TRUE(store::is_fenced(refused.error()));
    EXPECT_EQ(refused.error().message,
              "fenced: this replica led with lease generation 1 but the lease is at generation 2 (held by b): "
              "another replica took over, this one's writes are refused");
    EXPECT_EQ((*sa)->meta("counted_to_s").value(), std::optional<std::int64_t>(60)) << "nothing of it written";

    w.meta[0].second = 180;
    ASSERT_TRUE((*sb)->apply(w)) << "the new leader writes";
    w.meta[0].second = 240;
    ASSERT_TRUE((*admin)->apply(w)) << "an unfenced store writes";
    EXPECT_EQ((*sa)->meta("counted_to_s").value(), std::optional<std::int64_t>(240)) << "the deposed one still reads";
}

TEST(ReplicaConfig, LeaseKeysHaveDefaultsAndBadValuesAreClearErrors) {
    auto d = service::parse_config("{}", "c.json");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->lease_duration_s, 6);
    EXPECT_EQ(d->lease_renew_s, 2);
    EXPECT_EQ(d->replica, "");
    EXPECT_EQ(d->address, "");
    auto c = service::parse_config(
        R"({"lease_duration_s": 3, "lease_renew_s": 1, "replica": "r1", "address": "http://10.0.0.1:8080"})", "c.json");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->lease_duration_s, 3);
    EXPECT_EQ(c->lease_renew_s, 1);
    EXPECT_EQ(c->replica, "r1");
    EXPECT_EQ(c->address, "http://10.0.0.1:8080");
    auto e = service::parse_config(R"({"lease_duration_s": 0.5})", "c.json");
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message,
              "c.json: lease_duration_s must be in 1..3600 (seconds a leader's lease holds without renewal)");
    e = service::parse_config(R"({"lease_duration_s": 4, "lease_renew_s": 3})", "c.json");
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message.rfind("c.json: lease_renew_s must be > 0 and at most half of lease_duration_s (4", 0), 0u)
        << e.error().message;
    e = service::parse_config(R"({"lease_renew_s": 0})", "c.json");
    ASSERT_FALSE(e);
    e = service::parse_config(R"({"replica": 5})", "c.json");
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message, "c.json: key 'replica' has the wrong type: expected a string, got number");
}
