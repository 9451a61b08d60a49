// The foreign view of a Slurm cluster (exec/slurm_foreign.hpp) on text captured from the Slurm
// test cluster (Slurm 22.05.8, scripts/slurm-test-cluster.sh): `sbatch --gres=gpu:4 -w gpu2 -J
// foreign --wrap 'sleep 60'` (job 2) and `sbatch --gres=gpu:2 -N2 -w gpu3,gpu4 -J astraeus-ws-r1`
// (job 3), then `scontrol -d show node -o` and `scontrol -d show job`. libslurm returns the same
// strings (gres_used, nodes, gres_detail_str) that scontrol prints.
#include <gtest/gtest.h>

#include "astraeus/exec/slurm_foreign.hpp"
#include "astraeus/exec/slurm_pending.hpp"

namespace sl = astraeus::exec::slurm;

// `scontrol -d show node -o gpu2`: "Gres=gpu:8 GresDrain=N/A GresUsed=gpu:4"; gpu3: GresUsed=gpu:2.
// `scontrol -d show job 2`: "NodeList=gpu2" / "Nodes=gpu2 CPU_IDs=0 Mem=0 GRES=gpu:4(IDX:0-3)".
// `scontrol -d show job 3`: "NodeList=gpu[3-4]" / "Nodes=gpu[3-4] CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)".
TEST(SlurmForeign, GresCountsOfCapturedText) {
    EXPECT_EQ(sl::gres_gpu_count("gpu:8"), 8);
    EXPECT_EQ(sl::gres_gpu_count("gpu:4"), 4);
    EXPECT_EQ(sl::gres_gpu_count("gpu:4(IDX:0-3)"), 4);
    EXPECT_EQ(sl::gres_gpu_count("gpu:2(IDX:0-1)"), 2);
    EXPECT_EQ(sl::gres_gpu_count("gpu:a100:4(S:0-1),nic:2"), 4);
    EXPECT_EQ(sl::gres_gpu_count("gpu:a100:2(IDX:0-1),gpu:v100:1(IDX:4)"), 3);
    EXPECT_EQ(sl::gres_gpu_count(""), 0);        // the warmup job: "GRES="
    EXPECT_EQ(sl::gres_gpu_count("N/A"), 0);     // GresDrain=N/A
    EXPECT_EQ(sl::gres_gpu_count("(null)"), 0);  // JOB_GRES=(null)
    EXPECT_EQ(sl::gres_gpu_count("nic:2"), 0);
}

TEST(SlurmForeign, PerNodeGpusOfAJob) {
    // One detail for the two nodes (scontrol's grouping) or one per node (libslurm's records).
    auto g = sl::job_node_gpus({3, "astraeus-ws-r1", "/tmp", "gpu[3-4]", {"gpu:2(IDX:0-1)"}});
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_EQ(*g, (std::map<std::string, int>{{"gpu3", 2}, {"gpu4", 2}}));
    g = sl::job_node_gpus({7, "x", "/tmp", "gpu[1,3]", {"gpu:1(IDX:5)", "gpu:6(IDX:0-5)"}});
    ASSERT_TRUE(g);
    EXPECT_EQ(*g, (std::map<std::string, int>{{"gpu1", 1}, {"gpu3", 6}}));
    g = sl::job_node_gpus({1, "warmup", "/tmp", "gpu1", {""}});  // no GPUs
    ASSERT_TRUE(g);
    EXPECT_TRUE(g->empty());
    auto bad = sl::job_node_gpus({9, "x", "/tmp", "gpu[1-3]", {"gpu:1", "gpu:2"}});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message, "job 9: 2 gres details for 3 nodes (gpu[1-3])");
    EXPECT_FALSE(sl::job_node_gpus({9, "x", "/tmp", "gpu[3-", {"gpu:1"}}));
}

TEST(SlurmForeign, OnlyJobsOutsideTheServiceCount) {
    const std::string runs = "/data/astraeus-data/runs";
    const std::vector<sl::JobAlloc> allocs = {
        {1, "warmup", "/tmp", "gpu1", {""}},
        {2, "foreign", "/tmp", "gpu2", {"gpu:4(IDX:0-3)"}},
        // This service's own job (named astraeus-*, in its runs folder): not foreign.
        {3, "astraeus-ws-r1", runs + "/ws/r1", "gpu[3-4]", {"gpu:2(IDX:0-1)"}},
        // Named like ours but elsewhere (another service, or a user's look-alike): foreign.
        {4, "astraeus-ws-r2", "/tmp", "gpu[2,4]", {"gpu:1(IDX:4)", "gpu:3(IDX:2-4)"}},
        {5, "broken", "/tmp", "gpu[1-", {"gpu:8"}},
    };
    int skipped = 0;
    const auto f = sl::foreign_gpus(allocs, runs, &skipped);
    EXPECT_EQ(skipped, 1);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f.at("gpu2").gpus, 5);
    EXPECT_EQ(f.at("gpu2").jobs, (std::vector<std::uint32_t>{2, 4}));
    EXPECT_EQ(f.at("gpu4").gpus, 3);
    EXPECT_EQ(f.at("gpu4").jobs, (std::vector<std::uint32_t>{4}));
    EXPECT_EQ(sl::foreign_text("gpu2", f.at("gpu2")),
              "5 GPUs of node gpu2 are held by Slurm jobs outside Astraeus (jobs 2, 4)");
    EXPECT_EQ(sl::foreign_text("gpu4", {1, {4}}), "1 GPU of node gpu4 is held by Slurm jobs outside Astraeus (job 4)");
    EXPECT_TRUE(sl::own_job("astraeus-ws-r1", runs + "/ws/r1", runs));
    EXPECT_FALSE(sl::own_job("astraeus-ws-r1", runs + "-old/ws/r1", runs));
    EXPECT_FALSE(sl::own_job("job", runs + "/ws/r1", runs));
}

// A released job that Slurm does not start (exec/slurm_pending.hpp): the bound, the jobs outside
// the service per node (any resources: a CPU-only job counts), when a withheld node clears.
TEST(SlurmPending, BoundBlockAndTexts) {
    const std::string runs = "/var/astraeus-runs";
    EXPECT_FALSE(sl::past_pending_bound(-1, 100, 5));  // not released
    EXPECT_FALSE(sl::past_pending_bound(100, 104, 5));
    EXPECT_TRUE(sl::past_pending_bound(100, 105, 5));
    const std::vector<sl::JobAlloc> allocs = {
        {21, "someone-else-cpus", "/home/u", "gpu3", {}},  // CPUs only: no gres detail
        {6, "someone-else-gpus", "/home/u", "gpu[3-4]", {"gpu:8(IDX:0-7)"}},
        {22, "astraeus-ml-c", runs + "/ml/c", "gpu3", {"gpu:8(IDX:0-7)"}},  // ours
        {7, "broken", "/tmp", "gpu[1-", {}},
    };
    const auto on = sl::foreign_jobs_per_node(allocs, runs);
    ASSERT_EQ(on.size(), 2u);
    EXPECT_EQ(on.at("gpu3"), (std::vector<std::uint32_t>{6, 21}));
    EXPECT_EQ(on.at("gpu4"), (std::vector<std::uint32_t>{6}));
    sl::BlockedNode b{{21}, 1000, ""};
    EXPECT_TRUE(sl::still_blocked(b, on.at("gpu3"), 5000, 30));  // job 21 still there: no time limit
    EXPECT_FALSE(sl::still_blocked(b, {6}, 1001, 30));          // job 21 gone
    const sl::BlockedNode none{{}, 1000, ""};
    EXPECT_TRUE(sl::still_blocked(none, {}, 1029, 30));
    EXPECT_FALSE(sl::still_blocked(none, {}, 1030, 30));
    EXPECT_EQ(sl::not_started_text(22, "gpu3", 5, "Resources"),
              "Slurm did not start job 22 on gpu3 within 5 s (Resources): placed again");
    EXPECT_EQ(sl::blocked_text("gpu3", 22, "Resources", {21}, 30),
              "node gpu3 did not start Astraeus's job 22 (Resources): Slurm jobs outside Astraeus hold its CPUs or "
              "memory (job 21)");
    EXPECT_EQ(sl::blocked_text("gpu3", 22, "Priority", {}, 30),
              "node gpu3 did not start Astraeus's job 22 (Priority): withheld for 30 s");
}
