// Which partitions become pools and in which mode (src/astraeus/exec/slurm_pools.hpp), on the
// partitions of the backfill test cluster (scripts/slurm-test-cluster.sh SCHED=backfill).
#include "astraeus/exec/slurm_pools.hpp"

#include <gtest/gtest.h>

using namespace astraeus::exec;
using slurm::NodeInfo;
using slurm::PartitionInfo;

namespace {
NodeInfo node(const std::string& name, int gpus) {
    NodeInfo n;
    n.name = name;
    n.gpus = gpus;
    return n;
}
std::vector<NodeInfo> nodes() {
    return {node("gpu1", 8), node("gpu2", 8), node("gpu3", 4), node("cpu1", 0), node("cpu2", 0)};
}
std::vector<PartitionInfo> parts() {
    return {{"batch", {"cpu1", "cpu2"}}, {"astraeus", {"gpu1", "gpu2"}}, {"mixed", {"gpu2", "gpu3", "cpu1"}}};
}
std::vector<std::string> names(const SlurmPool& p) {
    std::vector<std::string> out;
    for (const auto& n : p.nodes) out.push_back(n.name);
    return out;
}
}  // namespace

TEST(SlurmPools, EveryGpuPartitionWhenNoneIsNamed) {
    auto p = slurm_pools(parts(), nodes(), {});
    ASSERT_TRUE(p) << p.error().message;
    ASSERT_EQ(p->size(), 2u);  // batch has no GPU node; gpu2 belongs to astraeus, listed first
    EXPECT_EQ((*p)[0].partition, "astraeus");
    EXPECT_EQ(names((*p)[0]), (std::vector<std::string>{"gpu1", "gpu2"}));
    EXPECT_EQ((*p)[1].partition, "mixed");
    EXPECT_EQ(names((*p)[1]), (std::vector<std::string>{"gpu3"}));
    EXPECT_EQ((*p)[1].nodes[0].gpus, 4);
}

TEST(SlurmPools, OnlyTheOwnedPartitionsInTheOrderNamed) {
    auto p = slurm_pools(parts(), nodes(), {"mixed", "astraeus"});
    ASSERT_TRUE(p) << p.error().message;
    ASSERT_EQ(p->size(), 2u);
    EXPECT_EQ((*p)[0].partition, "mixed");
    EXPECT_EQ(names((*p)[0]), (std::vector<std::string>{"gpu2", "gpu3"}));
    EXPECT_EQ(names((*p)[1]), (std::vector<std::string>{"gpu1"}));
    p = slurm_pools(parts(), nodes(), {"astraeus"});
    ASSERT_TRUE(p);
    ASSERT_EQ(p->size(), 1u);
    EXPECT_EQ(names((*p)[0]), (std::vector<std::string>{"gpu1", "gpu2"}));
}

TEST(SlurmPools, ClearErrors) {
    auto p = slurm_pools(parts(), nodes(), {"astraeus", "gpu"});
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().message,
              "slurm.partitions: Slurm has no partition 'gpu' (it has: batch, astraeus, mixed; sinfo -s)");
    p = slurm_pools(parts(), nodes(), {"batch"});
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().message.find("partition 'batch' has no GPU nodes"), std::string::npos) << p.error().message;
    p = slurm_pools(parts(), nodes(), {"astraeus", "astraeus"});
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().message, "slurm.partitions names 'astraeus' twice");
}

TEST(SlurmMode, BackfillNeedsOwnedPartitions) {
    auto m = slurm_mode("sched/backfill", {}, parts());
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().message.find("SchedulerType=sched/backfill and no partition is named"), std::string::npos);
    EXPECT_NE(m.error().message.find("\"partitions\": [\"astraeus\"]"), std::string::npos);
    m = slurm_mode("sched/builtin", {}, parts());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->name, "cluster-wide");
    EXPECT_TRUE(m->warnings.empty());
}

TEST(SlurmMode, OwnedPartitionsWarnAboutSharedNodes) {
    auto m = slurm_mode("sched/backfill", {"astraeus"}, parts());
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(m->name, "owned partitions");
    EXPECT_NE(m->text.find("keeps SchedulerType=sched/backfill (backfill and hetjobs"), std::string::npos) << m->text;
    ASSERT_EQ(m->warnings.size(), 1u);  // mixed shares gpu2; batch shares nothing
    EXPECT_NE(m->warnings[0].find("partition 'mixed', which Astraeus does not own, also has its node(s) gpu2:"),
              std::string::npos)
        << m->warnings[0];
    m = slurm_mode("sched/backfill", {"astraeus", "mixed"}, parts());
    ASSERT_TRUE(m);
    ASSERT_EQ(m->warnings.size(), 1u);  // batch shares cpu1 with mixed
    EXPECT_NE(m->warnings[0].find("partition 'batch'"), std::string::npos);
    EXPECT_NE(m->warnings[0].find("node(s) cpu1:"), std::string::npos);
}
