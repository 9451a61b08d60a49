// `astra` against a fake server (cpp-httplib on 127.0.0.1, a random port) that answers canned
// contract JSON (built with the same goodput_io functions the server uses): the printed tables
// byte for byte, the requests sent, exit codes and messages.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "astraeus/client/api_client.hpp"
#include "astraeus/client/astra_cli.hpp"
#include "astraeus/client/render.hpp"
#include "astraeus/goodput_io/ledger_json.hpp"

namespace {

using astraeus::goodput::Category;
using astraeus::goodput::Counts;
using nlohmann::json;

// The page's example, its per-row slip corrected (spec/goodput.md "Known slip"): llm START 0.0,
// sweep-7 START 9.8. GPU-hours x 3600 = GPU-seconds.
Counts llm_counts() {
    Counts c;
    c.add(Category::Productive, true, 1080360);  // 300.1 h
    c.add(Category::Stalled, true, 22320);       //   6.2 h
    c.add(Category::Restart, true, 14760);       //   4.1 h
    c.add(Category::Failure, true, 45720);       //  12.7 h  -> held 323.1 h, 300.1/323.1 = 93 %
    return c;
}
Counts sweep_counts() {
    Counts c;
    c.add(Category::Productive, true, 404640);  // 112.4 h
    c.add(Category::Idle, true, 75600);         //  21.0 h
    c.add(Category::Starting, true, 35280);     //   9.8 h
    c.add(Category::Preemption, true, 11880);   //   3.3 h -> held 146.5 h, 112.4/146.5 = 77 %
    c.add(Category::Waiting, false, 64800);     //  18.0 h waiting
    return c;
}

const std::string kHeader =
    "GPU-hours\n"
    "RUN                              HELD     USED GOODPUT    IDLE STALLED   START RESTART FAILURE PREEMPT WAITING\n";
const std::string kFooter =
    "\nUSED = productive (running, GPUs busy); GOODPUT = used / held; WAITING = asked for, not yet held\n";
const std::string kLlmLine =
    "llm                             323.1    300.1     93%     0.0     6.2     0.0     4.1    12.7     0.0     0.0\n";
// TOTAL is the page's line verbatim (469.6 = 323.1 + 146.5; 412.5 / 469.6 = 88 %).
const std::string kPageTable =
    kHeader + kLlmLine +
    "sweep-7                         146.5    112.4     77%    21.0     0.0     9.8     0.0     0.0     3.3    18.0\n"
    "TOTAL                           469.6    412.5     88%    21.0     6.2     9.8     4.1    12.7     3.3    18.0\n" +
    kFooter;

json run_object(const std::string& name, const std::string& state, const std::string& reason) {
    json r{{"name", name},          {"workspace", "ml"},
           {"pool", "default"},     {"workers", 2},
           {"gpus_per_worker", 8},  {"state", state},
           {"submitted_at", "2026-11-29T10:00:00Z"},
           {"time_limit_s", 7200},  {"command", "python train.py"},
           {"attempts", 1}};
    if (!reason.empty()) r["reason"] = reason;
    json workers = json::array();
    for (int i = 0; i < 2; ++i) {
        json w{{"index", i}, {"state", state == "running" ? "running" : "waiting"}, {"attempt", 1}};
        if (state == "running") {
            w["machine"] = "m-000" + std::to_string(i);
        }
        workers.push_back(w);
    }
    r["worker_list"] = workers;
    if (state == "running") r["started_at"] = "2026-11-29T10:01:05Z";
    return r;
}

// A fake Astraeus API on 127.0.0.1 (random port). Records every request it gets.
class FakeServer {
public:
    struct Seen {
        std::string method, path, query, auth, body;
    };

    FakeServer() {
        const auto record = [this](const httplib::Request& req) {
            std::lock_guard lock(mu_);
            std::string q;
            for (const auto& [k, v] : req.params) q += (q.empty() ? "" : "&") + k + "=" + v;
            seen_.push_back({req.method, req.path, q, req.get_header_value("Authorization"),
                             req.body});
        };
        const auto json_reply = [](httplib::Response& res, int status, const json& j) {
            res.status = status;
            res.set_content(j.dump(), "application/json");
        };
        svr_.Get("/v1/goodput", [=](const httplib::Request& req, httplib::Response& res) {
            record(req);
            if (req.get_header_value("Authorization") != "Bearer astx_good")
                return json_reply(res, 401, {{"error", "missing or invalid token"}});
            if (req.get_param_value("by") == "machine")
                return json_reply(res, 500, {{"error", "database is locked"}});
            json doc = astraeus::goodput::rows_json(
                req.get_param_value("by"), 1795651200, 1796256000,  // 2026-11-22..29
                {{"llm", llm_counts()}, {"sweep-7", sweep_counts()}});
            json_reply(res, 200, doc);
        });
        svr_.Get("/v1/goodput/weekly", [=](const httplib::Request& req, httplib::Response& res) {
            record(req);
            Counts c;
            c.add(Category::Productive, true, 36000);  // 10.0 h
            c.add(Category::Idle, true, 3600);         //  1.0 h -> held 11.0, 10/11 = 91 %
            json w47 = astraeus::goodput::rows_json("pool", 0, 0, {{"default", c}});
            json w48 = astraeus::goodput::rows_json("pool", 0, 0, {});
            json doc{{"by", "pool"},
                     {"weeks",
                      {{{"week", "2026-W47"},
                        {"start", "2026-11-16T00:00:00Z"},
                        {"end", "2026-11-23T00:00:00Z"},
                        {"rows", w47["rows"]},
                        {"total", w47["total"]}},
                       {{"week", "2026-W48"},
                        {"start", "2026-11-23T00:00:00Z"},
                        {"end", "2026-11-29T12:00:00Z"},
                        {"rows", w48["rows"]},
                        {"total", w48["total"]}}}}};
            json_reply(res, 200, doc);
        });
        svr_.Get(R"(/v1/runs/([^/]+)/goodput)",
                 [=](const httplib::Request& req, httplib::Response& res) {
                     record(req);
                     if (req.matches[1] != "llm")
                         return json_reply(res, 404, {{"error", "no run named 'nope'"}});
                     json doc{{"run", "llm"}, {"workspace", "ml"}};
                     doc.update(astraeus::goodput::ledger_json(llm_counts()));
                     json_reply(res, 200, doc);
                 });
        svr_.Get("/v1/runs", [=](const httplib::Request& req, httplib::Response& res) {
            record(req);
            json_reply(res, 200,
                       {{"runs",
                         {run_object("sweep-7", "pending", "waiting for quota"),
                          run_object("llm", "running", "")}}});
        });
        svr_.Post("/v1/runs", [=](const httplib::Request& req, httplib::Response& res) {
            record(req);
            const json body = json::parse(req.body, nullptr, false);
            if (body.is_discarded()) return json_reply(res, 400, {{"error", "malformed JSON"}});
            if (!body.contains("command"))  // as the service whose executor runs commands
                return json_reply(res, 400, {{"error", "'command' is required: an argv array (or a string, "
                                                       "run as /bin/sh -c STRING)"}});
            json_reply(res, 201, run_object(body.value("name", ""), "pending",
                                            "no placement for 2 x 8 GPUs"));
        });
        svr_.Get(R"(/v1/runs/([^/]+))", [=](const httplib::Request& req, httplib::Response& res) {
            record(req);
            if (req.matches[1] == "done") return json_reply(res, 200, run_object("done", "succeeded", ""));
            if (req.matches[1] != "llm") return json_reply(res, 404, {{"error", "no run named 'x'"}});
            json_reply(res, 200, run_object("llm", "running", ""));
        });
        svr_.Post(R"(/v1/runs/([^/]+)/stop)",
                  [=](const httplib::Request& req, httplib::Response& res) {
                      record(req);
                      json_reply(res, 202, run_object(req.matches[1], "stopping", ""));
                  });
        svr_.Get("/v1/alerts", [=, this](const httplib::Request& req, httplib::Response& res) {
            record(req);
            std::lock_guard lock(mu_);
            json_reply(res, alerts_status_, alerts_);
        });
        port_ = svr_.bind_to_any_port("127.0.0.1");
        thread_ = std::thread([this] { svr_.listen_after_bind(); });
        for (int i = 0; i < 2000 && !svr_.is_running(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~FakeServer() {
        svr_.stop();
        thread_.join();
    }
    std::string api() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
    std::vector<Seen> seen() {
        std::lock_guard lock(mu_);
        return seen_;
    }
    void set_alerts(int status, json alerts) {
        std::lock_guard lock(mu_);
        alerts_status_ = status;
        alerts_ = std::move(alerts);
    }

private:
    httplib::Server svr_;
    int port_ = 0;
    std::thread thread_;
    std::mutex mu_;
    std::vector<Seen> seen_;
    int alerts_status_ = 200;
    json alerts_ = {{"alerts", json::array()}};
};

struct Outcome {
    int rc;
    std::string out, err;
};

Outcome astra(const std::vector<std::string>& args, const std::string& api,
              const char* token = "astx_good") {
    std::vector<const char*> argv{"astra"};
    for (const auto& a : args) argv.push_back(a.c_str());
    std::ostringstream out, err;
    const int rc = astraeus::client::run_astra(static_cast<int>(argv.size()), argv.data(),
                                               api.empty() ? nullptr : api.c_str(), token, out,
                                               err);
    return {rc, out.str(), err.str()};
}

class AstraTest : public ::testing::Test {
protected:
    FakeServer server;
};

TEST_F(AstraTest, GoodputByRunPrintsThePageTable) {
    const auto r = astra({"astraeus", "goodput", "--by", "run", "--days", "7"}, server.api());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, kPageTable);
    const auto seen = server.seen();
    ASSERT_EQ(seen.size(), 2u);  // the view, then its alerts (none)
    EXPECT_EQ(seen[0].method, "GET");
    EXPECT_EQ(seen[0].path, "/v1/goodput");
    EXPECT_EQ(seen[0].query, "by=run&days=7");
    EXPECT_EQ(seen[0].auth, "Bearer astx_good");
    EXPECT_EQ(seen[1].path, "/v1/alerts");
    EXPECT_EQ(seen[1].auth, "Bearer astx_good");
}

TEST_F(AstraTest, AlertsComeFirst) {
    server.set_alerts(200, json::parse(R"({"alerts": [
        {"name": "goodput_drop", "scope": "pool", "target": "default", "state": "firing",
         "since": "2026-11-29T10:00:00Z", "value": 0.3125},
        {"name": "workers_stalled", "scope": "cluster", "target": "main", "state": "pending",
         "since": "2026-11-29T10:05:00Z", "value": 6}]})"));
    const auto r = astra({"astraeus", "goodput", "--by", "run"}, server.api());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out,
              "ALERTS\n"
              "NAME             SCOPE    TARGET   STATE    SINCE                 VALUE\n"
              "goodput_drop     pool     default  firing   2026-11-29T10:00:00Z  0.31\n"
              "workers_stalled  cluster  main     pending  2026-11-29T10:05:00Z  6\n"
              "\n" +
                  kPageTable);
    // --json: the server's JSON only; --run: the run's table only.
    EXPECT_EQ(astra({"astraeus", "goodput", "--json"}, server.api()).out.find("ALERTS"),
              std::string::npos);
    EXPECT_EQ(astra({"astraeus", "goodput", "--run", "llm"}, server.api()).out.find("ALERTS"),
              std::string::npos);
}

TEST_F(AstraTest, AlertsUnavailableStillPrintsTheView) {
    server.set_alerts(500, {{"error", "boom"}});
    const auto r = astra({"astraeus", "goodput", "--by", "run"}, server.api());
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.out, kPageTable);
    EXPECT_EQ(r.err, "astra: alerts not shown: HTTP 500: boom\n");
}

TEST_F(AstraTest, GoodputStartEndAndDefaultBy) {
    const auto r = astra({"astraeus", "goodput", "--start", "2026-10-01T00:00:00Z", "--end",
                          "2026-10-08T00:00:00+02:00"},
                         server.api());
    EXPECT_EQ(r.rc, 0) << r.err;
    // by=workspace: the same rows under a WORKSPACE header.
    EXPECT_EQ(r.out.substr(0, r.out.find("HELD") + 4),
              "GPU-hours\nWORKSPACE" + std::string(24, ' ') + "HELD");
    const auto seen = server.seen();
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].query, "by=workspace&end=2026-10-08T00:00:00+02:00&start=2026-10-01T00:00:00Z");
}

TEST_F(AstraTest, GoodputDaysBeforeEnd) {
    const auto r = astra({"astraeus", "goodput", "--days", "30", "--end", "2026-11-01T00:00:00Z"},
                         server.api());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(server.seen().at(0).query, "by=workspace&days=30&end=2026-11-01T00:00:00Z");
}

TEST_F(AstraTest, GoodputJsonIsTheServersBodyAsIs) {
    const auto r = astra({"astraeus", "goodput", "--by", "run", "--json"}, server.api());
    EXPECT_EQ(r.rc, 0);
    const json expected = astraeus::goodput::rows_json(
        "run", 1795651200, 1796256000, {{"llm", llm_counts()}, {"sweep-7", sweep_counts()}});
    EXPECT_EQ(r.out, expected.dump() + "\n");
}

TEST_F(AstraTest, WeeksPrintOneBlockPerWeek) {
    const auto r = astra({"astraeus", "goodput", "--weeks", "8", "--by", "pool"}, server.api());
    EXPECT_EQ(r.rc, 0) << r.err;
    const std::string pool_header =
        "GPU-hours\n"
        "POOL                             HELD     USED GOODPUT    IDLE STALLED   START RESTART FAILURE PREEMPT WAITING\n";
    const std::string expected =
        "Week 2026-W47 (from 2026-11-16)\n" + pool_header +
        "default                          11.0     10.0     91%     1.0     0.0     0.0     0.0     0.0     0.0     0.0\n"
        "TOTAL                            11.0     10.0     91%     1.0     0.0     0.0     0.0     0.0     0.0     0.0\n" +
        kFooter + "\nWeek 2026-W48 (from 2026-11-23)\n" + pool_header +
        "TOTAL                             0.0      0.0       -     0.0     0.0     0.0     0.0     0.0     0.0     0.0\n" +
        kFooter;
    EXPECT_EQ(r.out, expected);
    EXPECT_EQ(server.seen().at(0).query, "by=pool&weeks=8");
    EXPECT_EQ(server.seen().at(0).path, "/v1/goodput/weekly");
}

TEST_F(AstraTest, RunPrintsItsOneRowTable) {
    const auto r = astra({"astraeus", "goodput", "--run", "llm"}, server.api());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, kHeader + kLlmLine +
                         "TOTAL                           323.1    300.1     93%     0.0     6.2     "
                         "0.0     4.1    12.7     0.0     0.0\n" +
                         kFooter);
    EXPECT_EQ(server.seen().at(0).path, "/v1/runs/llm/goodput");
}

TEST_F(AstraTest, UnknownRunIs404Exit2WithTheServersMessage) {
    const auto r = astra({"astraeus", "goodput", "--run", "nope"}, server.api());
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "astra: HTTP 404: no run named 'nope'\n");
}

TEST_F(AstraTest, BadTokenIs401Exit2) {
    const auto r = astra({"astraeus", "goodput"}, server.api(), "astx_bad");
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "astra: HTTP 401: missing or invalid token\n");
}

TEST_F(AstraTest, ServerErrorIsExit1) {
    const auto r = astra({"astraeus", "goodput", "--by", "machine"}, server.api());
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "astra: HTTP 500: database is locked\n");
}

TEST_F(AstraTest, RunsListIsAReadableTable) {
    const auto r = astra({"runs", "list"}, server.api());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out,
              "NAME     WORKSPACE  POOL     WORKERS  STATE    SUBMITTED             REASON\n"
              "sweep-7  ml         default  2 x 8    pending  2026-11-29T10:00:00Z  waiting for quota\n"
              "llm      ml         default  2 x 8    running  2026-11-29T10:00:00Z\n");
    const auto r2 = astra({"runs", "list", "--state", "running", "--json"}, server.api());
    EXPECT_EQ(r2.rc, 0);
    EXPECT_EQ(json::parse(r2.out)["runs"].size(), 2u);
    // astra asks for pages of --page-size runs (1,000 by default) and follows next_cursor.
    EXPECT_EQ(server.seen().at(1).query, "limit=1000&state=running");
}

TEST_F(AstraTest, RunsShowAndStop) {
    const auto r = astra({"runs", "show", "llm"}, server.api());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out,
              "Name:        llm\n"
              "Workspace:   ml\n"
              "Pool:        default\n"
              "Workers:     2 x 8 GPUs\n"
              "State:       running\n"
              "Submitted:   2026-11-29T10:00:00Z\n"
              "Started:     2026-11-29T10:01:05Z\n"
              "Ended:       -\n"
              "Time limit:  7200 s\n"
              "Command:     python train.py\n"
              "Image:       -\n"
              "Attempts:    1\n"
              "\n"
              "WORKER  STATE    MACHINE  ATTEMPT\n"
              "0       running  m-0000   1\n"
              "1       running  m-0001   1\n");
    const auto s = astra({"runs", "stop", "llm", "--workspace", "ml"}, server.api());
    EXPECT_EQ(s.rc, 0) << s.err;
    EXPECT_NE(s.out.find("State:       stopping\n"), std::string::npos);
    const auto seen = server.seen();
    ASSERT_EQ(seen.size(), 3u);  // show; stop: the run as it is (not ended), then the stop
    EXPECT_EQ(seen[1].method, "GET");
    EXPECT_EQ(seen[1].path, "/v1/runs/llm");
    EXPECT_EQ(seen[1].query, "workspace=ml");
    EXPECT_EQ(seen[2].method, "POST");
    EXPECT_EQ(seen[2].path, "/v1/runs/llm/stop");
    EXPECT_EQ(seen[2].query, "workspace=ml");
    const auto missing = astra({"runs", "show", "x"}, server.api());
    EXPECT_EQ(missing.rc, 2);
    EXPECT_EQ(missing.err, "astra: HTTP 404: no run named 'x'\n");
}

TEST_F(AstraTest, StopOfAnEndedRunSaysSoAndStopsNothing) {
    // It printed the run as it was, as if the stop had done something.
    const auto s = astra({"runs", "stop", "done"}, server.api());
    EXPECT_EQ(s.rc, 0) << s.err;
    EXPECT_EQ(s.out, "run 'done' already ended (succeeded): nothing to stop\n");
    EXPECT_EQ(s.err, "");
    const auto seen = server.seen();
    ASSERT_EQ(seen.size(), 1u);  // no POST
    EXPECT_EQ(seen[0].method, "GET");
    // --json: the server's answer as is (the stop is sent; the API changes nothing).
    const auto j = astra({"runs", "stop", "done", "--json"}, server.api());
    EXPECT_EQ(j.rc, 0) << j.err;
    EXPECT_EQ(server.seen().back().path, "/v1/runs/done/stop");
}

TEST_F(AstraTest, SubmitWithoutACommandShowsTheUsage) {
    // The API's "'command' is required: an argv array ..." named its JSON field, not astra's `--`.
    const auto r = astra({"runs", "submit", "nocmd"}, server.api());
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "astra runs submit: no command given; usage: astra runs submit NAME [options] -- "
                     "COMMAND [ARGS...] (or --command STRING)\n");
    // Both ways at once: refused before any configuration is read.
    const auto both = astra({"runs", "submit", "j", "--command", "true", "--", "true"}, "");
    EXPECT_EQ(both.rc, 2);
    EXPECT_EQ(both.err, "astra runs submit: give the command either with --command STRING or after --, not both\n");
}

TEST(AstraRender, AnEndedRunSaysWhy) {
    // `runs show` of a run stopped at its time limit said only "State: stopped".
    auto run = json::parse(R"({"name": "tl", "state": "stopped", "history": [
        {"at": "2026-12-01T14:54:45Z", "state": "running", "attempt": 1},
        {"at": "2026-12-01T14:54:47Z", "state": "stopping", "cause": "limit", "attempt": 1},
        {"at": "2026-12-01T14:54:47Z", "state": "stopped", "attempt": 1}]})");
    auto text = astraeus::client::run_detail_text(run);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("State:       stopped (time limit)\n"), std::string::npos) << *text;
    // The last cause counts: a failure retried, then stopped by its owner.
    run["history"] = json::parse(R"([{"at": "t", "state": "stopping", "cause": "failure"},
                                      {"at": "t", "state": "pending"},
                                      {"at": "t", "state": "stopping", "cause": "owner"}])");
    EXPECT_NE(astraeus::client::run_detail_text(run)->find("State:       stopped (by its owner)\n"),
              std::string::npos);
    run["state"] = "failed";
    run["history"] = json::parse(R"([{"at": "t", "state": "stopping", "cause": "failure"}])");
    EXPECT_NE(astraeus::client::run_detail_text(run)->find("State:       failed (a worker failed)\n"),
              std::string::npos);
    run["state"] = "succeeded";  // no cause for a run that ended on its own
    EXPECT_NE(astraeus::client::run_detail_text(run)->find("State:       succeeded\n"),
              std::string::npos);
}

TEST(AstraRender, OneGpuPerWorkerIsSingular) {
    // `runs show` of the README's hello run said "Workers:     1 x 1 GPUs".
    auto run = json::parse(R"({"name": "hello", "state": "succeeded", "workers": 1,
                               "gpus_per_worker": 1})");
    auto text = astraeus::client::run_detail_text(run);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("Workers:     1 x 1 GPU\n"), std::string::npos) << *text;
    run["workers"] = 2;
    EXPECT_NE(astraeus::client::run_detail_text(run)->find("Workers:     2 x 1 GPU\n"),
              std::string::npos);
    run["gpus_per_worker"] = 8;
    EXPECT_NE(astraeus::client::run_detail_text(run)->find("Workers:     2 x 8 GPUs\n"),
              std::string::npos);
}

TEST_F(AstraTest, RunsSubmitSendsTheContractBody) {
    const auto r = astra({"runs", "submit", "llm", "--workers", "2", "--gpus-per-worker", "8",
                          "--time-limit", "7200", "--command", "python train.py", "--workspace",
                          "ml"},
                         server.api());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("State:       pending (no placement for 2 x 8 GPUs)\n"),
              std::string::npos)
        << r.out;
    const auto seen = server.seen();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].method, "POST");
    EXPECT_EQ(seen[0].path, "/v1/runs");
    EXPECT_EQ(json::parse(seen[0].body),
              json::parse(R"({"name":"llm","workers":2,"gpus_per_worker":8,
                              "time_limit_s":7200,"command":"python train.py","workspace":"ml"})"));
    // No "pool" unless --pool is given (the API takes the cluster's first pool); given, it is sent.
    EXPECT_EQ(astra({"runs", "submit", "j", "--pool", "a100", "--", "true"}, server.api()).rc, 0);
    EXPECT_EQ(json::parse(server.seen().at(1).body),
              json::parse(R"({"name":"j","pool":"a100","workers":1,"gpus_per_worker":1,
                              "command":["true"]})"));
}

TEST_F(AstraTest, NonUtf8ArgumentsAreUsageErrorsNamingTheFlag) {
    // Each would have made nlohmann's dump throw (type_error 316) and astra abort (exit 134).
    auto r = astra({"runs", "submit", "j", "--command", "x\x9by"}, server.api());
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "astra: the value of --command is not valid UTF-8 (names, commands and values "
                     "travel as JSON, which is UTF-8)\n");
    r = astra({"runs", "submit", "n\xff", "--", "true"}, server.api());
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("argument 3 ('n\\xff') is not valid UTF-8"), std::string::npos) << r.err;
    r = astra({"runs", "submit", "j", "--env=K=\xc3", "--", "true"}, server.api());
    EXPECT_NE(r.err.find("the value of --env is not"), std::string::npos) << r.err;
    r = astra({"runs", "submit", "j", "--", "echo", "\xed\xa0\x80"}, server.api());  // a surrogate
    EXPECT_NE(r.err.find("the command after -- (argument 6)"), std::string::npos) << r.err;
    r = astra({"runs", "show", "x", "--workspace", "w\xc0\xaf"}, server.api());  // overlong '/'
    EXPECT_NE(r.err.find("the value of --workspace"), std::string::npos) << r.err;
    EXPECT_TRUE(server.seen().empty());
    // Valid multi-byte UTF-8 passes.
    EXPECT_EQ(astra({"runs", "submit", "j", "--command", "echo \xc3\xa9\xe2\x82\xac"}, server.api()).rc, 0);
}

TEST_F(AstraTest, A4xxThatIsNotTheContractsJsonIsExit1) {
    // The fake has no logs route: httplib's own 404 with an empty body, as a proxy would give.
    const auto r = astra({"runs", "logs", "llm"}, server.api());
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("HTTP 404: no message (not an Astraeus API answer"), std::string::npos) << r.err;
}

TEST_F(AstraTest, UsageErrorsExit2AndTouchNothing) {
    EXPECT_EQ(astra({"astraeus", "goodput", "--by", "team"}, server.api()).rc, 2);
    EXPECT_EQ(astra({"astraeus", "goodput", "--days", "7", "--start", "2026-10-01T00:00:00Z"},
                    server.api()).rc,
              2);
    EXPECT_EQ(astra({"astraeus", "goodput", "--run", "llm", "--by", "pool"}, server.api()).rc, 2);
    EXPECT_EQ(astra({"astraeus", "goodput", "--weeks", "57"}, server.api()).rc, 2);
    EXPECT_EQ(astra({"runs", "submit", "llm", "--workers", "0"}, server.api()).rc, 2);
    EXPECT_EQ(astra({"runs", "submit", "llm", "--env", "NOEQUALS", "--", "true"}, server.api()).rc, 2);
    EXPECT_EQ(astra({"runs", "submit", "llm", "--command", "true", "--", "true"}, server.api()).rc, 2);
    EXPECT_EQ(astra({"runs", "logs", "llm", "--worker", "-1"}, server.api()).rc, 2);
    EXPECT_EQ(astra({"runs"}, server.api()).rc, 2);
    EXPECT_EQ(astra({}, server.api()).rc, 2);
    EXPECT_TRUE(server.seen().empty());
}

TEST_F(AstraTest, ANumberOutOfRangeNamesTheRangeAndTheValue) {
    // CLI11's own check said "Value 0 not in range 0.000000 to 1797...(300 digits).000000".
    // The ranges are the service's own (api/run_limits.hpp: 4096 workers, 1024 GPUs a worker, 10
    // years = 315,360,000 s); --time-limit used to say up to 9223372036854775807.
    const auto w = astra({"runs", "submit", "llm", "--workers", "0", "--", "true"}, server.api());
    EXPECT_EQ(w.rc, 2);
    EXPECT_EQ(w.err.substr(0, w.err.find('\n')),
              "--workers: expected a whole number from 1 to 4096, got '0'");
    const auto t = astra({"runs", "submit", "llm", "--time-limit", "-5", "--", "true"}, server.api());
    EXPECT_EQ(t.rc, 2);
    EXPECT_EQ(t.err.substr(0, t.err.find('\n')),
              "--time-limit: expected a whole number from 1 to 315360000, got '-5'");
    const auto g = astra({"runs", "submit", "llm", "--gpus-per-worker", "99999999999", "--", "true"},
                         server.api());
    EXPECT_EQ(g.rc, 2);
    EXPECT_EQ(g.err.substr(0, g.err.find('\n')),
              "--gpus-per-worker: expected a whole number from 1 to 1024, got '99999999999'");
    const auto l = astra({"runs", "logs", "llm", "--worker", "-1"}, server.api());
    EXPECT_EQ(l.rc, 2);
    EXPECT_EQ(l.err.substr(0, l.err.find('\n')),
              "--worker: expected a whole number from 0 to 2147483647, got '-1'");
    EXPECT_EQ(astra({"runs", "logs", "llm", "--attempt", "1.5"}, server.api()).rc, 2);
    EXPECT_TRUE(server.seen().empty());
}

TEST_F(AstraTest, HelpExits0AndExplains) {
    const auto r = astra({"--help"}, "");
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("ASTRALYX_API"), std::string::npos);
    const auto g = astra({"astraeus", "goodput", "--help"}, "");
    EXPECT_EQ(g.rc, 0);
    EXPECT_NE(g.out.find("--weeks"), std::string::npos);
    for (const char* c : {"submit", "list", "show", "stop"}) {
        const auto h = astra({"runs", c, "--help"}, "");
        EXPECT_EQ(h.rc, 0) << c;
        EXPECT_NE(h.out.find("--json"), std::string::npos) << c;
    }
    const auto runs = astra({"runs", "--help"}, "");  // its line names every subcommand
    EXPECT_EQ(runs.rc, 0);
    EXPECT_NE(runs.out.find("submit, list, show and stop runs, and print their logs"),
              std::string::npos) << runs.out;
}

TEST(Astra, MissingConfigurationIsExit2) {
    const auto r = astra({"runs", "list"}, "");
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err,
              "astra: ASTRALYX_API is not set; set it to the API's base URL, e.g. export "
              "ASTRALYX_API=http://127.0.0.1:8080/v1\n");
    const auto t = astra({"runs", "list"}, "http://127.0.0.1:1/v1", nullptr);
    EXPECT_EQ(t.rc, 2);
    EXPECT_NE(t.err.find("ASTRALYX_TOKEN is not set"), std::string::npos);
    const auto u = astra({"runs", "list"}, "ftp://x/v1");
    EXPECT_EQ(u.rc, 2);
    EXPECT_NE(u.err.find("not an http(s) URL"), std::string::npos);
}

TEST(Astra, UnreachableServerIsExit1) {
    // A port that was free a moment ago: bound without listening, then closed.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    const int port = ntohs(addr.sin_port);
    ::close(fd);
    const auto r = astra({"runs", "list"}, "http://127.0.0.1:" + std::to_string(port) + "/v1");
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err.rfind("astra: cannot reach the API at http://127.0.0.1:", 0), 0u) << r.err;
}

TEST(AstraUrl, ParseAndEncode) {
    using astraeus::client::parse_api_url;
    auto a = parse_api_url("http://127.0.0.1:8080/v1/");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->origin, "http://127.0.0.1:8080");
    EXPECT_EQ(a->base_path, "/v1");
    auto b = parse_api_url("http://localhost");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->base_path, "");
    auto c = parse_api_url("https://api.astralyx.cloud/v1");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->origin, "https://api.astralyx.cloud");
    EXPECT_FALSE(parse_api_url("http:///v1"));
    EXPECT_EQ(astraeus::client::percent_encode("a b/c+d~é"), "a%20b%2Fc%2Bd~%C3%A9");
}

}  // namespace

TEST(AstraRender, UnmeasuredTimeIsReadAndNotedUnderTheTable) {
    // A ledger of 1 GPU-h held, all idle, 0.4 of it unmeasured (1440 GPU-s): the row shows IDLE
    // 1.0 and the note says 0.4 GPU-h; a ledger without the key has no note.
    auto doc = json::parse(R"({"by": "run", "rows": [{"run": "r",
        "gpu_hours": {"idle": 1.0}, "held_gpu_hours": {"idle": 1.0}, "allocated_gpu_hours": 1.0,
        "productive_gpu_hours": 0, "lost_gpu_hours": 1.0, "waiting_gpu_hours": 0,
        "goodput": 0, "unmeasured_gpu_hours": 0.4}]})");
    auto c = astraeus::client::counts_from_ledger(doc["rows"][0]);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->unmeasured, 1440);
    auto text = astraeus::client::goodput_rows_text(doc);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("\nutilization not measured for 0.4 GPU-h (counted idle)\n"), std::string::npos)
        << *text;
    doc["rows"][0].erase("unmeasured_gpu_hours");
    EXPECT_EQ(astraeus::client::goodput_rows_text(doc)->find("not measured"), std::string::npos);
    // 0.04 GPU-h (144 GPU-s) rounds to 0.0: no "not measured for 0.0 GPU-h" line; 0.05 (180 GPU-s,
    // rounded half up) is 0.1.
    doc["rows"][0]["unmeasured_gpu_hours"] = 0.04;
    EXPECT_EQ(astraeus::client::goodput_rows_text(doc)->find("not measured"), std::string::npos)
        << *astraeus::client::goodput_rows_text(doc);
    doc["rows"][0]["unmeasured_gpu_hours"] = 0.05;
    EXPECT_NE(astraeus::client::goodput_rows_text(doc)->find("\nutilization not measured for 0.1 GPU-h (counted idle)\n"),
              std::string::npos);
}
