// The service's per-workspace indexes (runs per workspace, the live runs, the ledger's runs per
// workspace) against a pass over every run, on random submissions, starts, ends, stops and
// restarts in three workspaces: Service::index_mismatch after every step, and each workspace's
// answers (GET /runs, GET /goodput by=workspace and by=run, served from its own runs) equal to
// the org admin's answers over every run, kept to that workspace's rows.
#include <gtest/gtest.h>

#include <random>

#include "scripted_service.hpp"

using namespace scripted_service;

namespace {

json only_workspace(const json& rows, const std::string& ws) {
    json out = json::array();
    for (const auto& r : rows)
        if (r.at("workspace") == ws) out.push_back(r);
    return out;
}

// A list's runs without their forecast (published by the forecaster's thread between two calls).
json without_forecast(json runs) {
    for (auto& r : runs) {
        r.erase("estimated_start");
        r.erase("position");
    }
    return runs;
}

}  // namespace

TEST(ServiceWorkspaceIndexes, AWorkspacesListsAndGoodputEqualAPassOverEveryRun) {
    Harness x;  // one machine of 8 GPUs: most runs wait
    std::vector<svc::Caller> ws{x.caller(), x.add_workspace("cv"), x.add_workspace("nlp")};
    const std::vector<std::string> names{"ml", "cv", "nlp"};
    std::vector<std::pair<int, std::string>> submitted;  // (workspace, run name)
    std::mt19937 rng(11);
    const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    Seconds t = T0;
    std::set<std::int64_t> started, ended;
    int checks = 0, listed = 0;
    for (int step = 0; step < 240; ++step) {
        t += static_cast<Seconds>(pick(90));
        const std::size_t op = pick(10);
        if (op < 5) {
            const std::size_t k = pick(ws.size());
            const std::string name = "r" + std::to_string(step);
            json b{{"name", name}, {"workers", 1}, {"gpus_per_worker", 1 + pick(4)}};
            ASSERT_TRUE(x.service().submit(ws[k], b.dump())) << name;
            submitted.push_back({static_cast<int>(k), name});
        } else if (op < 7) {
            for (const auto& l : x.script().launched)
                if (started.insert(l.run.run).second) x.emit(K::Started, t, l.run.run, 90);
        } else if (op < 8 && !started.empty()) {
            auto it = started.begin();
            std::advance(it, static_cast<std::ptrdiff_t>(pick(started.size())));
            if (ended.insert(*it).second) x.emit(K::Finished, t, *it);
        } else if (op < 9 && !submitted.empty()) {
            const auto& [k, name] = submitted[pick(submitted.size())];
            (void)x.service().stop_run(ws[static_cast<std::size_t>(k)], name, {});
        } else if (step % 3 == 0) {
            x.restart_at(t);
        }
        x.at(t);
        ASSERT_EQ(x.service().index_mismatch(), "") << "step " << step;
        if (step % 12 != 11) continue;
        ++checks;
        for (std::size_t k = 0; k < ws.size(); ++k) {
            for (const char* state : {"", "pending", "running", "succeeded"}) {
                svc::Params q{{"limit", "1000"}};
                if (*state) q["state"] = state;
                auto own = x.service().list_runs(ws[k], q);
                auto all = x.service().list_runs(x.admin(), q);
                q["workspace"] = names[k];
                auto named = x.service().list_runs(x.admin(), q);
                ASSERT_TRUE(own && all && named);
                const json want = without_forecast(only_workspace(all->at("runs"), names[k]));
                EXPECT_EQ(without_forecast(own->at("runs")), want) << names[k] << " " << state;
                EXPECT_EQ(without_forecast(named->at("runs")), want) << names[k] << " " << state;
                EXPECT_EQ(own->at("matches"), want.size());
                listed += static_cast<int>(want.size());
            }
            for (const char* days : {"1", "7"}) {
                auto own = x.service().goodput(ws[k], {{"by", "workspace"}, {"days", days}});
                auto all = x.service().goodput(x.admin(), {{"by", "workspace"}, {"days", days}});
                ASSERT_TRUE(own && all);
                EXPECT_EQ(own->at("rows"), only_workspace(all->at("rows"), names[k])) << names[k];
                auto own_runs = x.service().goodput(ws[k], {{"by", "run"}, {"days", days}});
                auto all_runs = x.service().goodput(x.admin(), {{"by", "run"}, {"days", days}});
                ASSERT_TRUE(own_runs && all_runs);
                EXPECT_EQ(own_runs->at("rows"), only_workspace(all_runs->at("rows"), names[k])) << names[k];
            }
        }
    }
    EXPECT_EQ(checks, 20);
    EXPECT_GT(listed, 500);
    EXPECT_FALSE(started.empty());
    EXPECT_FALSE(ended.empty());
}
