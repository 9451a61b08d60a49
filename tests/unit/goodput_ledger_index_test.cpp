// The goodput ledger's indexes (sums per workspace, machine and pool and hour, open waits
// grouped by start, runs per workspace) against a model kept in the test: every count and open
// wait as it arrived, summed by a plain pass at each check. Random rows, waits opened and
// closed, the count's boundary moved, runs moved to another workspace, hours pruned: a sum or a
// group not kept in step with any of these makes a check fail.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <sstream>
#include <vector>

#include "astraeus/goodput/calendar.hpp"
#include "astraeus/goodput/ledger.hpp"

namespace g = astraeus::goodput;
using astraeus::GpuSeconds;
using astraeus::kHour;
using astraeus::Seconds;

namespace {

struct Model {
    struct RunDecl {
        int workspace = -1, pool = -1;
    };
    std::map<int, RunDecl> runs;
    std::vector<g::Delta> deltas;
    std::map<int, g::OpenWait> open;  // worker -> its open wait
    Seconds counted_to = 0;

    int key(g::By by, int run, int machine, bool held) const {
        const auto it = runs.find(run);
        const RunDecl d = it == runs.end() ? RunDecl{} : it->second;
        switch (by) {
            case g::By::Workspace: return d.workspace;
            case g::By::Run: return run;
            case g::By::Machine: return held ? machine : -1;
            case g::By::Pool: return d.pool;
        }
        return -1;
    }
    bool in(int run, int workspace) const {
        if (workspace == g::kAllWorkspaces) return true;
        const auto it = runs.find(run);
        return it != runs.end() && it->second.workspace == workspace;
    }
    // Rows of `by` over p for the runs of `workspace` (or of machine `machine` by run when
    // machine >= 0): every count, then every open wait's seconds per hour up to counted_to.
    std::vector<g::Row> rows(g::By by, const g::Period& p, int workspace, int machine = -1) const {
        std::map<int, g::Counts> acc;
        const Seconds from = g::hour_start(p.start_s);
        for (const g::Delta& d : deltas) {
            if (!in(d.run, workspace) || d.hour < from || d.hour >= p.end_s) continue;
            if (machine >= 0 && d.machine != machine) continue;
            const int id = key(by, d.run, d.machine, d.held);
            if (id >= 0) acc[id].add(d.category, d.held, d.gpu_s);
        }
        if (machine < 0)
            for (const auto& [w, o] : open) {
                if (!in(o.run, workspace)) continue;
                const int id = key(by, o.run, -1, false);
                if (id < 0) continue;
                for (Seconds h = g::hour_start(o.from_s); h < counted_to; h += kHour) {
                    const Seconds secs = std::min(counted_to, h + kHour) - std::max(o.from_s, h);
                    if (secs <= 0 || h < from || h >= p.end_s) continue;
                    acc[id].add(o.category, false, GpuSeconds{o.gpus} * secs);
                }
            }
        std::vector<g::Row> out;
        for (const auto& [id, c] : acc) out.push_back({id, c});
        return out;
    }
};

std::string show(const std::vector<g::Row>& rows) {
    std::ostringstream s;
    for (const auto& r : rows) {
        s << r.id << ':';
        for (auto v : r.counts.held) s << ' ' << v;
        s << " |";
        for (auto v : r.counts.not_held) s << ' ' << v;
        s << " u" << r.counts.unmeasured << '\n';
    }
    return s.str();
}

bool same(const std::vector<g::Row>& a, const std::vector<g::Row>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].id != b[i].id || !(a[i].counts == b[i].counts)) return false;
    return true;
}

}  // namespace

TEST(GoodputLedgerIndex, QueriesEqualAFullPassOverRandomRowsWaitsMovesAndPrunes) {
    constexpr Seconds kBase = 1'700'000'000 / kHour * kHour;
    constexpr int kRuns = 80, kWorkspaces = 4, kPools = 3, kMachines = 6, kWorkers = 60;
    constexpr Seconds kSpan = 12'000 * kHour;  // 500 days: prunes drop some hours
    for (unsigned seed = 1; seed <= 6; ++seed) {
        std::mt19937_64 rng(seed);
        const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
        g::GoodputLedger l;
        Model m;
        for (int r = 0; r < kRuns; ++r) {
            if (pick(10) == 0) continue;  // some runs never declared (workspace -1)
            const Model::RunDecl d{pick(kWorkspaces), pick(kPools)};
            l.set_run(r, d.workspace, d.pool);
            m.runs[r] = d;
        }
        int checks = 0;
        for (int step = 0; step < 3000; ++step) {
            const int op = pick(100);
            if (op < 45) {
                const g::Delta d{pick(kRuns), pick(kMachines), kBase + pick(12'000) * kHour,
                                 static_cast<g::Category>(pick(g::kCategories + 1)), pick(2) == 0,
                                 static_cast<GpuSeconds>(pick(5000)) - 500};
                l.add(d);
                m.deltas.push_back(d);
                if (pick(3) == 0) {  // the same key again (merged into its row)
                    l.add(d);
                    m.deltas.push_back(d);
                }
            } else if (op < 70) {
                const g::OpenWait o{pick(kWorkers), pick(kRuns), kBase + pick(12'000 * 60) * 60 + pick(60),
                                    static_cast<g::Category>(pick(g::kCategories)), pick(9)};
                l.open_wait(o);
                m.open.erase(o.worker);
                m.open[o.worker] = o;
            } else if (op < 85) {
                const int w = pick(kWorkers);
                l.close_wait(w);
                m.open.erase(w);
            } else if (op < 93) {
                m.counted_to = kBase + pick(12'000 * 60) * 60;
                l.counted_to(m.counted_to);
            } else if (op < 97) {
                const int r = pick(kRuns);  // declared again: another workspace or pool
                const Model::RunDecl d{pick(kWorkspaces), pick(kPools)};
                l.set_run(r, d.workspace, d.pool);
                m.runs[r] = d;
            } else if (op < 98) {
                const Seconds now = kBase + kSpan / 2 + pick(12'000) * kHour / 2;
                l.prune(now);
                const Seconds keep = g::hour_start(now - g::kRetention);
                std::erase_if(m.deltas, [&](const g::Delta& d) { return d.hour < keep; });
            }
            if (step % 150 != 149) continue;
            ++checks;
            for (int k = 0; k < 4; ++k) {
                Seconds a = kBase + pick(12'000) * kHour + pick(3600) - kHour;
                Seconds b = kBase + pick(12'000) * kHour + pick(3600);
                if (a > b) std::swap(a, b);
                if (k == 0) a = kBase - kHour, b = kBase + kSpan + kHour;  // everything
                const g::Period p{a, b};
                for (const g::By by : {g::By::Workspace, g::By::Run, g::By::Machine, g::By::Pool}) {
                    for (int ws = g::kAllWorkspaces; ws <= kWorkspaces; ++ws) {
                        const auto want = m.rows(by, p, ws);
                        const auto got = l.query(by, p, ws);
                        ASSERT_TRUE(same(got, want)) << "seed " << seed << " step " << step << " by "
                                                     << g::to_string(by) << " ws " << ws << "\nindexed:\n"
                                                     << show(got) << "model:\n" << show(want);
                        if (ws == g::kAllWorkspaces) {
                            ASSERT_TRUE(same(l.query(by, p), want)) << "unfiltered, by " << g::to_string(by);
                        } else {
                            const auto scanned = l.query(by, p, [&](int r) { return l.workspace_of(r) == ws; });
                            ASSERT_TRUE(same(scanned, want)) << "filtered pass, by " << g::to_string(by);
                        }
                    }
                }
                for (int mach = 0; mach < kMachines; ++mach)
                    for (int ws = g::kAllWorkspaces; ws <= kWorkspaces; ++ws)
                        ASSERT_TRUE(same(l.query_on_machine(mach, p, ws), m.rows(g::By::Run, p, ws, mach)))
                            << "machine " << mach << " ws " << ws;
            }
            for (int ws = 0; ws <= kWorkspaces; ++ws) {
                std::vector<int> want;
                for (const auto& [r, d] : m.runs)
                    if (d.workspace == ws) want.push_back(r);
                ASSERT_EQ(l.runs_of(ws), want) << "ws " << ws;
            }
        }
        EXPECT_EQ(checks, 20);
        EXPECT_GT(l.open_waits(), 0u);
    }
}

TEST(GoodputLedgerIndex, WeeklyPerWorkspaceEqualsTheFilteredWeekly) {
    constexpr Seconds kBase = 1'700'000'000 / kHour * kHour;
    std::mt19937_64 rng(7);
    g::GoodputLedger l;
    for (int r = 0; r < 30; ++r) l.set_run(r, r % 3, r % 2);
    for (int i = 0; i < 400; ++i)
        l.add({static_cast<int>(rng() % 30), static_cast<int>(rng() % 4),
               kBase + static_cast<Seconds>(rng() % 2000) * kHour, g::Category::Productive, true, 3600});
    for (int w = 0; w < 10; ++w) l.open_wait({w, w, kBase + 1000 * kHour + w * 777, g::Category::Waiting, 2});
    l.counted_to(kBase + 1900 * kHour + 1800);
    for (const g::By by : {g::By::Workspace, g::By::Pool, g::By::Machine, g::By::Run})
        for (int ws = g::kAllWorkspaces; ws < 3; ++ws) {
            const auto a = l.weekly(by, kBase + 1990 * kHour, 12, ws);
            const g::RunFilter f = ws < 0 ? g::RunFilter{[](int) { return true; }}
                                          : g::RunFilter{[&](int r) { return l.workspace_of(r) == ws; }};
            const auto b = l.weekly(by, kBase + 1990 * kHour, 12, f);
            ASSERT_TRUE(a && b);
            ASSERT_EQ(a->size(), b->size());
            std::size_t rows = 0;
            for (std::size_t k = 0; k < a->size(); ++k) {
                EXPECT_TRUE(same((*a)[k].rows, (*b)[k].rows)) << g::to_string(by) << " ws " << ws << " week " << k;
                rows += (*a)[k].rows.size();
            }
            EXPECT_GT(rows, 0u);
        }
}
