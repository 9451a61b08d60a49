// The agents executor's protocol state (exec/agent_hub.hpp) without a network: registrations,
// heartbeats and events as the JSON bodies docs/agents.md describes, and the Executor events
// that follow, with times chosen by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "astraeus/exec/agent_hub.hpp"

namespace {

using astraeus::exec::AgentHub;
using astraeus::exec::AgentHubConfig;
using astraeus::exec::ExecEvent;
using astraeus::exec::ExecPhase;
using astraeus::exec::ExecRun;
using nlohmann::json;
using K = ExecEvent::Kind;

std::vector<ExecEvent> drain(AgentHub& h, std::int64_t now) {
    std::vector<ExecEvent> out;
    ExecEvent e{K::Started, 0};
    while (h.pop_due(now, e)) out.push_back(e);
    return out;
}

std::vector<K> kinds(const std::vector<ExecEvent>& es) {
    std::vector<K> k;
    for (const auto& e : es) k.push_back(e.kind);
    return k;
}

/// A 2-worker gang, worker 0 on machine 1 and worker 1 on machine 2, 2 GPUs each (count only).
ExecRun gang(int attempt = 1) {
    ExecRun r;
    r.run = 7;
    r.workers = 2;
    r.attempt = attempt;
    r.run_name = "bert";
    r.workspace = "ml";
    r.argv = {"/bin/true"};
    r.placement.resize(2);
    r.placement[0].machine = 1;
    r.placement[0].gpus = {-1, -1};
    r.placement[1].machine = 2;
    r.placement[1].gpus = {-1, -1};
    return r;
}

json reg(const std::string& session, json workers = json::array()) {
    return json{{"name", "m"}, {"pool", "default"}, {"gpus", 2}, {"session", session}, {"workers", workers}};
}

json hb(const std::string& session, std::int64_t acked, json events = json::array()) {
    return json{{"session", session}, {"commands_acked", acked}, {"events", events}};
}

json ev(std::int64_t seq, const char* kind, int worker, int attempt = 1, int code = 0) {
    return json{{"seq", seq}, {"kind", kind}, {"run", 7}, {"attempt", attempt}, {"worker", worker}, {"exit_code", code}};
}

struct Hub : ::testing::Test {
    AgentHub h{AgentHubConfig{2, 10, 29500, 2000, 0}};
    void SetUp() override {
        h.add_machine(1, "m1", 2, "10.0.0.1", 100);
        h.add_machine(2, "m2", 2, "10.0.0.2", 100);
        h.on_register(100, 1, reg("s1"));
        h.on_register(100, 2, reg("s2"));
    }
};

TEST_F(Hub, LaunchesCarryTheGangsEnvironmentAndStartWhenAllAreUp) {
    h.launch(101, gang());
    const json a = h.on_heartbeat(101, 1, hb("s1", 0));
    ASSERT_EQ(a["commands"].size(), 1u);
    const json& c = a["commands"][0];
    EXPECT_EQ(c["op"], "launch");
    EXPECT_EQ(c["seq"], 1);
    EXPECT_EQ(c["worker"], 0);
    EXPECT_EQ(c["gpus"], json::array({0, 1}));
    EXPECT_EQ(c["master_addr"], "10.0.0.1");           // worker 0's machine
    EXPECT_EQ(c["master_port"], 29500 + (7 * 7 + 1) % 2000);  // 29550
    EXPECT_EQ(c["local_rank"], 0);
    // Re-sent until acknowledged, then gone.
    EXPECT_EQ(h.on_heartbeat(102, 1, hb("s1", 0))["commands"].size(), 1u);
    EXPECT_EQ(h.on_heartbeat(102, 1, hb("s1", 1))["commands"].size(), 0u);

    h.on_heartbeat(103, 1, hb("s1", 1, json::array({ev(1, "started", 0)})));
    EXPECT_EQ(kinds(drain(h, 103)), std::vector<K>{K::WorkerStarted});
    h.on_heartbeat(104, 2, hb("s2", 1, json::array({ev(1, "started", 1)})));
    const auto es = drain(h, 104);
    EXPECT_EQ(kinds(es), (std::vector<K>{K::WorkerStarted, K::Started}));
    EXPECT_EQ(es.back().t, 104);
    // A re-sent event (same seq) is taken once.
    h.on_heartbeat(105, 2, hb("s2", 1, json::array({ev(1, "started", 1)})));
    EXPECT_TRUE(drain(h, 105).empty());
    EXPECT_EQ(h.executed_s(7, 110), 6);  // running since 104
}

TEST_F(Hub, TwoLiveGangsWithRankZeroOnOneMachineNeverShareAMasterPort) {
    // Run 7 attempt 1 hashes to 29500 + (7*7 + 1) % 2000 = 29550; run 6 attempt 8 to
    // 29500 + (6*7 + 8) % 2000 = 29550 as well. Both have rank 0 on m1: the second gets 29551.
    ExecRun a = gang(1);
    a.placement[0].gpus = {-1};
    a.placement[1].gpus = {-1};
    ExecRun b = a;
    b.run = 6;
    b.attempt = 8;
    h.launch(101, a);
    h.launch(101, b);
    const json cmds = h.on_heartbeat(102, 1, hb("s1", 0))["commands"];
    ASSERT_EQ(cmds.size(), 2u);
    EXPECT_EQ(cmds[0]["run"], 7);
    EXPECT_EQ(cmds[0]["master_port"], 29550);
    EXPECT_EQ(cmds[1]["run"], 6);
    EXPECT_EQ(cmds[1]["master_port"], 29551);
    // Worker 1 of each gang (on m2) carries its own gang's port.
    const json on2 = h.on_heartbeat(102, 2, hb("s2", 0))["commands"];
    ASSERT_EQ(on2.size(), 2u);
    EXPECT_EQ(on2[0]["master_port"], 29550);
    EXPECT_EQ(on2[1]["master_port"], 29551);
}

TEST_F(Hub, AWorkerExitingNonZeroFailsTheGangAndTheOthersAreStopped) {
    h.launch(101, gang());
    h.on_heartbeat(102, 1, hb("s1", 1, json::array({ev(1, "started", 0)})));
    h.on_heartbeat(102, 2, hb("s2", 1, json::array({ev(1, "started", 1)})));
    drain(h, 102);
    h.on_heartbeat(105, 2, hb("s2", 1, json::array({ev(2, "exited", 1, 1, 3)})));
    auto es = drain(h, 105);
    EXPECT_EQ(kinds(es), (std::vector<K>{K::WorkerExited, K::Failed}));
    EXPECT_EQ(es.back().worker, 1);
    const json a = h.on_heartbeat(105, 1, hb("s1", 1));
    ASSERT_EQ(a["commands"].size(), 1u);
    EXPECT_EQ(a["commands"][0]["op"], "stop");
    h.on_heartbeat(107, 1, hb("s1", 2, json::array({ev(2, "exited", 0, 1, 0)})));
    EXPECT_EQ(kinds(drain(h, 107)), (std::vector<K>{K::WorkerExited, K::Released}));
}

TEST_F(Hub, ASilentAgentLosesItsMachineAndItsReturnKillsTheOldWorkers) {
    h.launch(101, gang());
    h.on_heartbeat(102, 1, hb("s1", 1, json::array({ev(1, "started", 0)})));
    h.on_heartbeat(102, 2, hb("s2", 1, json::array({ev(1, "started", 1)})));
    drain(h, 102);
    h.on_heartbeat(108, 2, hb("s2", 1));
    // Machine 1's last heartbeat was at 102: lost at 102 + 10 = 112, not before.
    EXPECT_EQ(h.next_event_s(), 112);
    EXPECT_TRUE(drain(h, 111).empty());
    auto es = drain(h, 112);
    ASSERT_EQ(kinds(es), std::vector<K>{K::MachineLost});
    EXPECT_EQ(es[0].machine, 1);
    // The service fails the run (restore Failed); the worker on machine 2 is stopped.
    h.restore(gang(), ExecPhase::Failed, 112, 0);
    EXPECT_EQ(h.on_heartbeat(112, 2, hb("s2", 1))["commands"][0]["op"], "stop");
    h.on_heartbeat(113, 2, hb("s2", 2, json::array({ev(2, "exited", 1, 1, 0)})));
    EXPECT_EQ(kinds(drain(h, 113)), (std::vector<K>{K::WorkerExited, K::Released}));
    h.forget(7);
    // Machine 1 comes back: "register again", and its old worker is killed.
    EXPECT_EQ(h.on_heartbeat(120, 1, hb("s1", 1))["register"], true);
    const json r = h.on_register(120, 1, reg("s1", json::array({{{"run", 7}, {"attempt", 1}, {"worker", 0}}})));
    EXPECT_EQ(r["killed"].size(), 1u);
    EXPECT_EQ(r["adopted"].size(), 0u);
    EXPECT_EQ(kinds(drain(h, 120)), std::vector<K>{K::MachineBack});
    const json a = h.on_heartbeat(121, 1, hb("s1", 0));
    ASSERT_EQ(a["commands"].size(), 1u);
    EXPECT_EQ(a["commands"][0]["op"], "kill");
}

TEST(HubRestart, RegisteredWorkersOfRunningAttemptsAreAdoptedOthersKilled) {
    // The service restarted: it restores the run as running since 50; the agents register again.
    AgentHub h{AgentHubConfig{2, 10, 29500, 2000, 0}};
    h.add_machine(1, "m1", 2, "10.0.0.1", 100);
    h.add_machine(2, "m2", 2, "10.0.0.2", 100);
    ExecRun r = gang(3);
    r.placement[0].gpus = {0, 1};
    r.placement[1].gpus = {0, 1};
    h.restore(r, ExecPhase::Running, 50, 20);
    const json a = h.on_register(101, 1, reg("s1", json::array({{{"run", 7}, {"attempt", 3}, {"worker", 0}},
                                                                  {{"run", 9}, {"attempt", 1}, {"worker", 0}}})));
    EXPECT_EQ(a["adopted"].size(), 1u);
    EXPECT_EQ(a["killed"].size(), 1u);
    h.on_register(101, 2, reg("s2", json::array({{{"run", 7}, {"attempt", 3}, {"worker", 1}}})));
    // Nothing restarts, nothing fails; work goes on from the restored stretch.
    EXPECT_TRUE(drain(h, 101).empty());
    EXPECT_EQ(h.executed_s(7, 110), 20 + (110 - 50));
    // A worker the agent no longer runs (it exited while the service was down, event lost): gone.
    AgentHub g{AgentHubConfig{2, 10, 29500, 2000, 0}};
    g.add_machine(1, "m1", 2, "", 100);
    g.add_machine(2, "m2", 2, "", 100);
    g.restore(r, ExecPhase::Running, 50, 0);
    g.on_register(101, 1, reg("s1"));
    EXPECT_EQ(kinds(drain(g, 101)), std::vector<K>{K::Failed});
}

}  // namespace
