// Fencing and replicas for node agents (issue 23, docs/agents.md "Fencing"): the rule (a reply
// below the highest lease generation seen is refused, an equal or higher one obeyed), a real
// agent whose stale-generation launch is refused (no process started: its marker file never
// appears) while the same launch at the current generation runs, the generation kept across an
// agent restart (state file), the service's replies carrying the hub's generation, and an agent
// given three addresses that follows a follower's 503 to the leader it names (the address in
// between never asked) and moves on when the leader stops answering. The fake posts are the
// only mocks; the agent, its worker runner and its files are real.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "astraeus/exec/agent_hub.hpp"
#include "astraeus/exec/agent_node.hpp"

namespace {

using astraeus::exec::generation_obeyed;
using astraeus::exec::NodeAgent;
using astraeus::exec::NodeAgentConfig;
using astraeus::exec::reply_generation;
using nlohmann::json;
namespace fs = std::filesystem;
using Reply = astraeus::Result<std::pair<int, json>>;

struct TempDir {
    fs::path path;
    TempDir() {
        char tmpl[] = "/tmp/astraeus-fence.XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

NodeAgentConfig config(const fs::path& dir) {
    NodeAgentConfig c;
    c.name = "m1";
    c.gpus = 1;
    c.work_dir = (dir / "agent").string();
    c.retry_s = 0.02;
    c.runner.allow_root = true;  // CI runs as root
    return c;
}

/// A launch of run `run` whose worker creates `marker`.
json launch(std::int64_t seq, std::int64_t run, const fs::path& marker) {
    return {{"seq", seq},      {"op", "launch"}, {"run", run},      {"attempt", 1},
            {"worker", 0},     {"run_name", "r" + std::to_string(run)}, {"workspace", "ws"},
            {"workers", 1},    {"gpus", {0}},    {"argv", {"/bin/sh", "-c", "touch " + marker.string()}}};
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(AgentFencing, TheRule) {
    EXPECT_FALSE(generation_obeyed(4, 5));
    EXPECT_TRUE(generation_obeyed(5, 5));
    EXPECT_TRUE(generation_obeyed(6, 5));
    EXPECT_TRUE(generation_obeyed(0, 0));  // SQLite: always 0
    EXPECT_EQ(reply_generation(json{{"generation", 7}}), 7);
    EXPECT_EQ(reply_generation(json{{"commands", json::array()}}), 0);  // an older service
    EXPECT_EQ(reply_generation(json{{"generation", "7"}}), 0);
}

// Registered at generation 5; then a deposed leader's reply (generation 4) with a launch, then
// the current leader's (generation 5) with another: only the second one's worker runs.
TEST(AgentFencing, AStaleGenerationsLaunchIsRefusedTheCurrentOnesIsObeyed) {
    TempDir d;
    const fs::path stale_marker = d.path / "stale-ran", ok_marker = d.path / "current-ran";
    std::unique_ptr<NodeAgent> agent;
    int calls = 0, heartbeats = 0, registrations = 0;
    std::set<std::int64_t> started;
    std::int64_t acked = 0;
    auto post = [&](const std::string& path, const json& body) -> Reply {
        if (++calls > 2000) agent->request_stop();  // a bound: the test fails below
        if (path == "/v1/agent/logs") return std::pair{200, json{{"have", 0}}};
        if (path == "/v1/agent/register") {
            ++registrations;
            return std::pair{200, json{{"machine", 1}, {"heartbeat_s", 0.02}, {"events_acked", acked}, {"generation", 5}}};
        }
        for (const json& e : body.value("events", json::array())) {
            acked = std::max(acked, e.value("seq", std::int64_t{0}));
            if (e.value("kind", "") == "started") started.insert(e.value("run", std::int64_t{0}));
            if (e.value("kind", "") == "started" && e.value("run", 0) == 8) agent->request_stop();
        }
        ++heartbeats;
        json reply{{"heartbeat_s", 0.02}, {"events_acked", acked}, {"commands", json::array()}, {"generation", 5}};
        if (heartbeats == 1) {  // the replayed reply of the deposed leader
            reply["generation"] = 4;
            reply["commands"].push_back(launch(1, 7, stale_marker));
        } else if (registrations >= 2) {
            reply["commands"].push_back(launch(1, 8, ok_marker));
        }
        return std::pair{200, reply};
    };
    agent = std::make_unique<NodeAgent>(config(d.path), post);
    ASSERT_TRUE(agent->start());
    ASSERT_TRUE(agent->run());
    EXPECT_LT(calls, 2000);
    EXPECT_EQ(agent->generation(), 5);
    EXPECT_FALSE(started.contains(7));
    EXPECT_TRUE(started.contains(8));
    EXPECT_EQ(registrations, 2);  // the stale reply sent it to register again
    for (int i = 0; i < 200 && !fs::exists(ok_marker); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(fs::exists(ok_marker));
    EXPECT_FALSE(fs::exists(stale_marker));
    EXPECT_FALSE(fs::exists(d.path / "agent/logs/ws/r7"));  // not even prepared
    agent.reset();

    // The state file keeps generation 5: a restarted agent refuses generation 4 at once.
    EXPECT_NE(slurp(d.path / "agent/agent-m1.state").find("generation 5\n"), std::string::npos);
    int refused = 0;
    auto stale_post = [&](const std::string& path, const json&) -> Reply {
        if (path != "/v1/agent/register") return std::pair{200, json{{"have", 0}}};
        if (++refused >= 3) agent->request_stop();
        return std::pair{200, json{{"machine", 1}, {"heartbeat_s", 0.02}, {"events_acked", 0}, {"generation", 4}}};
    };
    agent = std::make_unique<NodeAgent>(config(d.path), stale_post);
    ASSERT_TRUE(agent->start());
    EXPECT_EQ(agent->generation(), 5);
    ASSERT_TRUE(agent->run());
    EXPECT_EQ(refused, 3);  // every registration at generation 4 refused: it never heartbeat
}

TEST(AgentFencing, TheHubsRepliesCarryItsGeneration) {
    astraeus::exec::AgentHub h{astraeus::exec::AgentHubConfig{2, 10, 29500, 2000, 0}};
    h.add_machine(1, "m1", 2, "127.0.0.1", 100);
    EXPECT_EQ(h.on_register(100, 1, json{{"session", "s"}, {"workers", json::array()}})["generation"], 0);
    h.set_generation(9);
    EXPECT_EQ(h.on_heartbeat(101, 1, json{{"session", "s"}, {"commands_acked", 0}})["generation"], 9);
    EXPECT_EQ(h.on_heartbeat(101, 1, json{{"session", "other"}})["generation"], 9);  // "register again"
    EXPECT_EQ(h.on_register(102, 1, json{{"session", "s"}, {"workers", json::array()}})["generation"], 9);
}

// Three addresses: A is a follower naming C as the leader, B would answer too, C leads. The
// agent goes from A straight to C (B never asked). Then C stops answering: the agent moves to
// the next address (A, now the leader at generation 3) and registers there with its session.
TEST(AgentFencing, AnAgentFollowsTheLeaderAmongItsAddresses) {
    TempDir d;
    std::unique_ptr<NodeAgent> agent;
    std::map<std::string, int> hits;
    std::vector<std::string> registered_at;
    std::set<std::string> sessions;
    int calls = 0;
    bool c_dead = false;
    auto follower = [](const std::string& leader) {
        return std::pair{503, json{{"error", "unavailable: this replica is a follower"}, {"status", "follower"},
                                   {"leader", "r"}, {"leader_address", leader}, {"generation", 2}}};
    };
    auto post = [&](const std::string& origin, const std::string& path, const json& body) -> Reply {
        if (++calls > 2000) agent->request_stop();
        ++hits[origin];
        if (path == "/v1/agent/logs") return std::pair{200, json{{"have", 0}}};
        const bool leads = (origin == "http://c:1" && !c_dead) || (origin == "http://a:1" && c_dead);
        if (origin == "http://c:1" && c_dead) return astraeus::fail("connection refused");
        if (!leads) return follower(c_dead ? "http://a:1" : "http://c:1/v1/");
        const int g = c_dead ? 3 : 2;
        if (path == "/v1/agent/register") {
            registered_at.push_back(origin);
            sessions.insert(body.value("session", ""));
            if (registered_at.size() == 2) agent->request_stop();
            return std::pair{200, json{{"machine", 1}, {"heartbeat_s", 0.02}, {"events_acked", 0}, {"generation", g}}};
        }
        if (hits["http://c:1"] >= 5) c_dead = true;  // C is killed after a few heartbeats
        return std::pair{200, json{{"heartbeat_s", 0.02}, {"events_acked", 0}, {"commands", json::array()}, {"generation", g}}};
    };
    agent = std::make_unique<NodeAgent>(config(d.path), std::vector<std::string>{"http://a:1", "http://b:1", "http://c:1"}, post);
    ASSERT_TRUE(agent->start());
    ASSERT_TRUE(agent->run());
    EXPECT_LT(calls, 2000);
    EXPECT_EQ(hits["http://b:1"], 0);
    EXPECT_EQ(registered_at, (std::vector<std::string>{"http://c:1", "http://a:1"}));
    EXPECT_EQ(sessions.size(), 1u);  // the same agent session: its workers are adopted
    EXPECT_EQ(agent->service_index(), 0u);
    EXPECT_EQ(agent->generation(), 3);
}

}  // namespace
