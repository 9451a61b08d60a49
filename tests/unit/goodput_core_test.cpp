// The goodput core as the lead wrote it: the page's table format, display rounding, calendar,
// RFC 3339, and the counter's basic rules (hand-computed; the scenario tests of the count are in
// the goodput replay tests).
#include <gtest/gtest.h>

#include "astraeus/goodput/counter.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/goodput_io/table.hpp"

namespace g = astraeus::goodput;
using g::Category;

namespace {

constexpr astraeus::GpuSeconds h10(int tenths) { return astraeus::GpuSeconds{tenths} * 360; }

class CountingSink : public g::DeltaSink {
public:
    explicit CountingSink(g::GoodputLedger& l) : ledger(l) {}
    void add(const g::Delta& d) override {
        ++calls;
        ledger.add(d);
    }
    g::GoodputLedger& ledger;
    long calls = 0;
};

}  // namespace

TEST(GoodputTable, PageTotalRowByteForByte) {
    // The page's TOTAL row: 412.5 + 21.0 + 6.2 + 9.8 + 4.1 + 12.7 + 3.3 = 469.6 held;
    // 412.5 / 469.6 = 87.8 % -> "88%"; 18.0 waiting.
    g::Counts c;
    c.add(Category::Productive, true, h10(4125));
    c.add(Category::Idle, true, h10(210));
    c.add(Category::Stalled, true, h10(62));
    c.add(Category::Starting, true, h10(98));
    c.add(Category::Restart, true, h10(41));
    c.add(Category::Failure, true, h10(127));
    c.add(Category::Preemption, true, h10(33));
    c.add(Category::Waiting, false, h10(180));
    const std::string t = g::goodput_table("RUN", {});
    const std::string expected_head =
        "GPU-hours\n"
        "RUN                              HELD     USED GOODPUT    IDLE STALLED   START RESTART "
        "FAILURE PREEMPT WAITING\n";
    EXPECT_EQ(t.substr(0, expected_head.size()), expected_head);
    const std::string table = g::goodput_table("RUN", {{"llm", c}});
    EXPECT_NE(table.find("TOTAL                           469.6    412.5     88%    21.0     6.2     "
                         "9.8     4.1    12.7     3.3    18.0\n"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("\nUSED = productive (running, GPUs busy); GOODPUT = used / held; "
                         "WAITING = asked for, not yet held\n"),
              std::string::npos);
}

TEST(GoodputTable, HeldColumnsAddUpByLargestRemainder) {
    // Three columns of 0.04 GPU-h each (144 GPU-s): 0.12 h held -> 0.1 shown; plain rounding
    // would show 0.0 + 0.0 + 0.0. Largest remainder gives the tenth to the first (ties: column order).
    g::Counts c;
    c.add(Category::Productive, true, 144);
    c.add(Category::Idle, true, 144);
    c.add(Category::Stalled, true, 144);
    const g::DisplayRow d = g::display_row(c);
    EXPECT_EQ(d.held, 1);
    EXPECT_EQ(d.held_columns[0] + d.held_columns[1] + d.held_columns[2], 1);
    EXPECT_EQ(d.held_columns[0], 1);
    EXPECT_EQ(d.goodput_pct, 33);  // 144 / 432
    EXPECT_EQ(g::display_row(g::Counts{}).goodput_pct, -1);
    EXPECT_NE(g::goodput_table("POOL", {{"a", g::Counts{}}}).find("       -"), std::string::npos);
}

TEST(GoodputTable, WideValuesAndLongNamesWidenTheirColumn) {
    // "1234567.8" (9 characters) needs a 10-wide HELD and USED column, the 33-character name a
    // 33-wide name column plus its space: every row, the header included, follows.
    g::Counts big;
    big.add(Category::Productive, true, h10(12345678));
    const std::string t = g::goodput_table("POOL", {{"a-pool-with-a-name-longer-than-28", big}});
    std::string head = "\nPOOL";
    head += std::string(36, ' ');  // 33 - 4 + 1 + (10 - 4)
    head += "HELD      USED GOODPUT";
    EXPECT_NE(t.find(head), std::string::npos) << t;
    EXPECT_NE(t.find("\na-pool-with-a-name-longer-than-28  1234567.8 1234567.8    100%"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("\nTOTAL                              1234567.8"), std::string::npos) << t;
}

TEST(GoodputCalendar, WeeksAndRfc3339) {
    // 2026-11-29 is a Sunday; its ISO week (W48) began Monday 2026-11-23.
    const auto sun = g::parse_rfc3339("2026-11-29T23:59:00Z");
    ASSERT_TRUE(sun);
    EXPECT_EQ(g::format_rfc3339(g::week_start(*sun)), "2026-11-23T00:00:00Z");
    EXPECT_EQ(g::iso_week_label(*sun), "2026-W48");
    EXPECT_EQ(g::iso_week_label(*sun + 60), "2026-W49");
    // 2027-01-01 is a Friday: ISO week 53 of 2026.
    EXPECT_EQ(g::iso_week_label(*g::parse_rfc3339("2027-01-01T12:00:00Z")), "2026-W53");
    EXPECT_EQ(*g::parse_rfc3339("2026-10-01T02:00:00+02:00"), *g::parse_rfc3339("2026-10-01T00:00:00Z"));
    EXPECT_EQ(*g::parse_rfc3339("1970-01-01T00:01:00Z"), 60);
    EXPECT_FALSE(g::parse_rfc3339("2026-02-30T00:00:00Z"));
    // An offset that carries the instant out of the four-digit years (found by fuzz_rfc3339):
    // refused, since it could not be written back; the edges themselves are accepted.
    EXPECT_FALSE(g::parse_rfc3339("9999-12-31T23:59:59-07:30"));
    EXPECT_FALSE(g::parse_rfc3339("0000-01-01T00:00:00+00:01"));
    EXPECT_EQ(g::format_rfc3339(*g::parse_rfc3339("9999-12-31T23:59:59Z")), "9999-12-31T23:59:59Z");
    EXPECT_EQ(g::format_rfc3339(*g::parse_rfc3339("0000-01-01T00:00:00Z")), "0000-01-01T00:00:00Z");
    EXPECT_EQ(g::format_rfc3339(*g::parse_rfc3339("9999-12-31T16:29:59-07:30")), "9999-12-31T23:59:59Z");
    EXPECT_FALSE(g::parse_rfc3339("2026-10-01"));
    EXPECT_FALSE(g::parse_rfc3339("2026-10-01T00:00:00"));
}

TEST(GoodputCounter, WaitStartRunEndToTheSecond) {
    // Submit 10:00:30 asking 4 GPUs; placed 10:02:10; started 10:03:40, busy; ends 10:06:20.
    // Each state for the seconds it lasted (the minute rule gave 360 / 240 / 800):
    //   [10:00:30,10:02:10) waiting     100 s x 4 = 400 not held
    //   [10:02:10,10:03:40) starting     90 s x 4 = 360 held
    //   [10:03:40,10:06:20) productive  160 s x 4 = 640 held
    const auto t0 = *g::parse_rfc3339("2026-11-02T10:00:30Z");
    g::GoodputLedger ledger;
    ledger.set_run(0, 0, 0);
    g::GoodputCounter c({}, ledger);
    const int w = c.add_worker(t0, 0, 4);
    const g::HeldPart part{3, 4};
    ASSERT_TRUE(c.place(t0 + 100, w, {&part, 1}));
    ASSERT_TRUE(c.start(t0 + 190, w));
    ASSERT_TRUE(c.utilization_level(t0 + 190, w, 80));
    ASSERT_TRUE(c.end(t0 + 350, w));
    const g::Counts r = ledger.run_total(0);
    EXPECT_EQ(r.not_held_of(Category::Waiting), 400);
    EXPECT_EQ(r.held_of(Category::Starting), 360);
    EXPECT_EQ(r.held_of(Category::Productive), 640);
    EXPECT_EQ(g::figures(r).allocated + g::figures(r).waiting, 350 * 4);
    // Machine 3 holds the held time only.
    const auto rows = ledger.query(g::By::Machine, {t0 - 3600, t0 + 3600});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].id, 3);
    EXPECT_EQ(g::figures(rows[0].counts).allocated, 1000);
    EXPECT_EQ(g::figures(rows[0].counts).waiting, 0);
}

TEST(GoodputCounter, StallMovesMinutesSinceLastProgress) {
    // Running from 12:00:00 busy; progress at 12:00:30; no more. Timeout 600 s: detected at
    // 12:10:30. The time counted since the last progress moves: [12:00:30,12:10) = 570 s;
    // [12:10,12:11) is counted stalled at 12:11 (stalled then). End at 12:15:00:
    // [12:00:00,12:00:30) productive 30; stalled [12:00:30,12:15) = 870. 1 GPU.
    const auto t0 = *g::parse_rfc3339("2026-11-02T12:00:00Z");
    g::GoodputLedger ledger;
    g::GoodputCounter c({}, ledger);
    const int w = c.add_worker(t0, 0, 1);
    const g::HeldPart part{0, 1};
    ASSERT_TRUE(c.place(t0, w, {&part, 1}));
    ASSERT_TRUE(c.start(t0, w));
    ASSERT_TRUE(c.utilization_level(t0, w, 90));
    ASSERT_TRUE(c.progress(t0 + 30, w, 1));
    c.advance(t0 + 610);  // 12:10:10: not yet detected
    EXPECT_EQ(c.stalled_now(), 0);
    EXPECT_EQ(ledger.run_total(0).held_of(Category::Productive), 600);
    c.advance(t0 + 630);  // detected at 12:10:30
    EXPECT_EQ(c.stalled_now(), 1);
    EXPECT_EQ(ledger.run_total(0).held_of(Category::Productive), 30);
    EXPECT_EQ(ledger.run_total(0).held_of(Category::Stalled), 570);
    ASSERT_TRUE(c.end(t0 + 900, w));
    EXPECT_EQ(ledger.run_total(0).held_of(Category::Productive), 30);
    EXPECT_EQ(ledger.run_total(0).held_of(Category::Stalled), 870);
}

TEST(GoodputCounter, QuietMonthCostsHoursNotMinutes) {
    // 30 days running: 720 hour rows; a per-minute count would make 43,200 additions.
    g::GoodputLedger ledger;
    CountingSink sink(ledger);
    g::GoodputCounter c({}, sink);
    const int w = c.add_worker(0, 0, 8);
    const g::HeldPart part{0, 8};
    ASSERT_TRUE(c.place(0, w, {&part, 1}));
    ASSERT_TRUE(c.start(0, w));
    ASSERT_TRUE(c.utilization_level(0, w, 50));
    ASSERT_TRUE(c.end(30 * 86400, w));
    EXPECT_LE(sink.calls, 721);
    EXPECT_EQ(ledger.run_total(0).held_of(Category::Productive), 30LL * 86400 * 8);
    EXPECT_EQ(ledger.row_count(), 720u);
}

TEST(GoodputCounter, AdvanceEverySecondEqualsAdvanceAtTheEnd) {
    // advance(t) visits only the workers with a minute boundary or a stall detection <= t (the
    // service calls it before every change); skipping the others must change nothing. Stall
    // timeout 120 s; t0 = 10:00:00. 200 waiting workers (run i, 1 GPU, submitted at
    // t0 + i % 60, never placed) and R (run 1000, 2 GPUs): placed and started at t0, level 90 %,
    // progress at t0 + 5, none after: stalled from t0 + 5, detected at t0 + 125. All end at
    // t0 + 300. By hand: waiting i: (300 - i % 60) x 1 GPU; R: productive 5 x 2 = 10, stalled
    // 295 x 2 = 590. Counter A advances every second, B only at the end: equal ledgers, and A
    // sees the stall at t0 + 125, not before.
    constexpr astraeus::Seconds t0 = 1793613600;
    g::CounterConfig cfg;
    cfg.stall_timeout_s = 120;
    g::GoodputLedger la, lb;
    g::GoodputCounter a(cfg, la), b(cfg, lb);
    for (g::GoodputCounter* c : {&a, &b})
        for (int i = 0; i < 200; ++i) c->add_worker(t0 + i % 60, i, 1);
    const int ra = a.add_worker(t0, 1000, 2), rb = b.add_worker(t0, 1000, 2);
    const g::HeldPart part{0, 2};
    for (auto [c, w] : {std::pair{&a, ra}, std::pair{&b, rb}}) {
        ASSERT_TRUE(c->place(t0, w, {&part, 1}));
        ASSERT_TRUE(c->start(t0, w));
        ASSERT_TRUE(c->utilization_level(t0, w, 90));
    }
    for (astraeus::Seconds t = t0; t < t0 + 300; ++t) {
        if (t == t0 + 5) {
            ASSERT_TRUE(a.progress(t, ra, 1));
            ASSERT_TRUE(b.progress(t, rb, 1));
        }
        a.advance(t);
        EXPECT_EQ(a.stalled_now(), t >= t0 + 125 ? 1 : 0) << "at t0 + " << t - t0;
    }
    for (g::GoodputCounter* c : {&a, &b}) {
        c->advance(t0 + 300);
        for (int w = 0; w < c->workers(); ++w) ASSERT_TRUE(c->end(t0 + 300, w));
    }
    EXPECT_EQ(b.stalled_now(), 0);
    for (int i = 0; i < 200; ++i) {
        EXPECT_EQ(la.run_total(i).not_held_of(Category::Waiting), 300 - i % 60) << "run " << i;
        EXPECT_EQ(la.run_total(i), lb.run_total(i)) << "run " << i;
    }
    EXPECT_EQ(la.run_total(1000).held_of(Category::Productive), 10);
    EXPECT_EQ(la.run_total(1000).held_of(Category::Stalled), 590);
    EXPECT_EQ(la.run_total(1000), lb.run_total(1000));
    EXPECT_EQ(la.total(), lb.total());
    EXPECT_EQ(la.row_count(), lb.row_count());
}

TEST(GoodputLedger, PeriodsOver400DaysRejected) {
    EXPECT_TRUE(g::make_period(0, 400 * 86400));
    const auto bad = g::make_period(0, 401 * 86400);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("400 days"), std::string::npos);
    EXPECT_FALSE(g::make_period(10, 0));
    EXPECT_FALSE(g::parse_by("team"));
}

TEST(GoodputLedger, RunsOnOneMachine) {
    // Run 0 held 100 GPU-s on machine 1 and 50 on machine 2 (hour 0), run 1 30 on machine 1
    // (hour 1) and waited 40 (no machine), run 2 only machine 2. Machine 1 by run: {0: 100,
    // 1: 30}; over hour 1 only: {1: 30}; run 1 hidden: {0: 100}.
    g::GoodputLedger l;
    for (int r = 0; r < 3; ++r) l.set_run(r, 0, 0);
    l.add({0, 1, 0, Category::Productive, true, 100});
    l.add({0, 2, 0, Category::Idle, true, 50});
    l.add({1, 1, 3600, Category::Restart, true, 30});
    l.add({1, -1, 3600, Category::Waiting, false, 40});
    l.add({2, 2, 3600, Category::Productive, true, 70});
    const auto all = l.query_on_machine(1, {0, 7200});
    ASSERT_EQ(all.size(), 2U);
    EXPECT_EQ(all[0].id, 0);
    EXPECT_EQ(all[0].counts.held_of(Category::Productive), 100);
    EXPECT_EQ(all[0].counts.held_of(Category::Idle), 0);
    EXPECT_EQ(all[1].id, 1);
    EXPECT_EQ(all[1].counts.held_of(Category::Restart), 30);
    EXPECT_EQ(all[1].counts.not_held_of(Category::Waiting), 0);
    const auto later = l.query_on_machine(1, {3600, 7200});
    ASSERT_EQ(later.size(), 1U);
    EXPECT_EQ(later[0].id, 1);
    const auto hidden = l.query_on_machine(1, {0, 7200}, [](int r) { return r != 1; });
    ASSERT_EQ(hidden.size(), 1U);
    EXPECT_EQ(hidden[0].id, 0);
}

namespace {
/// Forwards everything to a ledger and counts the not-held Deltas (waits) it was sent.
class WaitCountingSink : public g::DeltaSink {
public:
    explicit WaitCountingSink(g::GoodputLedger& l) : ledger(l) {}
    void add(const g::Delta& d) override {
        waits += d.held ? 0 : 1;
        ledger.add(d);
    }
    void open_wait(const g::OpenWait& o) override { ledger.open_wait(o); }
    void close_wait(int w) override { ledger.close_wait(w); }
    void counted_to(astraeus::Seconds b) override { ledger.counted_to(b); }
    g::GoodputLedger& ledger;
    long waits = 0;
};
}  // namespace

TEST(GoodputCounter, OpenWaitsShowWhatMinuteCountsShowWithARowPerHourNotPerMinute) {
    // Counter A counts every minute; B keeps waits open (CounterConfig::open_waits). t0 =
    // 10:00:00. Run 0 (2 GPUs) submitted 10:00:30, placed 11:01:40, started 11:01:50 (level
    // 90 %), ended 11:03:00. Run 1 (1 GPU) submitted 10:00:10, placed 10:01:40, failed 10:02:10,
    // released 10:02:30, waits (failure, not held) to the end; advance every 10 s to 12:00:05.
    // By hand, read at 11:00:05 (counted to 11:00): run 0 waiting 3570 s x 2 = 7140; run 1
    // waiting 90, starting 30, failure held 20, not held 10:02:30-11:00 = 3450.
    // At 12:00:05 (counted to 12:00): run 0 waiting hour 10: 7140, hour 11: 100 s x 2 = 200;
    // starting 20, productive 140; run 1 failure not held hour 10: 3450, hour 11: 3600.
    // Both ledgers equal at every step. B sends 6 not-held Deltas: run 1's waiting
    // 10:00:10-10:01 at its placement and 10:01-10:01:40 at the 10:02 count, its failure wait
    // 10:02:30-10:03 at the 10:03 count (then open); run 0's waiting 10:00:30-11:00 and
    // 11:00-11:01 at its placement (split at the hour), 11:01-11:01:40 at the 11:02 count. A
    // sends one per waiting worker and minute (run 0: 62, run 1: 2 + 118).
    // At run 1's end (12:00:05): 10:03-11:00, 11:00-12:00 and 12:00-12:00:05, 3 more; its
    // failure wait in all 10:02:30-12:00:05 = 7055 s.
    constexpr astraeus::Seconds t0 = 1793613600;
    g::CounterConfig open;
    open.open_waits = true;
    g::GoodputLedger la, lb;
    WaitCountingSink sa(la), sb(lb);
    g::GoodputCounter a({}, sa), b(open, sb);
    const g::HeldPart part{0, 2}, one{0, 1};
    for (g::GoodputCounter* c : {&a, &b}) {
        ASSERT_EQ(c->add_worker(t0 + 30, 0, 2), 0);
        ASSERT_EQ(c->add_worker(t0 + 10, 1, 1), 1);
    }
    EXPECT_TRUE(b.open(0));
    EXPECT_FALSE(a.open(0));
    auto hour_of = [](const g::GoodputLedger& l, int run, astraeus::Seconds h, Category k) {
        for (const auto& r : l.query(g::By::Run, {h, h + 3600}))
            if (r.id == run) return r.counts.not_held_of(k);
        return astraeus::GpuSeconds{0};
    };
    for (astraeus::Seconds t = t0; t <= t0 + 7205; t += 5) {
        for (g::GoodputCounter* c : {&a, &b}) {
            c->advance(t);
            if (t == t0 + 100) { ASSERT_TRUE(c->place(t, 1, {&one, 1})); }
            if (t == t0 + 130) { ASSERT_TRUE(c->fail(t, 1)); }
            if (t == t0 + 150) { ASSERT_TRUE(c->release(t, 1)); }
            if (t == t0 + 3700) { ASSERT_TRUE(c->place(t, 0, {&part, 1})); }
            if (t == t0 + 3710) {
                ASSERT_TRUE(c->start(t, 0));
                ASSERT_TRUE(c->utilization_level(t, 0, 90));
            }
            if (t == t0 + 3780) { ASSERT_TRUE(c->end(t, 0)); }
        }
        for (int run : {0, 1}) ASSERT_EQ(la.run_total(run), lb.run_total(run)) << "run " << run << " at t0 + " << t - t0;
        if (t == t0 + 3605) {
            EXPECT_EQ(lb.run_total(0).not_held_of(Category::Waiting), 7140);
            EXPECT_EQ(lb.run_total(1).not_held_of(Category::Waiting), 90);
            EXPECT_EQ(lb.run_total(1).held_of(Category::Starting), 30);
            EXPECT_EQ(lb.run_total(1).held_of(Category::Failure), 20);
            EXPECT_EQ(lb.run_total(1).not_held_of(Category::Failure), 3450);
        }
    }
    for (const g::GoodputLedger* l : {&la, &lb}) {
        EXPECT_EQ(hour_of(*l, 0, t0, Category::Waiting), 7140);
        EXPECT_EQ(hour_of(*l, 0, t0 + 3600, Category::Waiting), 200);
        EXPECT_EQ(l->run_total(0).held_of(Category::Starting), 20);
        EXPECT_EQ(l->run_total(0).held_of(Category::Productive), 140);
        EXPECT_EQ(hour_of(*l, 1, t0, Category::Failure), 3450);
        EXPECT_EQ(hour_of(*l, 1, t0 + 3600, Category::Failure), 3600);
    }
    EXPECT_EQ(lb.open_waits(), 1u);  // run 1's
    EXPECT_TRUE(b.open(1));
    EXPECT_EQ(sb.waits, 6);
    EXPECT_EQ(sa.waits, 62 + 2 + 118);
    // Its end counts the open wait, in 3 Deltas.
    ASSERT_TRUE(b.end(t0 + 7205, 1));
    ASSERT_TRUE(a.end(t0 + 7205, 1));
    EXPECT_EQ(lb.open_waits(), 0u);
    EXPECT_EQ(sb.waits, 9);
    EXPECT_EQ(la.run_total(1), lb.run_total(1));
    EXPECT_EQ(lb.run_total(1).not_held_of(Category::Failure), 7055);
}

TEST(GoodputLedger, AnOpenWaitIsItsHoursUpToTheCount) {
    // Worker 7 of run 3 waits from 10:16:40 with 4 GPUs (first wait); the count stands at
    // 11:10: hour 10 has 2600 s x 4 = 10400, hour 11 600 s x 4 = 2400, 12800 in all; no
    // machine row (not held). Closed: nothing.
    constexpr astraeus::Seconds t0 = 1793613600;
    g::GoodputLedger l;
    l.set_run(3, 1, 0);
    l.open_wait({7, 3, t0 + 1000, Category::Waiting, 4});
    l.counted_to(t0 + 4200);
    EXPECT_EQ(l.query(g::By::Run, {t0, t0 + 3600}).at(0).counts.not_held_of(Category::Waiting), 10400);
    EXPECT_EQ(l.query(g::By::Workspace, {t0 + 3600, t0 + 7200}).at(0).counts.not_held_of(Category::Waiting), 2400);
    EXPECT_EQ(l.run_total(3).not_held_of(Category::Waiting), 12800);
    EXPECT_EQ(l.total().not_held_of(Category::Waiting), 12800);
    EXPECT_TRUE(l.query(g::By::Machine, {t0, t0 + 7200}).empty());
    EXPECT_EQ(l.row_count(), 0u);
    l.close_wait(7);
    EXPECT_EQ(l.run_total(3).not_held_of(Category::Waiting), 0);
    EXPECT_EQ(l.open_waits(), 0u);
}
