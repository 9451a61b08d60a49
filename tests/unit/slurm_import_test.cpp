// Slurm accounting import (src/astraeus/slurm_import/): hostlists, GPUs in TRES strings, records
// into goodput events. Values by hand; the CLI test (tests/cli/import_slurm_test.sh) covers the
// table on fixtures captured from a real Slurm cluster.
#include <gtest/gtest.h>

#include <chrono>

#include "astraeus/slurm_import/hostlist.hpp"
#include "astraeus/slurm_import/sacct_records.hpp"
#include "astraeus/slurm_import/segments_to_events.hpp"

namespace astraeus::slurm {
namespace {

using V = std::vector<std::string>;

TEST(SlurmHostlist, Expands) {
    EXPECT_EQ(*expand_hostlist("gpu[1-3,7]"), (V{"gpu1", "gpu2", "gpu3", "gpu7"}));
    EXPECT_EQ(*expand_hostlist("n[08-10]"), (V{"n08", "n09", "n10"}));
    EXPECT_EQ(*expand_hostlist("a[01-02]b,c5"), (V{"a01b", "a02b", "c5"}));
    EXPECT_EQ(*expand_hostlist("r[1-2]n[1-2]"), (V{"r1n1", "r1n2", "r2n1", "r2n2"}));
    EXPECT_EQ(*expand_hostlist("gpu3"), (V{"gpu3"}));
    EXPECT_TRUE(expand_hostlist("None assigned")->empty());
    EXPECT_TRUE(expand_hostlist("")->empty());
}

TEST(SlurmHostlist, Errors) {
    EXPECT_EQ(expand_hostlist("n[1-3").error().message, "hostlist 'n[1-3': '[' without ']'");
    EXPECT_EQ(expand_hostlist("n[3-1]").error().message,
              "hostlist 'n[3-1]': range '3-1' ends below its start");
    EXPECT_EQ(expand_hostlist("n[a]").error().message, "hostlist 'n[a]': expected a number, got 'a'");
    EXPECT_FALSE(expand_hostlist("n[0-9999999]").has_value());
}

// Issue 18: a 200-byte NodeList that stands for a million names (it ran past 60 s and 2.6 GB) is
// refused at once, naming the bound and the product; the largest allowed list still expands.
TEST(SlurmHostlist, ExpansionIsBounded) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = expand_hostlist("n[0-999]x[0-999]");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().message, "hostlist 'n[0-999]x[0-999]': more than 65536 names (1000 x 1000)");
    EXPECT_LT(s, 0.5);
    EXPECT_FALSE(expand_hostlist("n[0-65536]").has_value());  // 65,537 names
    auto most = expand_hostlist("r[0-255]n[000-255]");      // 65,536 names: allowed
    ASSERT_TRUE(most) << most.error().message;
    EXPECT_EQ(most->size(), 65536U);
    EXPECT_EQ(most->back(), "r255n255");
    // Many short groups: bounded the same way.
    EXPECT_FALSE(expand_hostlist("a[0-99]b[0-99]c[0-99]").has_value());
}

// Job arrays times node lists: the whole import's expansion is bounded (1,000,000 segments,
// 5,000,000 node names), refused with the record's place.
TEST(SlurmArrays, ImportExpansionIsBounded) {
    std::string text = "JobID|Account|Partition|State|Submit|Start|End|NodeList|AllocTRES\n";
    for (int i = 0; i < 2; ++i)
        text += std::to_string(100 + i) + "_[0-599999]|ml|gpu|PENDING|1793613600|Unknown|Unknown|None assigned|\n";
    const auto t0 = std::chrono::steady_clock::now();
    auto segs = parse_sacct_parsable(text, "big.txt");
    ASSERT_FALSE(segs.has_value());
    EXPECT_NE(segs.error().message.find("big.txt:3: the input expands to more than 1000000 job segments"),
              std::string::npos)
        << segs.error().message;
    std::string json = R"({"jobs": [)";
    for (int i = 0; i < 80; ++i)
        json += std::string(i ? "," : "") + R"({"job_id": )" + std::to_string(1000 + i) +
                R"(, "name": "x", "account": "ml", "partition": "gpu", "state": {"current": ["COMPLETED"]},
                   "time": {"submission": 1793613600, "start": 1793613600, "end": 1793617200},
                   "nodes": "n[0-255]m[0-255]", "tres": {"allocated": [{"type": "gres", "name": "gpu", "count": 8}]}})";
    json += "]}";
    auto many = parse_sacct_json(json, "big.json");
    ASSERT_FALSE(many.has_value());
    EXPECT_NE(many.error().message.find("more than 5000000 node names"), std::string::npos) << many.error().message;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
}

TEST(SlurmTres, Gpus) {
    EXPECT_EQ(*gpus_in_tres("billing=2,cpu=2,gres/gpu=16,node=2"), 16);
    EXPECT_EQ(*gpus_in_tres("cpu=8,gres/gpu:a100=4,gres/gpu:v100=2"), 6);
    EXPECT_EQ(*gpus_in_tres("cpu=8,gres/gpu=6,gres/gpu:a100=4,gres/gpu:v100=2"), 6);
    EXPECT_EQ(*gpus_in_tres("cpu=8,node=1"), 0);
    EXPECT_EQ(*gpus_in_tres(""), 0);
    EXPECT_EQ(gpus_in_tres("gres/gpu=-1").error().message,
              "'gres/gpu=-1': expected a GPU count (gres/gpu=N)");
}

Segment seg(std::string job, std::string state, Seconds submit, std::optional<Seconds> start,
            std::optional<Seconds> end, V nodes, std::int64_t gpus) {
    Segment s;
    s.job = std::move(job);
    s.account = "ml";
    s.partition = "gpu";
    s.state = std::move(state);
    s.submit_s = submit;
    s.start_s = start;
    s.end_s = end;
    s.nodes = std::move(nodes);
    s.gpus = gpus;
    s.where = "f:1";
    return s;
}

TEST(SlurmArrays, PendingElementsAreOneJobEach) {
    EXPECT_EQ(*array_elements("68_[0-5]"), (V{"68_0", "68_1", "68_2", "68_3", "68_4", "68_5"}));
    EXPECT_EQ(*array_elements("69_[1,3-4%2]"), (V{"69_1", "69_3", "69_4"}));
    EXPECT_EQ(*array_elements("70_7"), V{"70_7"});
    EXPECT_EQ(*array_elements("80+1"), V{"80+1"});
    EXPECT_FALSE(array_elements("68_[5-0]"));
    EXPECT_FALSE(array_elements("68_[a]"));
    EXPECT_FALSE(array_elements("68_[0-2000000]"));
    // In the text form: one segment per element, each asking its requested GPUs.
    const std::string text =
        "JobID|Account|Partition|State|Submit|Start|End|NodeList|AllocTRES|ReqTRES\n"
        "68_[0-2]|ml|gpu|PENDING|1793613600|Unknown|Unknown|None assigned||gres/gpu=2\n";
    auto segs = parse_sacct_parsable(text, "t.txt");
    ASSERT_TRUE(segs) << segs.error().message;
    ASSERT_EQ(segs->size(), 3U);
    EXPECT_EQ((*segs)[2].job, "68_2");
    EXPECT_EQ((*segs)[2].requested_gpus, 2);
    // A wall clock that is not UTC: 10:00 at +05:00 is 05:00 UTC (the converter is the caller's).
    const std::string local =
        "JobID|Account|Partition|State|Submit|Start|End|NodeList|AllocTRES\n"
        "1|ml|gpu|COMPLETED|2026-11-02T10:00:00|2026-11-02T10:00:00|2026-11-02T11:00:00|n1|gres/gpu=1\n";
    auto shifted = parse_sacct_parsable(local, "l.txt", [](Seconds w) -> Result<Seconds> { return w - 5 * 3600; });
    ASSERT_TRUE(shifted) << shifted.error().message;
    EXPECT_EQ((*shifted)[0].submit_s, 1793613600 - 5 * 3600);
}

TEST(SlurmEvents, RequeueNodeFailAndEnd) {
    auto log = segments_to_events({
        seg("9", "NODE_FAIL", 100, 160, 220, {"b1"}, 4),
        seg("7", "REQUEUED", 0, 60, 120, {"a1", "a2"}, 16),
        seg("7", "COMPLETED", 120, 180, 300, {"a2", "a3"}, 16),
        seg("9", "RUNNING", 220, 240, std::nullopt, {"b2"}, 4),
    });
    ASSERT_TRUE(log.has_value()) << log.error().message;
    EXPECT_EQ(log->events,
              R"({"event":"submit","gpus":16,"pool":"gpu","run":"7","t":0,"workers":1,"workspace":"ml"}
{"event":"place","parts":[{"gpus":8,"machine":"a1"},{"gpus":8,"machine":"a2"}],"run":"7","t":60}
{"event":"start","run":"7","t":60}
{"event":"submit","gpus":4,"pool":"gpu","run":"9","t":100,"workers":1,"workspace":"ml"}
{"event":"stop","reason":"preemption","run":"7","t":120}
{"event":"release","run":"7","t":120}
{"event":"place","parts":[{"gpus":4,"machine":"b1"}],"run":"9","t":160}
{"event":"start","run":"9","t":160}
{"event":"place","parts":[{"gpus":8,"machine":"a2"},{"gpus":8,"machine":"a3"}],"run":"7","t":180}
{"event":"start","run":"7","t":180}
{"event":"fail","run":"9","t":220}
{"event":"release","run":"9","t":220}
{"event":"place","parts":[{"gpus":4,"machine":"b2"}],"run":"9","t":240}
{"event":"start","run":"9","t":240}
{"event":"end","run":"7","t":300}
)");
    EXPECT_EQ(log->jobs, 2);
    EXPECT_EQ(log->segments, 4);
    EXPECT_EQ(log->jobs_still_going, 1);
    EXPECT_EQ(log->last_s, 300);
    // Slurm's own figure: 16 x (60 + 120) = 2880; 9 up to 300: 4 x 60 + 4 x 60 = 480.
    EXPECT_EQ(slurm_allocated_gpu_seconds(log->held["7"], 300), 2880);
    EXPECT_EQ(slurm_allocated_gpu_seconds(log->held["9"], 300), 480);
}

TEST(SlurmEvents, UnevenSplitAndNeverStarted) {
    Segment pending = seg("5", "CANCELLED", 10, std::nullopt, 70, {}, 0);
    pending.requested_gpus = 2;
    auto log = segments_to_events({seg("4", "COMPLETED", 0, 0, 60, {"n1", "n2"}, 3), pending,
                                   seg("6", "COMPLETED", 0, 0, 60, {"n1"}, 0)});
    ASSERT_TRUE(log.has_value()) << log.error().message;
    EXPECT_NE(log->events.find(R"("parts":[{"gpus":2,"machine":"n1"},{"gpus":1,"machine":"n2"}])"),
              std::string::npos);
    EXPECT_NE(log->events.find(R"({"event":"submit","gpus":2,"pool":"gpu","run":"5","t":10,)"),
              std::string::npos);
    EXPECT_NE(log->events.find(R"({"event":"end","run":"5","t":70})"), std::string::npos);
    EXPECT_EQ(log->jobs_without_gpus, 1);
    ASSERT_EQ(log->notes.size(), 1U);
    EXPECT_EQ(log->notes[0], "job 4: 3 GPUs on 2 nodes, split as evenly as possible by machine "
                             "(sacct gives the total, not each node's share)");
}

TEST(SlurmEvents, Errors) {
    EXPECT_EQ(segments_to_events({seg("1", "COMPLETED", 100, 50, 200, {"n1"}, 1)}).error().message,
              "f:1: job 1: Start 1970-01-01T00:00:50Z is before its Submit 1970-01-01T00:01:40Z");
    EXPECT_EQ(segments_to_events({seg("1", "COMPLETED", 0, 50, 20, {"n1"}, 1)}).error().message,
              "f:1: job 1: End 1970-01-01T00:00:20Z is before Start 1970-01-01T00:00:50Z");
    // A record with Start but no nodes (cancelled while pending): waiting, never held.
    auto never = segments_to_events({seg("1", "CANCELLED", 0, 50, 50, {}, 1)});
    ASSERT_TRUE(never.has_value());
    EXPECT_EQ(never->events, "{\"event\":\"submit\",\"gpus\":1,\"pool\":\"gpu\",\"run\":\"1\",\"t\":0,"
                             "\"workers\":1,\"workspace\":\"ml\"}\n{\"event\":\"end\",\"run\":\"1\",\"t\":50}\n");
}

}  // namespace
}  // namespace astraeus::slurm
