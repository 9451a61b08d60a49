// Unit tests of the control plane's parts (issue 18), values worked out by hand: GET /v1/runs's
// page parameters, the logs parameters, the agents' bodies (wrong types, unknown fields,
// duplicate keys: 400 naming the field), Idempotency-Keys, the submissions-per-minute bucket,
// and merging the batches a failing store refused.
#include <gtest/gtest.h>

#include "astraeus/service/agent_body.hpp"
#include "astraeus/service/idempotency.hpp"
#include "astraeus/service/request_parse.hpp"
#include "astraeus/service/submit_limiter.hpp"
#include "astraeus/store/store.hpp"

using namespace astraeus;
using namespace astraeus::service;

TEST(RunsQuery, ValuesDefaultsAndErrors) {
    auto d = parse_runs_query({});
    ASSERT_TRUE(d);
    EXPECT_EQ(d->limit, 100U);
    EXPECT_FALSE(d->has_cursor);
    auto q = parse_runs_query({{"limit", "1000"}, {"cursor", runs_cursor(1795946400, 412)}, {"state", "pending"},
                               {"name", "Sweep"}, {"pool", "a100"}, {"workspace", "ml"}});
    ASSERT_TRUE(q) << q.error().message;
    EXPECT_EQ(q->limit, 1000U);
    EXPECT_EQ(runs_cursor(1795946400, 412), "1795946400.412");
    EXPECT_EQ(q->cursor_submitted_s, 1795946400);
    EXPECT_EQ(q->cursor_id, 412);
    EXPECT_EQ(q->name, "Sweep");
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"limit", "0"}, {"limit", "1001"}, {"limit", "-1"}, {"limit", "1e3"}, {"cursor", "12"},
             {"cursor", "a.b"}, {"cursor", ".1"}, {"cursor", "1.2.3"}, {"state", "done"},
             {"name", std::string(64, 'a')}, {"color", "red"}}) {
        auto e = parse_runs_query({{k, v}});
        ASSERT_FALSE(e) << k << "=" << v;
        EXPECT_EQ(e.error().status, 400);
        EXPECT_NE(e.error().message.find(k), std::string::npos) << e.error().message;
    }
}

TEST(LogsQuery, RangesFollowTheRun) {
    auto d = parse_logs_query({}, 4, 3);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->worker, 0);
    EXPECT_EQ(d->attempt, 3);  // the latest
    EXPECT_EQ(d->limit, 1 << 20);
    EXPECT_TRUE(parse_logs_query({{"worker", "3"}, {"attempt", "1"}, {"offset", "999999999999"}}, 4, 3));  // 12 digits at most
    EXPECT_FALSE(parse_logs_query({{"worker", "4"}}, 4, 3));
    EXPECT_FALSE(parse_logs_query({{"attempt", "0"}}, 4, 3));
    EXPECT_FALSE(parse_logs_query({{"offset", "1099511627777"}}, 4, 3));  // 13 digits
    EXPECT_FALSE(parse_logs_query({{"limit", "4194305"}}, 4, 3));
    EXPECT_FALSE(parse_logs_query({{"limit", "-5"}}, 4, 3));
    EXPECT_EQ(parse_logs_query({{"worker", "x"}}, 4, 3).error().message, "'worker' must be a non-negative integer");
}

namespace {
std::string agent_error(std::string_view body, AgentBody kind) {
    auto r = parse_agent_body(body, kind);
    if (r) return "accepted";
    EXPECT_EQ(r.error().status, 400);
    return r.error().message;
}
}  // namespace

TEST(AgentBody, WrongTypesAre400sNamingTheField) {
    // The three bodies that answered 500 before (issue 18).
    EXPECT_EQ(agent_error(R"({"name":5,"session":"s","gpus":8})", AgentBody::Register), "'name' must be a string");
    EXPECT_EQ(agent_error(R"({"name":"m1","pool":5,"gpus":8,"session":"s"})", AgentBody::Register), "'pool' must be a string");
    EXPECT_EQ(agent_error(R"({"name":"m1","session":"s","wait_ms":"x"})", AgentBody::Heartbeat),
              "'wait_ms' must be an integer in 0..3600000");
    EXPECT_EQ(agent_error(R"({"name":"m1","gpus":8.5,"session":"s"})", AgentBody::Register),
              "'gpus' must be an integer in 1..1024");
    EXPECT_EQ(agent_error(R"({"name":"m1","gpus":8})", AgentBody::Register), "'session' is required");
    EXPECT_EQ(agent_error(R"({"name":"m1","gpus":8,"session":""})", AgentBody::Register), "'session' must not be empty");
    EXPECT_EQ(agent_error(R"({"name":"m1","session":"s","events":[{"seq":1,"kind":"exited","run":"3","attempt":1,"worker":0}]})",
                          AgentBody::Heartbeat),
              "'events[0].run' must be an integer in 0..9223372036854775807");
    EXPECT_EQ(agent_error(R"({"name":"m1","session":"s","events":[{"seq":1,"kind":"boom","run":3,"attempt":1,"worker":0}]})",
                          AgentBody::Heartbeat),
              "'events[0].kind' must be \"started\", \"progress\" or \"exited\"");
    EXPECT_EQ(agent_error(R"({"name":"m1","session":"s","events":{}})", AgentBody::Heartbeat), "'events' must be an array");
    EXPECT_EQ(agent_error(R"({"name":"m1","session":"s","gpu_util":[[1,"a"]]})", AgentBody::Heartbeat),
              "'gpu_util[0]' must be an array of utilizations (numbers or null), one per GPU");
    EXPECT_EQ(agent_error(R"({"name":"m1","session":"s","workers":[{"run":1,"attempt":1,"worker":0,"gpus":[-1]}],"gpus":8})",
                          AgentBody::Register),
              "'workers[0].gpus' must be an array of GPU indices (integers in 0..1023)");
    EXPECT_EQ(agent_error(R"({"name":"m1","chunks":[{"run":1,"attempt":1,"worker":0}]})", AgentBody::Logs),
              "'chunks[0].offset' is required");
    EXPECT_EQ(agent_error(R"({"name":"m1","chunks":[{"run":1,"attempt":1,"worker":0,"offset":0,"data":7}]})", AgentBody::Logs),
              "'chunks[0].data' must be a string");
}

TEST(AgentBody, UnknownFieldsDuplicatesAndShapes) {
    EXPECT_EQ(agent_error(R"({"name":"m1","session":"s","colour":1})", AgentBody::Heartbeat).substr(0, 24),
              "unknown field 'colour' (");
    EXPECT_EQ(agent_error(R"({"name":"m1","name":"m2","session":"s"})", AgentBody::Heartbeat),
              "duplicate key 'name' in the JSON body");
    EXPECT_EQ(agent_error(R"([1,2])", AgentBody::Heartbeat), "the body must be a JSON object");
    EXPECT_EQ(agent_error(R"({"name":)", AgentBody::Heartbeat), "malformed JSON");
    EXPECT_EQ(agent_error("{\"name\":\"\xff\"}", AgentBody::Heartbeat), "the body is not valid UTF-8 (RFC 8259 JSON is UTF-8)");
    // What the agent sends (exec/agent_node.cpp) is accepted.
    EXPECT_EQ(agent_error(R"({"name":"m1","pool":"default","gpus":8,"session":"s1","addr":"10.0.0.1",
        "workers":[{"run":3,"attempt":1,"worker":0,"pid":77,"gpus":[0,1]}],
        "events":[{"seq":4,"kind":"exited","run":3,"attempt":1,"worker":0,"exit_code":127,"signal":0,"error":"no such file"}]})",
                          AgentBody::Register),
              "accepted");
    EXPECT_EQ(agent_error(R"({"name":"m1","session":"s1","commands_acked":4,"live":1,"gpu_util":[[50.5,null]],
        "events":[{"seq":5,"kind":"progress","run":3,"attempt":1,"worker":0,"step":100},
                  {"seq":6,"kind":"exited","run":3,"attempt":1,"worker":0,"exit_code":0,"signal":15,"we_signalled":true}]})",
                          AgentBody::Heartbeat),
              "accepted");
    EXPECT_EQ(agent_error(R"({"name":"m1","chunks":[{"run":3,"attempt":1,"worker":0,"offset":-1}]})", AgentBody::Logs), "accepted");
}

TEST(Idempotency, KeysIndexAndPrune) {
    EXPECT_EQ(idempotency_key_problem("6f1c2a8e-run-llm"), "");
    EXPECT_NE(idempotency_key_problem(""), "");
    EXPECT_NE(idempotency_key_problem(std::string(256, 'k')), "");
    EXPECT_EQ(idempotency_key_problem(std::string(255, 'k')), "");
    EXPECT_NE(idempotency_key_problem("a\nb"), "");
    EXPECT_NE(idempotency_key_problem("caf\xc3\xa9"), "");
    IdempotencyIndex idx;
    idx.load({{1, "a", "h1", 10, 201, "", 100}, {2, "a", "h2", 11, 201, "", 200}});
    ASSERT_NE(idx.find(1, "a"), nullptr);
    EXPECT_EQ(idx.find(1, "a")->run_id, 10);
    EXPECT_EQ(idx.find(2, "a")->body_sha256, "h2");  // per token
    EXPECT_EQ(idx.find(3, "a"), nullptr);
    idx.add({1, "a", "other", 99, 201, "", 300});  // a key is never replaced
    EXPECT_EQ(idx.find(1, "a")->run_id, 10);
    EXPECT_EQ(idx.prune(150), 1U);  // created before 150: (1, a)
    EXPECT_EQ(idx.find(1, "a"), nullptr);
    EXPECT_EQ(idx.size(), 1U);
}

TEST(SubmitLimiter, BucketOfAMinute) {
    SubmitLimiter l(6);  // 6 a minute: one every 10 s, bursts of 6
    for (int i = 0; i < 6; ++i) EXPECT_EQ(l.take(1, 1000.0), 0) << i;
    EXPECT_EQ(l.take(1, 1000.0), 10);  // empty: one token in 10 s
    EXPECT_EQ(l.take(1, 1004.0), 6);   // 0.4 token: 6 s more
    EXPECT_EQ(l.take(2, 1004.0), 0);   // another workspace: its own bucket
    EXPECT_EQ(l.take(1, 1010.0), 0);   // 1 token at 1010
    EXPECT_EQ(l.take(1, 1010.0), 10);
    EXPECT_EQ(l.take(1, 2000.0), 0);   // refilled, capped at 6
    for (int i = 0; i < 5; ++i) EXPECT_EQ(l.take(1, 2000.0), 0);
    EXPECT_EQ(l.take(1, 2000.0), 10);
}

TEST(StoreBatch, MergeKeepsTheLaterRunAndAddsRows) {
    store::Batch a, b;
    store::RunRec r1;
    r1.id = 1;
    r1.state = "running";
    a.runs.push_back(r1);
    a.goodput.push_back({1, 2, 3600, 0, true, 60});
    a.meta.push_back({"last_event_s", 100});
    a.machine_heartbeat.push_back({5, 100});
    r1.state = "succeeded";
    store::RunRec r2;
    r2.id = 2;
    b.runs = {r1, r2};
    b.goodput.push_back({1, 2, 3600, 0, true, 30});
    b.meta.push_back({"last_event_s", 160});
    b.machine_heartbeat.push_back({5, 160});
    b.prune_before_hour = 7200;
    store::merge_batch(a, std::move(b));
    ASSERT_EQ(a.runs.size(), 2U);
    EXPECT_EQ(a.runs[0].state, "succeeded");  // the later record of run 1
    EXPECT_EQ(a.runs[1].id, 2);
    ASSERT_EQ(a.goodput.size(), 2U);  // rows add up when applied: 90 GPU-s
    EXPECT_EQ(a.goodput[0].gpu_s + a.goodput[1].gpu_s, 90);
    ASSERT_EQ(a.meta.size(), 1U);
    EXPECT_EQ(a.meta[0].second, 160);
    ASSERT_EQ(a.machine_heartbeat.size(), 1U);
    EXPECT_EQ(a.machine_heartbeat[0].second, 160);
    EXPECT_EQ(a.prune_before_hour, 7200);
}
