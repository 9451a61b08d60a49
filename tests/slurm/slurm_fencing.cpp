// The fencing token on Slurm (docs/slurm.md, "Several service replicas"), on the Slurm test
// cluster with scripts/slurm/job_submit.lua in slurmctld: a job submitted by the leader of lease
// generation 1 and adopted (stamped) by the leader of generation 2 refuses the deposed leader's
// late release, hold and StartTime updates (the job stays held, pending, where it was), while
// the new leader's release runs it and an update without a stamp (an administrator's) passes.
// usage: slurm_fencing WORKDIR   (SLURM_CONF must name the cluster; exit 77 when slurmctld does
// not answer or the cluster has no job_submit.lua).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "astraeus/exec/slurm_client.hpp"
#include "slurm_job_checks.hpp"

using namespace astraeus::exec::slurm;
using namespace slurm_test;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: slurm_fencing WORKDIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    auto client = SlurmClient::open("");
    if (!client) {
        std::printf("SKIP: %s\n", client.error().message.c_str());
        return 77;
    }
    const char* conf = std::getenv("SLURM_CONF");
    const std::string conf_dir = conf ? std::string(conf).substr(0, std::string(conf).rfind('/')) : "/etc/slurm";
    if (!std::ifstream(conf_dir + "/job_submit.lua")) {
        std::printf("SKIP: no %s/job_submit.lua (scripts/slurm-test-cluster.sh installs it)\n", conf_dir.c_str());
        return 77;
    }
    SlurmClient old_leader = *client, new_leader = *client;
    old_leader.set_generation(1);
    new_leader.set_generation(2);

    JobSpec spec;
    spec.name = "astraeus-fencing-test";
    spec.nodes = 1;
    spec.gpus_per_node = 2;
    spec.workdir = dir;
    spec.output = dir + "/job.out";
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.script = "#!/bin/bash\necho started\nexec sleep 60\n";
    auto id = old_leader.submit_held(spec);
    check(id.has_value(), "generation 1 submits held: " + (id ? std::to_string(*id) : id.error().message));
    if (!id) return 1;
    auto j = wait_for(old_leader, *id, [](const JobInfo& x) { return x.state == JobState::Pending; }, 10);
    check(j && j->held && j->generation == 1, "held, stamped generation 1 (got " +
                                                  std::to_string(j ? j->generation : -1) + ")");

    // The take-over: the new leader stamps the job it adopts.
    auto st = new_leader.stamp(*id);
    check(st.has_value(), "generation 2 stamps it" + (st ? std::string() : ": " + st.error().message));
    j = find(new_leader, *id);
    check(j && j->generation == 2, "stamped generation 2");

    // The deposed leader's late commands: each refused by slurmctld, with the reason.
    const auto now_s = [] { return static_cast<astraeus::Seconds>(std::time(nullptr)); };
    auto r = old_leader.release_on(*id, "gpu1", 100, now_s());
    check(!r.has_value() && has(r.error().message, "generation 2") && has(r.error().message, "this leader's is 1"),
          "generation 1's release refused: " + (r ? std::string("accepted") : r.error().message));
    auto h = old_leader.hold(*id);
    check(!h.has_value(), "generation 1's hold refused");
    auto b = old_leader.set_begin(*id, now_s() + 3600);
    check(!b.has_value(), "generation 1's StartTime refused");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // a scheduling pass or more
    j = find(new_leader, *id);
    check(j && j->state == JobState::Pending && j->held && j->generation == 2,
          "still pending, held, stamped 2 (state " + std::string(j ? to_string(j->state) : "?") + ")");

    // An update without a stamp (an administrator's scontrol) passes the check.
    const std::string cmd = "scontrol update jobid=" + std::to_string(*id) + " Comment=admin-note >/dev/null 2>&1";
    check(std::system(cmd.c_str()) == 0, "an unstamped update (scontrol update Comment=...) passes");

    // The new leader commands it.
    auto ok = new_leader.release_on(*id, "gpu2", 100, now_s());
    check(ok.has_value(), "generation 2's release accepted" + (ok ? std::string() : ": " + ok.error().message));
    j = wait_for(new_leader, *id, [](const JobInfo& x) { return x.state == JobState::Running; }, 30);
    check(j && j->state == JobState::Running && j->nodes == "gpu2" && j->generation == 2,
          "running on gpu2 (got " + (j ? j->nodes : std::string("?")) + "), stamped 2");

    (void)new_leader.cancel(*id);
    std::printf("%s\n", fails == 0 ? "PASS" : "FAILED");
    return fails == 0 ? 0 : 1;
}
