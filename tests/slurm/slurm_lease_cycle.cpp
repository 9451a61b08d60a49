// The lease cycle through libslurm (exec/slurm_client.hpp) on the Slurm test cluster, the way
// Astraeus drives a run: submit a 2-node gang (8 GPUs per node) held and requeueable; admit it on
// the nodes chosen (release_on) and wait until it runs there; at the lease end send the checkpoint
// signal (SIGTERM, to the batch shell too), let it checkpoint and exit within the grace,
// requeue-held, then resume it on other nodes. Checks every step (nodes, states, restarts, the
// job's own output: its environment on every node, the checkpoint, the restart count) and prints
// the latencies: decision -> running, and lease cycle (signal -> running again).
// usage: slurm_lease_cycle WORKDIR [CYCLES]   (SLURM_CONF must name the cluster; exit 77 when
// slurmctld does not answer). With CYCLES > 1 it is the benchmark of docs/performance.md.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <ctime>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "astraeus/exec/slurm_client.hpp"
#include "slurm_job_checks.hpp"

using namespace astraeus::exec::slurm;
using namespace slurm_test;

namespace {

double secs(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

double pct(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const std::size_t i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: slurm_lease_cycle WORKDIR [CYCLES]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const int cycles = argc > 2 ? std::atoi(argv[2]) : 1;
    auto client = SlurmClient::open("");
    if (!client) {
        std::printf("SKIP: %s\n", client.error().message.c_str());
        return 77;
    }
    const SlurmClient& c = *client;
    auto nodes = c.nodes();
    check(nodes && nodes->size() == 4, "4 nodes");
    if (nodes)
        for (const auto& n : *nodes) check(n.gpus == 8 && !n.down, n.name + ": 8 GPUs, up");

    JobSpec spec;
    spec.name = "astraeus-lease-test";
    spec.nodes = 2;
    spec.gpus_per_node = 8;
    spec.workdir = dir;
    spec.output = dir + "/job.out";
    spec.env = {"PATH=/usr/bin:/bin", "ASTRAEUS_RUN=lease-test"};
    // The batch shell: one task per node (srun) that prints its environment, then waits; on the
    // checkpoint signal the shell writes the checkpoint line and exits 0.
    spec.script =
        "#!/bin/bash\n"
        "echo \"start restart=${SLURM_RESTART_COUNT:-0} nodes=$SLURM_JOB_NODELIST\"\n"
        "trap 'echo \"checkpoint restart=${SLURM_RESTART_COUNT:-0}\"; kill $step 2>/dev/null; exit 0' TERM\n"
        "srun -l bash -c 'echo \"rank=$SLURM_PROCID node=$SLURMD_NODENAME cvd=$CUDA_VISIBLE_DEVICES\"; "
        "exec sleep 600' &\n"
        "step=$!\n"
        "wait $step\n";
    auto id = c.submit_held(spec);
    check(id.has_value(), "submit held: " + (id ? std::to_string(*id) : id.error().message));
    if (!id) return 1;
    auto j = wait_for(c, *id, [](const JobInfo& x) { return x.state == JobState::Pending; }, 5);
    check(j && j->held, "held after submit");

    std::vector<double> to_running, cycle;
    const std::vector<std::string> places = {"gpu2,gpu3", "gpu1,gpu4"};
    auto now_s = [] { return static_cast<astraeus::Seconds>(std::time(nullptr)); };

    auto t0 = Clock::now();
    auto ok = c.release_on(*id, places[0], 100, now_s());
    check(ok.has_value(), "admit on gpu2,gpu3" + (ok ? std::string() : ": " + ok.error().message));
    j = wait_for(c, *id, [](const JobInfo& x) { return x.state == JobState::Running; }, 30);
    to_running.push_back(secs(t0, Clock::now()));
    check(j && j->state == JobState::Running && j->nodes == "gpu[2-3]",
          "running on gpu[2-3] (got " + (j ? j->nodes : std::string("?")) + ")");
    check(j && j->priority == 100, "priority = the rank (SiteFactor)");

    for (int k = 1; k <= cycles; ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // let srun start its tasks
        const auto s0 = Clock::now();
        // Lease end not renewed: the checkpoint signal, a grace of up to 5 s, requeue held.
        check(c.signal(*id, SIGTERM).has_value(), "checkpoint signal");
        j = wait_for(c, *id, [](const JobInfo& x) { return x.state != JobState::Running && !x.completing; }, 5);
        check(j && j->state == JobState::Complete && j->exit_code == 0,
              "the job checkpointed and exited 0 within the grace (state " +
                  std::string(j ? to_string(j->state) : "?") + ")");
        check(c.requeue_hold(*id).has_value(), "requeue held");
        j = wait_for(c, *id, [](const JobInfo& x) { return x.state == JobState::Pending && x.held; }, 10);
        check(j && j->held && j->restarts == static_cast<std::uint32_t>(k), "pending, held, restarts " + std::to_string(k));
        // Resume on the other pair of nodes.
        const std::string& where = places[static_cast<std::size_t>(k) % 2];
        const auto r0 = Clock::now();
        ok = c.release_on(*id, where, 100, now_s());
        check(ok.has_value(), "resume on " + where + (ok ? std::string() : ": " + ok.error().message));
        j = wait_for(c, *id, [](const JobInfo& x) { return x.state == JobState::Running; }, 30);
        const auto r1 = Clock::now();
        to_running.push_back(secs(r0, r1));
        cycle.push_back(secs(s0, r1));
        const std::string want = k % 2 ? "gpu[1,4]" : "gpu[2-3]";
        check(j && j->state == JobState::Running && j->nodes == want,
              "running again on " + want + " (got " + (j ? j->nodes : std::string("?")) + ")");
        check(j && j->priority == 100, "the rank survived the requeue");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    check(c.cancel(*id).has_value(), "cancel");
    wait_for(c, *id, [](const JobInfo& x) { return x.state == JobState::Cancelled && !x.completing; }, 10);

    std::ifstream in(spec.output);
    const std::string out((std::istreambuf_iterator<char>(in)), {});
    std::printf("--- job output ---\n%s------------------\n", out.c_str());
    check(out.find("start restart=0 nodes=gpu[2-3]") != std::string::npos, "first segment on gpu[2-3]");
    check(out.find("checkpoint restart=0") != std::string::npos, "checkpoint written on the signal");
    check(out.find("start restart=1 nodes=gpu[1,4]") != std::string::npos, "resumed with SLURM_RESTART_COUNT=1 on gpu[1,4]");
    check(out.find("0: rank=0 node=gpu2 cvd=0,1,2,3,4,5,6,7") != std::string::npos &&
              out.find("1: rank=1 node=gpu3 cvd=0,1,2,3,4,5,6,7") != std::string::npos,
          "one task per node, 8 GPUs each (CUDA_VISIBLE_DEVICES)");

    std::printf("decision -> running (s): n=%zu p50=%.3f p99=%.3f max=%.3f\n", to_running.size(),
                pct(to_running, 50), pct(to_running, 99), pct(to_running, 100));
    if (!cycle.empty())
        std::printf("lease cycle, signal -> running again (s): n=%zu p50=%.3f p99=%.3f max=%.3f\n",
                    cycle.size(), pct(cycle, 50), pct(cycle, 99), pct(cycle, 100));
    std::printf("%s (%d failed checks)\n", fails ? "FAIL" : "PASS", fails);
    return fails ? 1 : 0;
}
