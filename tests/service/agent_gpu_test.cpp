// GPU utilization from node agents without a network: the sample rule shared with the local
// executor (exec/gpu_sampler.hpp), the protocol field's bounds (exec/agent_gpu.hpp), and the
// agents executor turning a heartbeat's samples into Utilization events of the running workers
// on that machine only (exec/agent_hub_gpu.cpp), values computed by hand.
#include "astraeus/exec/agent_gpu.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <nlohmann/json.hpp>
#include <vector>

#include "astraeus/exec/agent_hub.hpp"
#include "astraeus/exec/gpu_sampler.hpp"

namespace {

using namespace astraeus::exec;
using nlohmann::json;
using K = ExecEvent::Kind;

TEST(MeanUtilization, IsTheMeanOfTheWorkersReadableGpus) {
    const std::vector<double> util{50, 50, 4, 6, 3, -1};
    EXPECT_DOUBLE_EQ(mean_utilization(util, {0, 1}), 50.0);
    EXPECT_DOUBLE_EQ(mean_utilization(util, {2, 3}), 5.0);    // (4 + 6) / 2: busy at >= 5 %
    EXPECT_DOUBLE_EQ(mean_utilization(util, {4, 5}), 3.0);    // GPU 5 unreadable: GPU 4 alone
    EXPECT_DOUBLE_EQ(mean_utilization(util, {5}), -1.0);      // nothing readable: no sample
    EXPECT_DOUBLE_EQ(mean_utilization(util, {6, -1}), -1.0);  // not GPUs of this machine
    EXPECT_DOUBLE_EQ(mean_utilization({}, {0}), -1.0);        // no NVML: no sample
}

struct FixedGpus final : GpuSource {
    std::vector<double> u{10, 20};
    int calls = 0;
    std::vector<GpuInfo> gpus() const override { return {}; }
    std::vector<double> utilization() override {
        ++calls;
        return u;
    }
};

TEST(GpuSampler, SamplesOncePerPeriodAndNeverWithoutASource) {
    auto src = std::make_shared<FixedGpus>();
    GpuSampler s(src, 10);
    const auto t0 = GpuSampler::Clock::now();
    ASSERT_TRUE(s.due(t0));  // the first sample at once
    EXPECT_EQ(s.sample(t0), (std::vector<double>{10, 20}));
    EXPECT_FALSE(s.due(t0 + std::chrono::milliseconds(9999)));
    EXPECT_TRUE(s.due(t0 + std::chrono::seconds(10)));
    EXPECT_EQ(src->calls, 1);
    GpuSampler none(nullptr, 10);
    EXPECT_FALSE(none.enabled());
    EXPECT_FALSE(none.due(t0 + std::chrono::hours(1)));
    EXPECT_TRUE(none.sample(t0).empty());
}

TEST(GpuSamplesField, IsCompactAndBounded) {
    std::deque<std::vector<double>> q{{50, 4.4, -1}, {99.6, 0, 4294967295.0}};
    EXPECT_EQ(gpu_samples_json(q).dump(), "[[50,4,-1],[100,0,4294967295]]");
    json body;
    body["gpu_util"] = json::array();
    for (int i = 0; i < 10; ++i) body["gpu_util"].push_back(json::array({i, 1, 2, 3, 4}));
    body["gpu_util"][9][1] = "x";
    const auto s = parse_gpu_samples(body, 3);
    ASSERT_EQ(s.size(), kMaxGpuSamples);                   // the newest 6 of 10
    EXPECT_EQ(s.front(), (std::vector<double>{4, 1, 2}));  // cut to the machine's 3 GPUs
    EXPECT_EQ(s.back(), (std::vector<double>{9, -1, 2}));  // not a number: unreadable
    EXPECT_TRUE(parse_gpu_samples(json{{"gpu_util", "50"}}, 3).empty());
    EXPECT_TRUE(parse_gpu_samples(json::object(), 3).empty());
}

std::vector<ExecEvent> drain(AgentHub& h, std::int64_t now) {
    std::vector<ExecEvent> out;
    ExecEvent e{K::Started, 0};
    while (h.pop_due(now, e)) out.push_back(e);
    return out;
}

json hb(const std::string& session, std::int64_t acked, json events = json::array()) {
    return json{{"session", session}, {"commands_acked", acked}, {"events", std::move(events)}};
}

ExecRun one_worker(std::int64_t run, std::int64_t machine, std::vector<int> gpus) {
    ExecRun r;
    r.run = run;
    r.workers = 1;
    r.attempt = 1;
    r.run_name = "r" + std::to_string(run);
    r.workspace = "ml";
    r.argv = {"/bin/true"};
    r.placement.resize(1);
    r.placement[0].machine = machine;
    r.placement[0].gpus = std::move(gpus);
    return r;
}

TEST(AgentHubGpu, HeartbeatSamplesBecomeUtilizationEventsOfRunningWorkersOnThatMachine) {
    AgentHub h{AgentHubConfig{2, 10, 29500, 2000, 0}};
    h.add_machine(1, "m1", 4, "10.0.0.1", 100);
    h.add_machine(2, "m2", 4, "10.0.0.2", 100);
    h.on_register(100, 1,
                  json{{"name", "m1"}, {"gpus", 4}, {"session", "s1"}, {"workers", json::array()}});
    h.on_register(100, 2,
                  json{{"name", "m2"}, {"gpus", 4}, {"session", "s2"}, {"workers", json::array()}});
    h.launch(101, one_worker(7, 1, {2, 3}));  // running below
    h.launch(101, one_worker(8, 1, {0, 1}));  // still starting: no samples
    h.launch(101, one_worker(9, 2, {0, 1}));  // running, on the other machine
    (void)drain(h, 101);
    h.on_heartbeat(
        102, 1,
        hb("s1", 2,
           json::array({json{
               {"seq", 1}, {"kind", "started"}, {"run", 7}, {"attempt", 1}, {"worker", 0}}})));
    h.on_heartbeat(
        102, 2,
        hb("s2", 1,
           json::array({json{
               {"seq", 1}, {"kind", "started"}, {"run", 9}, {"attempt", 1}, {"worker", 0}}})));
    (void)drain(h, 102);
    json body = hb("s1", 2);
    body["gpu_util"] = json::array({json::array({90, 90, 4, 6}), json::array({90, 90, 3, -1})});
    h.on_heartbeat(105, 1, body);
    const auto es = drain(h, 105);
    ASSERT_EQ(es.size(), 2u);  // run 7's worker, once per sample; not run 8 (starting), not run 9
    for (const auto& e : es) {
        EXPECT_EQ(e.kind, K::Utilization);
        EXPECT_EQ(e.t, 105);
        EXPECT_EQ(e.run, 7);
        EXPECT_EQ(e.worker, 0);
        EXPECT_EQ(e.attempt, 1);
    }
    EXPECT_DOUBLE_EQ(es[0].level, 5.0);  // (4 + 6) / 2
    EXPECT_DOUBLE_EQ(es[1].level, 3.0);  // GPU 3 unreadable
    // A stale session's samples are not taken (the agent must register again).
    body["session"] = "old";
    EXPECT_TRUE(h.on_heartbeat(106, 1, body).value("register", false));
    EXPECT_TRUE(drain(h, 106).empty());
}

}  // namespace
