// Agents' log shipping (docs/agents.md "Logs"): base64 against RFC 4648's test vectors, the
// service's copy of a shipped log (overlaps, gaps, the cap and its note, a note cut by a crash),
// and the agent's shipper against a service made of that copy behind a post that fails (no
// answer) or loses its answer after the write (a kill -9 of the service after the append): the
// copy must equal the agent's file byte for byte, each request within the chunk size, the exit
// event released only when everything is there; a restarted agent resumes from the service's
// offset; a real agent running a real worker reports its exit only when the service's copy of its
// log is complete. The fake post is the only mock; the files and processes are real.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "astraeus/base/base64.hpp"
#include "astraeus/exec/agent_node.hpp"
#include "astraeus/exec/log_shipper.hpp"
#include "astraeus/service/agent_log_file.hpp"

namespace {

using astraeus::base64_decode;
using astraeus::base64_encode;
using astraeus::exec::LogShipper;
using astraeus::exec::LogShipperConfig;
using astraeus::service::append_shipped_log;
using astraeus::service::capped_log_note;
using astraeus::service::shipped_log_state;
using nlohmann::json;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void append_to(const fs::path& p, const std::string& s) {
    std::ofstream(p, std::ios::binary | std::ios::app) << s;
}

struct TempDir {
    fs::path path;
    TempDir() {
        char tmpl[] = "/tmp/astraeus-logship.XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

TEST(Base64, Rfc4648Vectors) {
    const std::pair<const char*, const char*> v[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                     {"foo", "Zm9v"},  {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                                     {"foobar", "Zm9vYmFy"}};
    for (const auto& [plain, enc] : v) {
        EXPECT_EQ(base64_encode(plain), enc);
        auto d = base64_decode(enc);
        ASSERT_TRUE(d) << enc;
        EXPECT_EQ(*d, plain);
    }
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    EXPECT_EQ(*base64_decode(base64_encode(all)), all);
    for (const char* badtext : {"Zg=", "Z===", "Zg==Zg==", "Zm9v!A==", "=Zm9"}) EXPECT_FALSE(base64_decode(badtext)) << badtext;
}

TEST(ShippedLog, OverlapGapDuplicate) {
    TempDir d;
    const std::string p = (d.path / "a/b/worker-0.log").string();
    auto s = append_shipped_log(p, 0, "hello ", 1000);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->have, 6u);
    s = append_shipped_log(p, 3, "lo world", 1000);  // bytes 3..10: "lo " is there already
    EXPECT_EQ(s->have, 11u);
    EXPECT_EQ(slurp(p), "hello world");
    s = append_shipped_log(p, 20, "x", 1000);  // a gap: nothing written, resume at 11
    EXPECT_EQ(s->have, 11u);
    s = append_shipped_log(p, 0, "hello", 1000);  // all there already
    EXPECT_EQ(s->have, 11u);
    EXPECT_EQ(slurp(p), "hello world");
    EXPECT_FALSE(s->capped);
    EXPECT_EQ(shipped_log_state((d.path / "none.log").string(), 1000)->have, 0u);
}

TEST(ShippedLog, CapKeepsTheFirstBytesThenTheNote) {
    TempDir d;
    const std::string p = (d.path / "w.log").string();
    ASSERT_TRUE(append_shipped_log(p, 0, "hello world", 16));
    auto s = append_shipped_log(p, 11, "0123456789", 16);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->capped);
    const std::string want = "hello world01234\n[astraeus: log capped at 16 bytes; later output dropped]\n";
    EXPECT_EQ(capped_log_note(16), "\n[astraeus: log capped at 16 bytes; later output dropped]\n");
    EXPECT_EQ(slurp(p), want);
    s = append_shipped_log(p, 21, "more", 16);
    EXPECT_TRUE(s->capped);
    EXPECT_EQ(slurp(p), want);
    // A crash cut the note short: the next look completes it.
    const std::string q = (d.path / "cut.log").string();
    append_to(q, "0123456789abcdef" + capped_log_note(16).substr(0, 7));
    s = shipped_log_state(q, 16);
    EXPECT_TRUE(s->capped);
    EXPECT_EQ(slurp(q), "0123456789abcdef" + capped_log_note(16));
}

/// A service made of append_shipped_log on files under `dir`, behind a post that fails every
/// `fail_every`-th request (no answer, nothing written) and loses the answer of every
/// `lose_every`-th one after writing.
struct FakeService {
    fs::path dir;
    std::uint64_t cap = 1 << 20;
    int calls = 0, fail_every = 0, lose_every = 0, status = 200;
    std::int64_t generation = -1;  ///< >= 0: the replies carry it ("generation")
    std::size_t max_request_bytes = 0;
    std::string path_of(const json& ch) const {
        std::ostringstream name;  // (not operator+: GCC 12's false -Wrestrict)
        name << "r" << ch["run"].get<std::int64_t>() << "-a" << ch["attempt"].get<int>() << "-w"
             << ch["worker"].get<int>() << ".log";
        return (dir / name.str()).string();
    }
    astraeus::exec::LogPost post() {
        return [this](const std::string& path, const json& body) -> astraeus::Result<std::pair<int, json>> {
            EXPECT_EQ(path, "/v1/agent/logs");
            EXPECT_EQ(body["name"], "m1");
            ++calls;
            if (fail_every > 0 && calls % fail_every == 0) return astraeus::fail("connection refused");
            if (status != 200) return std::pair{status, json{{"error", "no"}}};
            json out = json::array();
            std::size_t bytes = 0;
            for (const json& ch : body["chunks"]) {
                const std::string data = *base64_decode(ch.value("data", ""));
                bytes += data.size();
                const std::int64_t off = ch["offset"];
                auto st = off < 0 ? shipped_log_state(path_of(ch), cap)
                                  : append_shipped_log(path_of(ch), static_cast<std::uint64_t>(off), data, cap);
                out.push_back({{"run", ch["run"]}, {"attempt", ch["attempt"]}, {"worker", ch["worker"]},
                               {"have", st->have}, {"capped", st->capped}});
            }
            max_request_bytes = std::max(max_request_bytes, bytes);
            if (lose_every > 0 && calls % lose_every == 0) return astraeus::fail("read timeout");  // written, answer lost
            json reply{{"chunks", out}};
            if (generation >= 0) reply["generation"] = generation;
            return std::pair{200, reply};
        };
    }
};

std::string lines(int worker, int from, int to, std::size_t pad) {
    std::ostringstream s;
    for (int i = from; i < to; ++i) s << "worker " << worker << " line " << i << " " << std::string(pad, 'x') << "\n";
    return s.str();
}

TEST(LogShipper, FailedAndLostAnswersLoseAndDuplicateNothing) {
    TempDir d;
    FakeService svc{d.path / "service"};
    svc.fail_every = 3;
    svc.lose_every = 4;
    LogShipper sh(LogShipperConfig{"m1", 1000, 0, 0, (d.path / "agent.logs").string()}, svc.post());
    const fs::path a = d.path / "w0.log", b = d.path / "w1.log";
    append_to(a, "");
    append_to(b, "");
    sh.add({7, 1, 0}, a.string());
    sh.add({7, 1, 1}, b.string());
    int released = 0;
    for (int round = 0; round < 40; ++round) {  // the workers write while the shipper ships
        append_to(a, lines(0, round * 3, round * 3 + 3, 5));
        append_to(b, lines(1, round * 10, round * 10 + 10, 200));
        for (int k = 0; k < 3; ++k) sh.tick();
        EXPECT_TRUE(sh.take_released().empty());
    }
    sh.finish({7, 1, 0}, json{{"kind", "exited"}, {"worker", 0}});
    sh.finish({7, 1, 1}, json{{"kind", "exited"}, {"worker", 1}});
    for (int k = 0; k < 500 && sh.streams() > 0; ++k) {
        sh.tick();
        released += static_cast<int>(sh.take_released().size());
    }
    EXPECT_EQ(released, 2);
    EXPECT_EQ(sh.streams(), 0u);
    EXPECT_EQ(slurp(svc.dir / "r7-a1-w0.log"), slurp(a));
    EXPECT_EQ(slurp(svc.dir / "r7-a1-w1.log"), slurp(b));
    EXPECT_EQ(slurp(svc.dir / "r7-a1-w0.log"), lines(0, 0, 120, 5));
    EXPECT_EQ(slurp(svc.dir / "r7-a1-w1.log"), lines(1, 0, 400, 200));
    EXPECT_LE(svc.max_request_bytes, 1000u);
    EXPECT_GT(svc.calls, 80);  // about 84 KB in 1000-byte requests
    EXPECT_EQ(slurp(d.path / "agent.logs"), "");
}

// Fencing (issue 23): the shipper counts an answer only when the agent's rule takes it (the lease
// generation not below the highest seen). A deposed leader (generation 1) that still has the
// log's first part acknowledges the rest after the worker exited; a follower answers 503; neither
// moves the offset nor releases the exit, so the leader (generation 2) gets every byte before the
// exit is reported. Without the rule the deposed leader's "have" ends the stream: the exit is
// released and the leader's copy lacks the rest for good.
TEST(LogShipper, AStaleGenerationOrAFollowerDoesNotCountAsDelivered) {
    TempDir d;
    FakeService leader{d.path / "leader"}, deposed{d.path / "deposed"};
    leader.generation = 2;
    deposed.generation = 1;
    enum { Leader, Deposed, Follower } answering = Leader;
    int follower_calls = 0;
    auto to_leader = leader.post(), to_deposed = deposed.post();
    astraeus::exec::LogPost post = [&](const std::string& path, const json& body) -> astraeus::Result<std::pair<int, json>> {
        if (answering == Follower) {
            ++follower_calls;
            return std::pair{503, json{{"error", "writes go to the leader: this replica is a follower"},
                                       {"status", "follower"}, {"leader", "ra"}, {"generation", 2}}};
        }
        return answering == Leader ? to_leader(path, body) : to_deposed(path, body);
    };
    std::int64_t highest = 0;
    int refused = 0;
    auto accept = [&](const json& reply) {  // the agent's rule (NodeAgent::fenced_ok)
        const std::int64_t g = astraeus::exec::reply_generation(reply);
        if (!astraeus::exec::generation_obeyed(g, highest)) return ++refused, false;
        highest = std::max(highest, g);
        return true;
    };
    LogShipper sh(LogShipperConfig{"m1", 4096, 0, 0, ""}, post, accept);
    const fs::path w = d.path / "w0.log";
    const std::string part1 = "epoch 1 loss 0.9\n", part2 = "epoch 2 loss 0.5\n", part3 = "epoch 3 loss 0.2\n";
    append_to(w, part1);
    sh.add({5, 1, 0}, w.string());
    EXPECT_TRUE(sh.tick());
    ASSERT_EQ(slurp(leader.dir / "r5-a1-w0.log"), part1);
    EXPECT_EQ(highest, 2);
    // The worker writes the rest and exits. The deposed leader kept its copy of the first part;
    // it takes the rest and says "have" all of it.
    fs::create_directories(deposed.dir);
    append_to(deposed.dir / "r5-a1-w0.log", part1);
    append_to(w, part2 + part3);
    sh.finish({5, 1, 0}, json{{"kind", "exited"}, {"worker", 0}});
    answering = Deposed;
    EXPECT_FALSE(sh.tick());  // refused: not delivered
    EXPECT_EQ(refused, 1);
    EXPECT_EQ(slurp(deposed.dir / "r5-a1-w0.log"), part1 + part2 + part3);  // (it did write its copy)
    EXPECT_TRUE(sh.take_released().empty());  // the exit waits: the leader lacks the rest
    EXPECT_EQ(sh.streams(), 1u);
    answering = Follower;
    EXPECT_FALSE(sh.tick());  // a follower's 503: not delivered either
    EXPECT_EQ(follower_calls, 1);
    EXPECT_TRUE(sh.take_released().empty());
    answering = Leader;
    for (int k = 0; k < 10 && sh.streams() > 0; ++k) sh.tick();
    EXPECT_EQ(sh.streams(), 0u);
    EXPECT_EQ(sh.take_released().size(), 1u);
    EXPECT_EQ(slurp(leader.dir / "r5-a1-w0.log"), part1 + part2 + part3);
    EXPECT_EQ(slurp(leader.dir / "r5-a1-w0.log"), slurp(w));
}

TEST(LogShipper, ARestartedAgentResumesWhereTheServiceIs) {
    TempDir d;
    FakeService svc{d.path / "service"};
    const fs::path a = d.path / "w0.log";
    const std::string text = lines(0, 0, 100, 30);
    append_to(a, text);
    {
        LogShipper first(LogShipperConfig{"m1", 700, 0, 0, (d.path / "agent.logs").string()}, svc.post());
        first.add({3, 2, 0}, a.string());
        first.tick();
        first.tick();  // 1400 bytes shipped, then the agent dies (kill -9)
    }
    ASSERT_EQ(slurp(svc.dir / "r3-a2-w0.log"), text.substr(0, 1400));
    LogShipper second(LogShipperConfig{"m1", 700, 0, 0, (d.path / "agent.logs").string()}, svc.post());
    second.load();
    EXPECT_EQ(second.streams(), 1u);
    const int before = svc.calls;
    for (int k = 0; k < 100 && second.streams() > 0; ++k) second.tick();
    EXPECT_EQ(second.streams(), 0u);
    EXPECT_EQ(slurp(svc.dir / "r3-a2-w0.log"), text);
    // One question, then the rest from byte 1400 in 700-byte requests (nothing sent twice).
    EXPECT_EQ(svc.calls - before, 1 + static_cast<int>((text.size() - 1400 + 699) / 700));
}

TEST(LogShipper, ARefusalOrTheCapReleasesTheExitEvent) {
    TempDir d;
    FakeService svc{d.path / "service"};
    svc.cap = 1024;
    const fs::path a = d.path / "w0.log";
    append_to(a, lines(0, 0, 200, 10));
    LogShipper sh(LogShipperConfig{"m1", 4096, 0, 0, ""}, svc.post());
    sh.add({1, 1, 0}, a.string());
    sh.finish({1, 1, 0}, json{{"kind", "exited"}});
    sh.tick();
    EXPECT_EQ(sh.take_released().size(), 1u);  // capped: nothing more to send
    EXPECT_EQ(slurp(svc.dir / "r1-a1-w0.log"), slurp(a).substr(0, 1024) + capped_log_note(1024));
    svc.status = 404;
    sh.add({1, 1, 1}, a.string());
    sh.finish({1, 1, 1}, json{{"kind", "exited"}});
    sh.tick();
    EXPECT_EQ(sh.take_released().size(), 1u);
    EXPECT_EQ(sh.streams(), 0u);
    // A stream that is not shipped: its event goes at once.
    sh.finish({9, 9, 9}, json{{"kind", "exited"}});
    EXPECT_EQ(sh.take_released().size(), 1u);
}

TEST(NodeAgentLogs, TheExitIsReportedOnlyOnceTheWholeLogIsAtTheService) {
    TempDir d;
    FakeService svc{d.path / "service"};
    astraeus::exec::NodeAgentConfig c;
    c.name = "m1";
    c.gpus = 1;
    c.work_dir = (d.path / "agent").string();
    c.retry_s = 0.05;
    c.log_chunk_bytes = 1024;
    c.runner.allow_root = true;  // CI runs as root
    const std::string agent_log = c.work_dir + "/logs/ws/r/attempt-1/worker-0.log";
    std::unique_ptr<astraeus::exec::NodeAgent> agent;
    auto ship = svc.post();
    std::int64_t acked = 0;
    bool launched = false, exited = false;
    std::string copy_at_exit, agent_file_at_exit;
    int calls = 0;
    auto post = [&](const std::string& path, const json& body) -> astraeus::Result<std::pair<int, json>> {
        if (++calls > 5000) agent->request_stop();  // a bound: the test fails below
        if (path == "/v1/agent/logs") return ship(path, body);
        if (path == "/v1/agent/register") return std::pair{200, json{{"machine", 1}, {"heartbeat_s", 0.05}, {"events_acked", acked}}};
        json reply{{"heartbeat_s", 0.05}, {"commands", json::array()}};
        for (const json& e : body.value("events", json::array())) {
            acked = std::max(acked, e.value("seq", std::int64_t{0}));
            if (e.value("kind", "") == "exited" && !exited) {
                exited = true;
                copy_at_exit = slurp(svc.dir / "r5-a1-w0.log");
                agent_file_at_exit = slurp(agent_log);
                agent->request_stop();
            }
        }
        reply["events_acked"] = acked;
        if (!launched) {
            launched = true;
            // About 100 KB printed at once, then the exit: about 100 requests of 1 KiB.
            reply["commands"].push_back(
                {{"seq", 1}, {"op", "launch"}, {"run", 5}, {"attempt", 1}, {"worker", 0}, {"run_name", "r"},
                 {"workspace", "ws"}, {"workers", 1}, {"gpus", {0}},
                 {"argv", {"/bin/sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo \"line $i of a worker that talks\"; i=$((i+1)); done"}}});
        }
        return std::pair{200, reply};
    };
    agent = std::make_unique<astraeus::exec::NodeAgent>(c, post);
    ASSERT_TRUE(agent->start());
    ASSERT_TRUE(agent->run());  // stopped by request_stop(), not refused
    ASSERT_TRUE(exited);
    std::ostringstream want;
    for (int i = 0; i < 2000; ++i) want << "line " << i << " of a worker that talks\n";
    EXPECT_EQ(agent_file_at_exit, want.str());
    EXPECT_EQ(copy_at_exit, want.str());
    EXPECT_LE(svc.max_request_bytes, 1024u);
}

}  // namespace
