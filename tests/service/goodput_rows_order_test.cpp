// GET /v1/goodput's server-side order (service/goodput_rows_order.hpp) on hand-made rows: each
// key in both directions, ties by workspace then name, goodput -1 for a row that held nothing,
// the limit, and the parameters' 400s. Every expected order is worked out by hand in comments.
#include <gtest/gtest.h>

#include "astraeus/service/goodput_rows_order.hpp"

namespace astraeus::service {
namespace {

namespace gp = goodput;

// Counts with `held` GPU-seconds in all, `productive` of them productive and the rest idle,
// plus `waiting` not held.
gp::Counts counts(GpuSeconds productive, GpuSeconds idle, GpuSeconds waiting = 0) {
    gp::Counts c;
    c.add(gp::Category::Productive, true, productive);
    c.add(gp::Category::Idle, true, idle);
    c.add(gp::Category::Waiting, false, waiting);
    return c;
}

// Five rows (index: workspace/name, productive + idle = held, goodput, waiting):
//   0 ml/b  300 + 100 = 400  0.75   0
//   1 cv/z  100 + 300 = 400  0.25  50
//   2 ml/a    0 +   0 =   0   -     900 (held nothing: goodput sorts as -1)
//   3 cv/a  800 +   0 = 800  1.00   0
//   4 ml/c  100 + 100 = 200  0.50   0
std::vector<OrderedRow> rows() {
    return {{"b", "ml", counts(300, 100)}, {"z", "cv", counts(100, 300, 50)}, {"a", "ml", counts(0, 0, 900)},
            {"a", "cv", counts(800, 0)},   {"c", "ml", counts(100, 100)}};
}

std::vector<std::size_t> order(const std::string& key, bool desc, std::size_t limit = 0) {
    return order_goodput_rows(rows(), GoodputRowsOrder{key, desc, limit});
}
using V = std::vector<std::size_t>;

TEST(GoodputRowsOrder, EachKeyBothWaysTiesByName) {
    // held desc: 800 (3), then the two 400s by name cv/z (1) before ml/b (0), 200 (4), 0 (2).
    EXPECT_EQ(order("held", true), (V{3, 1, 0, 4, 2}));
    // held asc: 0, 200, then the 400s still by name ascending (cv/z, ml/b), 800.
    EXPECT_EQ(order("held", false), (V{2, 4, 1, 0, 3}));
    EXPECT_EQ(order("productive", true), (V{3, 0, 1, 4, 2}));  // 800 300 100(cv/z) 100(ml/c) 0
    EXPECT_EQ(order("goodput", true), (V{3, 0, 4, 1, 2}));     // 1 .75 .5 .25 -1
    EXPECT_EQ(order("goodput", false), (V{2, 1, 4, 0, 3}));
    EXPECT_EQ(order("idle", true), (V{1, 0, 4, 3, 2}));        // 300 100(ml/b) 100(ml/c) 0(cv/a) 0(ml/a)
    EXPECT_EQ(order("waiting", true), (V{2, 1, 3, 0, 4}));     // 900 50 then 0s by name cv/a ml/b ml/c
    // name: workspace then name, bytewise: cv/a cv/z ml/a ml/b ml/c.
    EXPECT_EQ(order("name", false), (V{3, 1, 2, 0, 4}));
    EXPECT_EQ(order("name", true), (V{4, 0, 2, 1, 3}));
}

TEST(GoodputRowsOrder, LimitCutsAfterTheOrder) {
    EXPECT_EQ(order("held", true, 2), (V{3, 1}));
    EXPECT_EQ(order("goodput", false, 1), (V{2}));
    EXPECT_EQ(order("held", true, 99), (V{3, 1, 0, 4, 2}));  // more than there are: all
    EXPECT_EQ(order("", false, 3), (V{0, 1, 2}));              // no key: the given order, cut
    EXPECT_EQ(order("", false), (V{0, 1, 2, 3, 4}));
}

TEST(GoodputRowsOrder, Parameters) {
    Params q{{"sort", "goodput"}, {"limit", "100"}, {"by", "run"}};
    auto o = take_goodput_rows_order(q);
    ASSERT_TRUE(o.has_value());
    EXPECT_EQ(o->key, "goodput");
    EXPECT_TRUE(o->desc);  // figures: descending unless asked
    EXPECT_EQ(o->limit, 100u);
    EXPECT_EQ(q, (Params{{"by", "run"}}));  // the window's parameters are left
    Params n{{"sort", "name"}};
    EXPECT_FALSE(take_goodput_rows_order(n)->desc);  // name: ascending unless asked
    Params a{{"sort", "held"}, {"dir", "asc"}};
    EXPECT_FALSE(take_goodput_rows_order(a)->desc);
    const auto refused = [](Params p) {
        auto r = take_goodput_rows_order(p);
        return r ? std::string("accepted") : std::to_string(r.error().status) + " " + r.error().message;
    };
    const std::string bad_key = refused({{"sort", "colour"}});
    EXPECT_EQ(bad_key, "400 bad 'sort' 'colour' (" + std::string(kGoodputSortKeys) + ")");
    EXPECT_NE(bad_key.find("held, productive, goodput"), std::string::npos);
    EXPECT_NE(refused({{"sort", "held"}, {"dir", "up"}}).find("400 bad 'dir'"), std::string::npos);
    EXPECT_NE(refused({{"dir", "asc"}}).find("400 'dir' goes with 'sort'"), std::string::npos);
    for (const char* l : {"0", "100001", "x", "-1", ""})
        EXPECT_NE(refused({{"limit", l}}).find("400 bad 'limit'"), std::string::npos) << l;
    EXPECT_EQ(refused({{"limit", "100000"}}), "accepted");
}

}  // namespace
}  // namespace astraeus::service
