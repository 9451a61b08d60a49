#include "astraeus/exec/slurm_executor.hpp"
#include "astraeus/exec/slurm_wall_time.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "astraeus/exec/sandbox/attempt_guard.hpp"
#include "astraeus/exec/sandbox/safe_fs.hpp"
#include "astraeus/exec/worker_runner.hpp"

namespace astraeus::exec {
namespace {

using slurm_time::wall_now;

// The step's GPU sampler: the configured program, else this process's own executable.
std::string sampler_path(const std::string& configured) {
    if (!configured.empty()) return configured;
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : self.string();
}

// A word for a bash script, single-quoted.
std::string quote(const std::string& s) {
    std::string q = "'";
    for (char ch : s) {
        if (ch == '\'') q += "'\\''";
        else q += ch;
    }
    return q + "'";
}

using slurm_time::utc;

// "uid 0 (root)", "uid 1001".
std::string user_text(std::uint32_t uid) {
    std::string out = "uid " + std::to_string(uid);
    struct passwd pw{};
    struct passwd* found = nullptr;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found) out += std::string(" (") + found->pw_name + ")";
    return out;
}

// A worker's small file (progress, GPU samples; at most 4 KiB read): written by the job's user
// in its own folder, so opened without following links and only as a regular file.
std::optional<std::string> read_small(const std::string& path) {
    auto fd = sandbox::open_regular(path);
    if (!fd) return std::nullopt;
    std::string text(4096, '\0');
    const ssize_t n = ::read(*fd, text.data(), text.size());
    ::close(*fd);
    if (n < 0) return std::nullopt;
    text.resize(static_cast<std::size_t>(n));
    return text;
}

bool final_state(slurm::JobState s) {
    return s != slurm::JobState::Pending && s != slurm::JobState::Running &&
           s != slurm::JobState::Suspended;
}

}  // namespace

Result<std::vector<SlurmPool>> slurm_machines(const slurm::SlurmClient& c, const std::vector<std::string>& owned) {
    auto parts = c.partitions();
    if (!parts) return std::unexpected(parts.error());
    auto nodes = c.nodes();
    if (!nodes) return std::unexpected(nodes.error());
    return slurm_pools(*parts, *nodes, owned);
}

SlurmExecutor::SlurmExecutor(SlurmExecutorConfig c, slurm::SlurmClient client,
                             std::vector<SlurmPool> pools)
    : c_(std::move(c)), client_(std::move(client)), pools_(std::move(pools)) {
    // Absolute: it is the jobs' working directory, by which a restarted service finds them.
    std::error_code ec;
    if (auto abs = std::filesystem::absolute(c_.runs_dir, ec); !ec) c_.runs_dir = abs.lexically_normal().string();
    // The folder of every run: the service's; the jobs' users pass through it to their own.
    std::filesystem::create_directories(c_.runs_dir, ec);
    ::chmod(c_.runs_dir.c_str(), 0711);
    for (const auto& p : pools_)
        for (const auto& n : p.nodes) {
            node_addr_[n.name] = n.addr.empty() ? n.name : n.addr;
            node_up_[n.name] = !(n.down || n.drain);
        }
}

SlurmExecutor::~SlurmExecutor() {
    {
        std::lock_guard lock(mu_);
        quit_ = true;
        for (const auto& [run, st] : runs_)  // held jobs kept for a resume that will not come
            if (((st.phase == Phase::Parked && st.forgotten_at >= 0) || st.phase == Phase::Waiting) && st.job != 0)
                (void)client_.cancel(st.job);
        for (const auto& [job, o] : orphans_)
            if (!o.admin_held) (void)client_.cancel(job);
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void SlurmExecutor::set_fencing_generation(std::int64_t generation) {
    std::lock_guard lock(mu_);
    client_.set_generation(generation);
}

void SlurmExecutor::attach(std::function<Seconds()> now, std::function<void()> wake) {
    now_ = std::move(now);
    wake_ = std::move(wake);
    thread_ = std::thread([this] { loop(); });
}

Seconds SlurmExecutor::now() const { return now_ ? now_() : wall_now(); }

void SlurmExecutor::set_machines(const std::vector<std::int64_t>& ids, Seconds t) {
    std::lock_guard lock(mu_);
    std::vector<std::int64_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    std::size_t k = 0;
    for (const auto& p : pools_)
        for (const auto& n : p.nodes) {
            if (k >= sorted.size()) break;
            machine_node_[sorted[k]] = n.name;
            node_machine_[n.name] = sorted[k];
            node_up_[n.name] = true;  // as the service takes them (below: those that are not)
            ++k;
        }
    // The service takes them all as up: nodes down or drained now (at a restart of the service,
    // one drained meanwhile) are lost machines before its first round places anything on them.
    std::vector<ExecEvent> lost;
    poll_nodes(t, lost);
    for (auto& e : lost) events_.push_back(e);
    // Held jobs an earlier process kept for a resume (restore() and launch() claim theirs),
    // stamped with this leader's generation at once (a deposed leader's late release of one is
    // then refused); a job a newer leader stamped is that leader's.
    if (auto jobs = client_.jobs())
        for (const auto& j : *jobs)
            if (j.name.starts_with("astraeus-") && j.work_dir.starts_with(c_.runs_dir + "/") &&
                j.state == slurm::JobState::Pending && j.held && j.generation <= client_.generation()) {
                (void)client_.stamp(j.id);
                // An administrator's hold: far off, so that their release cannot start it on
                // the nodes chosen before (the run's next launch sets StartTime again).
                if (j.admin_held) (void)client_.set_begin(j.id, wall_now() + slurm_time::kHeldStartOffsetS);
                orphans_[j.id] = {wall_now(), j.name, j.work_dir, j.admin_held};
            }
}

std::string SlurmExecutor::node_of(const WorkerPlacement& p) const {
    if (auto it = machine_node_.find(p.machine); it != machine_node_.end()) return it->second;
    // "<pool>-<k>": the k-th node of that partition (the service's names for --executor slurm).
    const auto dash = p.machine_name.rfind('-');
    if (dash != std::string::npos)
        for (const auto& pool : pools_)
            if (pool.partition == p.machine_name.substr(0, dash)) {
                const auto k = std::strtoul(p.machine_name.c_str() + dash + 1, nullptr, 10);
                if (k >= 1 && k <= pool.nodes.size()) return pool.nodes[k - 1].name;
            }
    return p.machine_name;
}

std::string SlurmExecutor::job_name(const ExecRun& r) {
    return "astraeus-" + (r.workspace.empty() ? std::string("default") : r.workspace) + "-" + r.run_name;
}

std::string SlurmExecutor::run_dir(const ExecRun& r) const {
    return c_.runs_dir + "/" + (r.workspace.empty() ? "default" : r.workspace) + "/" + r.run_name;
}

std::string SlurmExecutor::log_path(const std::string& workspace, const std::string& run,
                                    int attempt, int worker) const {
    return c_.runs_dir + "/" + workspace + "/" + run + "/attempt-" + std::to_string(attempt) +
           "/worker-" + std::to_string(worker) + ".log";
}

std::string SlurmExecutor::script(const RunState& s) const {
    const ExecRun& r = s.r;
    std::string argv;
    for (const auto& a : r.argv) argv += " " + quote(a);
    if (argv.empty()) argv = " /bin/true";
    // The step sandbox around each task (step_sandbox.hpp), or why not, in job.out.
    std::string box = "box=()\n";
    if (c_.step_sandbox) {
        std::string flags;
        for (const auto& h : c_.step_hide) flags += " --hide " + quote(h);
        flags += " --keep \"$ASTRAEUS_RUN_DIR\" --keep \"$ASTRAEUS_WORKDIR\"";
        // A stale rank (a node whose slurmd died) is ended once a newer attempt is placed.
        // Its path written into the script (the service's file, not the job's environment).
        flags += " --attempt-file " + quote(attempt_file(r));
        if (c_.step_sandbox_required) flags += " --require";
        // The program's path is written into the script, not read from the job's environment,
        // which the run's own `env` could set.
        const std::string prog = quote(sampler_path(c_.step_program));
        box += "if [ -x " + prog + " ]; then box=(" + prog + " step-sandbox" + flags +
               " --)\n"
               "else echo \"astraeus: step sandbox OFF: \"" + prog + "\" is not an executable on $(hostname)" +
               (c_.step_sandbox_required ? std::string("; the sandbox is required (local.sandbox.require): the job fails\"; exit 1")
                                         : std::string(": the workers run unconfined\"")) +
               "; fi\n";
    }
    // MASTER_ADDR: the batch host's (the first node of the allocation) NodeAddr, wherever Slurm
    // starts it (a job submitted before its placement, or resumed on other nodes).
    std::string master_addrs = "case \"$SLURMD_NODENAME\" in\n";
    for (const auto& [n, a] : node_addr_) {
        master_addrs += "  ";
        master_addrs += quote(n);
        master_addrs += ") export MASTER_ADDR=";
        master_addrs += quote(a);
        master_addrs += ";;\n";
    }
    master_addrs += "esac\n";
    // The batch shell runs one task per node (srun); the checkpoint signal goes to the tasks (the
    // workers); the shell waits for the step and exits with its status.
    return "#!/bin/bash\n"
           "# Astraeus run " + r.run_name + " (generated by the Slurm executor)\n"
           "export ASTRAEUS_ATTEMPT=$(( ${SLURM_RESTART_COUNT:-0} + 1 ))\n"
           "export A=\"$ASTRAEUS_RUN_DIR/attempt-$ASTRAEUS_ATTEMPT\"\n"
           "mkdir -p \"$A\" \"$ASTRAEUS_CHECKPOINT_DIR\"\n" +
           master_addrs +
           ""
           "echo \"astraeus: attempt $ASTRAEUS_ATTEMPT on $SLURM_JOB_NODELIST at $(date +%s)\"\n" +
           box +
           "srun --kill-on-bad-exit=1 --ntasks-per-node=1 -N \"$SLURM_JOB_NUM_NODES\" "
           "--job-name=\"$SLURM_JOB_NAME\" \"${box[@]}\" /bin/bash -c '"
           "export ASTRAEUS_WORKER=$SLURM_PROCID RANK=$SLURM_PROCID NODE_RANK=$SLURM_PROCID "
           "LOCAL_RANK=0 WORLD_SIZE=$SLURM_NTASKS ASTRAEUS_WORKERS=$SLURM_NTASKS; "
           "export ASTRAEUS_PROGRESS_FILE=\"$A/worker-$SLURM_PROCID.progress\"; "
           // The node's GPU sampler beside the worker (it ends with it): utilization on Slurm.
           "if [ -x \"$ASTRAEUS_SAMPLER\" ]; then \"$ASTRAEUS_SAMPLER\" gpu-sample --out "
           "\"$A/worker-$SLURM_PROCID.util\" --gpus \"$CUDA_VISIBLE_DEVICES\" --period "
           "\"$ASTRAEUS_SAMPLE_PERIOD\" </dev/null >/dev/null 2>&1 & fi; "
           "cd \"$ASTRAEUS_WORKDIR\" && exec \"$@\" >> \"$A/worker-$SLURM_PROCID.log\" 2>&1' "
           "astraeus-worker" + argv + " &\n"
           "step=$!\n"
           "trap 'echo \"astraeus: stop signal at $(date +%s)\"' TERM\n"
           // SIGWINCH from the executor at a stop (stop()), before the workers' SIGTERM (ignored
           // by default: harmless to a shell that has no trap yet).
           "trap 'echo \"astraeus: stopped by Astraeus at $(date +%s) (a lease end, a move or a "
           "stop by its owner; not a failure): the workers get SIGTERM to checkpoint, then the job "
           "is requeued held; a STEP CANCELLED line from Slurm below is that requeue\"' WINCH\n"
           "while :; do wait $step; rc=$?; kill -0 $step 2>/dev/null || break; done\n"
           "echo \"astraeus: step exited $rc at $(date +%s)\"\n"
           "exit $rc\n";
}

std::string SlurmExecutor::account_of(const std::string& workspace) const {
    const std::string ws = workspace.empty() ? std::string("default") : workspace;
    if (auto it = c_.accounts.find(ws); it != c_.accounts.end()) return it->second;
    return ws;
}

Result<slurm::JobSpec> SlurmExecutor::submitter(const ExecRun& r) const {
    slurm::JobSpec spec;
    spec.account = account_of(r.workspace);
    auto id = sandbox::identity_for(c_.identity, c_.allow_root, c_.run_as_user, r.workspace, r.workspace_id);
    if (!id) return std::unexpected(id.error());
    if (id->drop) {
        // Slurm runs a job as a user the controller, slurmdbd and the nodes know by name: an id
        // of the sandbox's range without a passwd entry cannot be one.
        std::vector<char> buf(16384);
        struct passwd pw{};
        struct passwd* found = nullptr;
        if (::getpwuid_r(id->uid, &pw, buf.data(), buf.size(), &found) != 0 || !found)
            return fail("workspace '" + r.workspace + "' runs as uid " + std::to_string(id->uid) +
                        ", which is no Unix user of this machine: Slurm runs jobs as users it knows; create it "
                        "(here and on every node) or map the workspace to one (local.sandbox.users; "
                        "docs/slurm.md \"Tenants\")");
        spec.uid = id->uid;
        spec.gid = id->gid;
        spec.name_user = found->pw_name;
    } else {
        spec.uid = ::getuid();
        spec.gid = ::getgid();
        spec.name_user = user_text(::getuid());
    }
    // The run's folders, the job's user's own (0700: no other workspace's job can enter them),
    // made without following links; the folder of all runs stays the service's (0711).
    const std::string dir = run_dir(r);
    for (const std::string& p : {dir.substr(0, dir.rfind('/')), dir, dir + "/checkpoint"}) {
        auto fd = sandbox::ensure_dir(p, *spec.uid, *spec.gid, 0700);
        if (!fd) return std::unexpected(fd.error());
        ::close(*fd);
    }
    return spec;
}

std::string SlurmExecutor::command_comment(const ExecRun& r) {
    std::string out;
    for (const auto& a : r.argv) {
        if (!out.empty()) out += ' ';
        out += quote(a);
    }
    return out;
}

Result<slurm::JobSpec> SlurmExecutor::job_spec(const RunState& s, const std::string& first) const {
    const ExecRun& r = s.r;
    auto who = submitter(r);
    if (!who) return std::unexpected(who.error());
    const std::string dir = run_dir(r);
    slurm::JobSpec spec = std::move(*who);
    spec.name = job_name(r);
    spec.command = spec.name;
    spec.comment = command_comment(r);
    for (const auto& pool : pools_) {
        for (const auto& n : pool.nodes)
            if (n.name == first && spec.partition.empty()) spec.partition = pool.partition;
        if (first.empty() && pool.partition == r.pool) spec.partition = pool.partition;  // not placed yet
    }
    spec.nodes = r.workers;
    // A run not placed yet (the held job of a waiting run) has one empty part per worker: the
    // run's GPUs per worker, or its job would run without GPUs when released (Slurm allocating
    // them to no one: issue 20, a 1 x 4 run beside 4 GPUs Slurm saw free).
    const bool placed = !r.placement.empty() && !r.placement.front().gpus.empty();
    spec.gpus_per_node = placed ? static_cast<int>(r.placement.front().gpus.size()) : r.gpus_per_worker;
    spec.workdir = dir;
    spec.output = dir + "/job.out";
    spec.script = script(s);
    spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir,
                "ASTRAEUS_RUN=" + r.run_name, "ASTRAEUS_WORKSPACE=" + r.workspace,
                "ASTRAEUS_RUN_DIR=" + dir, "ASTRAEUS_CHECKPOINT_DIR=" + dir + "/checkpoint",
                "ASTRAEUS_WORKDIR=" + (r.workdir.empty() ? dir : r.workdir),
                "MASTER_ADDR=" + (node_addr_.contains(first) ? node_addr_.at(first) : std::string()),
                "MASTER_PORT=" + std::to_string(29500 + r.run % 1000),
                "ASTRAEUS_SAMPLER=" + sampler_path(c_.sampler),
                "ASTRAEUS_SAMPLE_PERIOD=" + std::to_string(c_.sample_period_s)};
    // The NVML library and the fake's file (tests), when this process was given them.
    for (const char* k : {"ASTRAEUS_NVML_LIBRARY", "FAKE_NVML_FILE"})
        if (const char* v = std::getenv(k)) spec.env.push_back(std::string(k) + "=" + v);
    for (const auto& [k, v] : r.env) spec.env.push_back(k + "=" + v);
    return spec;
}

void SlurmExecutor::launch(Seconds t, const ExecRun& r) {
    std::vector<ExecEvent> evs;
    {
        std::lock_guard lock(mu_);
        RunState& s = runs_[r.run];
        s.r = r;
        s.phase = Phase::Starting;
        s.running_since = -1;
        s.requeue_sent = false;
        s.term_at.reset();
        s.forgotten_at = -1;
        s.released_s = -1;
        s.segment_end_s = -1;
        s.cancel_seen_s = -1;
        s.uhold_sent = s.user_hold_seen = false;
        s.waiting_reason.clear();
        s.deferred.reset();
        s.steps.assign(static_cast<std::size_t>(r.workers), -1);
        s.sampled.assign(static_cast<std::size_t>(r.workers), -1);
        s.executed_s = r.executed_s;
        std::string nodes;
        for (const auto& p : r.placement) nodes += (nodes.empty() ? "" : ",") + node_of(p);
        auto failed = [&](const std::string& why) { fail_launch(s, t, "cannot submit the Slurm job: " + why, evs); };
        if (s.job == 0) {
            // A job kept held for a resume by an earlier process of the service (a restart
            // between the requeue and this placement): resumed, not submitted again.
            std::uint32_t newest = 0;
            for (const auto& [job, o] : orphans_)
                if (o.work_dir == run_dir(r)) newest = std::max(newest, job);
            if (newest != 0) {
                orphans_.erase(newest);
                s.job = newest;
                s.restarts_at_launch = 0;
                (void)keep_admin_hold(s, t, evs);  // an administrator's hold is kept (AdminHeld)
            }
        }
        if (s.job == 0) {
            const std::string first = r.placement.empty() ? "" : node_of(r.placement.front());
            auto spec = job_spec(s, first);
            if (!spec) {
                failed(spec.error().message);
            } else if (auto id = client_.submit_held(*spec); !id) {
                failed(id.error().message + " (user " + spec->name_user + ", uid " +
                       std::to_string(spec->uid.value_or(::getuid())) + ", account " +
                       (spec->account.empty() ? std::string("the user's default") : "'" + spec->account + "'") +
                       ": the account must exist in Slurm and the user be one of its users: sacctmgr add "
                       "account / add user, docs/slurm.md \"Tenants\")");
            } else {
                s.job = *id;
                s.restarts_at_launch = 0;
            }
        } else {
            s.restarts_at_launch = 0;  // set from the job's view at the first poll
        }
        if (s.job != 0 && s.phase == Phase::Starting) {
            static std::int64_t seq = 0;
            RunState::Release how;
            how.nodes = nodes;
            how.rank = 1000000 - (++seq % 1000000);  // earlier admitted: higher
            // A job that waited showed the run's reason in its comment: the command again.
            if (!s.shown_reason.empty()) how.comment = command_comment(r);
            if (s.completing_seen) s.deferred = std::move(how);  // released by poll_jobs
            else if (auto ok = release(s, how); !ok)
                fail_launch(s, t, "cannot release the Slurm job: " + ok.error().message, evs);
        }
    }
    push(evs);  // the poll thread wakes the service: launch() is called under the service's lock
}

void SlurmExecutor::fail_launch(RunState& s, Seconds t, const std::string& why, std::vector<ExecEvent>& out) {
    // The service sees the attempt fail, with the reason (the run's reason); it goes to the
    // service's stderr too.
    std::fprintf(stderr, "astraeus: slurm executor: run %s attempt %d: %s\n", s.r.run_name.c_str(), s.r.attempt,
                 why.c_str());
    out.push_back({ExecEvent::Kind::Failed, t, s.r.run});
    out.back().attempt = s.r.attempt;
    out.back().detail = why;
    out.push_back({ExecEvent::Kind::Released, t, s.r.run});
    out.back().attempt = s.r.attempt;
    s.phase = Phase::Parked;
}

Result<void> SlurmExecutor::release(RunState& s, const RunState::Release& how) {
    mark_current_attempt(s.r);  // before the release: the new attempt's steps read it
    if (auto ok = client_.release_on(s.job, how.nodes, how.rank, wall_now(), how.comment); !ok) return ok;
    s.released_s = wall_now();
    s.shown_reason.clear();
    return {};
}

void SlurmExecutor::stop(Seconds t, std::int64_t run) {
    (void)t;
    std::lock_guard lock(mu_);
    auto it = runs_.find(run);
    if (it == runs_.end()) return;
    RunState& s = it->second;
    if (s.phase != Phase::Starting && s.phase != Phase::Running) return;
    if (s.phase == Phase::Running && s.running_since >= 0) {
        s.executed_s += now() - s.running_since;
        s.running_since = -1;
    }
    s.phase = Phase::Stopping;
    s.deferred.reset();  // never released: the Stopping poll parks it (still held)
    s.stop_deadline = wall_now() + c_.grace_s;
    s.requeue_sent = false;
    s.uhold_sent = false;
    // The stop (a lease end, a move, the owner's stop) into the job's output first (the batch shell's WINCH trap), then the
    // checkpoint signal half a second later, so that the line comes before Slurm's own.
    if (client_.signal_batch(s.job, SIGWINCH))
        s.term_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    else
        (void)client_.signal(s.job, SIGTERM, /*steps_only=*/true);
    cv_.notify_all();
}

void SlurmExecutor::forget(std::int64_t run) {
    std::lock_guard lock(mu_);
    auto it = runs_.find(run);
    if (it == runs_.end()) return;
    if ((it->second.phase == Phase::Parked || it->second.phase == Phase::Waiting) && it->second.job != 0) {
        // Forgotten right before a placement (launch() follows) or for good (ended: the poll
        // cancels a waiting job 2 s later, a parked one after a minute past the grace).
        it->second.forgotten_at = wall_now();
        return;
    }
    if (it->second.job != 0) (void)client_.cancel(it->second.job);
    runs_.erase(it);
}

void SlurmExecutor::restore(const ExecRun& r, ExecPhase phase, Seconds since_s, Seconds executed_s) {
    std::vector<ExecEvent> evs;
    {
        std::lock_guard lock(mu_);
        auto it = runs_.find(r.run);
        if (it != runs_.end()) {
            // The service failed the run (a lost machine): stop what is left, requeue held,
            // then Released.
            RunState& s = it->second;
            if (phase == ExecPhase::Failed && s.phase != Phase::Parked) {
                if (s.running_since >= 0) s.executed_s += now() - s.running_since;
                s.running_since = -1;
                s.phase = Phase::Failed;
                s.requeue_sent = s.uhold_sent = false;
            }
            return;
        }
        // After a restart of the service: the attempt's Slurm job is adopted (found by its name
        // and its working directory), in the phase the service stored; the polls go on from
        // there (a job that started, ended or was requeued meanwhile is reported with Slurm's
        // times). Without a job the attempt ends here, as with the local executor.
        if (auto j = find_job(r, since_s)) {
            // The fencing token: a job stamped by a newer leader is that leader's (this replica
            // is deposed and its watchdog ends it): left alone. Else it is stamped with this
            // leader's generation before any other command (an older leader's late updates are
            // then refused by slurmctld's job_submit.lua; the stamp's own failure is not fatal:
            // every later update carries the stamp too).
            if (j->generation > client_.generation()) return;
            (void)client_.stamp(j->id);
            RunState& s = runs_[r.run];
            orphans_.erase(j->id);
            s.r = r;
            s.job = j->id;
            s.executed_s = executed_s;
            s.restarts_at_launch = j->restarts;
            if (phase == ExecPhase::Starting) {
                s.phase = Phase::Starting;
                if (j->state == slurm::JobState::Pending && j->held) {  // died before the release
                    std::string nodes;
                    for (const auto& p : r.placement) nodes += (nodes.empty() ? "" : ",") + node_of(p);
                    (void)client_.release_on(s.job, nodes, 1, wall_now());
                }
                s.released_s = wall_now();  // the bound runs from the adoption
            } else if (phase == ExecPhase::Running) {
                s.phase = Phase::Running;
                s.running_since = since_s;
                // Requeued by Slurm while the service was down: seen as such at the next poll.
                if (j->state == slurm::JobState::Pending && j->restarts > 0) s.restarts_at_launch = j->restarts - 1;
            } else {
                s.phase = phase == ExecPhase::Stopping ? Phase::Stopping : Phase::Failed;
                s.stop_deadline = since_s + c_.grace_s;
            }
            cv_.notify_all();
            return;
        }
        const Seconds t = std::max(since_s, now());
        if (phase == ExecPhase::Stopping) {
            evs.push_back({ExecEvent::Kind::StopDone, t, r.run});
        } else {
            if (phase != ExecPhase::Failed) evs.push_back({ExecEvent::Kind::Failed, t, r.run});
            evs.push_back({ExecEvent::Kind::Released, t, r.run});
        }
    }
    push(evs);
}

void SlurmExecutor::push(std::vector<ExecEvent>& evs) {
    if (evs.empty()) return;
    {
        std::lock_guard lock(mu_);
        for (auto& e : evs) events_.push_back(e);
        std::stable_sort(events_.begin(), events_.end(),
                         [](const ExecEvent& a, const ExecEvent& b) { return a.t < b.t; });
        wake_pending_ = true;  // the poll thread wakes the service (its caller may hold its lock)
    }
    evs.clear();
    cv_.notify_all();
}

Seconds SlurmExecutor::next_event_s() const {
    std::lock_guard lock(mu_);
    return events_.empty() ? kNever : events_.front().t;
}

bool SlurmExecutor::pop_due(Seconds now_s, ExecEvent& out) {
    std::lock_guard lock(mu_);
    if (events_.empty() || events_.front().t > now_s) return false;
    out = events_.front();
    events_.pop_front();
    return true;
}

Seconds SlurmExecutor::executed_s(std::int64_t run, Seconds t) const {
    std::lock_guard lock(mu_);
    auto it = runs_.find(run);
    if (it == runs_.end()) return 0;
    const RunState& s = it->second;
    return s.executed_s + (s.running_since >= 0 ? std::max<Seconds>(0, t - s.running_since) : 0);
}

std::uint32_t SlurmExecutor::job_of(std::int64_t run) const {
    std::lock_guard lock(mu_);
    auto it = runs_.find(run);
    return it == runs_.end() ? 0 : it->second.job;
}

Seconds SlurmExecutor::slurm_time(Seconds slurm_s, Seconds t) const {
    // Slurm's clock is the real one; the service's may run faster (time_scale > 1, tests).
    return slurm_s > 0 && std::abs(t - wall_now()) <= 2 ? slurm_s : t;
}

std::optional<slurm::JobInfo> SlurmExecutor::find_job(const ExecRun& r, Seconds since_s) const {
    auto jobs = client_.jobs();
    if (!jobs) return std::nullopt;
    const std::string dir = run_dir(r);
    std::optional<slurm::JobInfo> best;
    for (auto& j : *jobs) {
        // Any astraeus-* name: jobs of earlier versions were named astraeus-<run>.
        if (!j.name.starts_with("astraeus-") || j.work_dir != dir) continue;
        if (final_state(j.state) && !j.completing && j.end_s > 0 && j.end_s < since_s) continue;
        if (!best || j.id > best->id) best = std::move(j);
    }
    return best;
}

void SlurmExecutor::poll_jobs(Seconds t, std::vector<ExecEvent>& out) {
    for (auto it = orphans_.begin(); it != orphans_.end();) {
        if (it->second.admin_held || wall_now() - it->second.found_s < 60 + c_.grace_s) {
            ++it;
            continue;
        }
        (void)client_.cancel(it->first);
        it = orphans_.erase(it);
    }
    bool any = false;
    for (const auto& [id, s] : runs_) any = any || (s.job != 0 && s.phase != Phase::Done);
    if (!any) return;
    auto jobs = client_.jobs();
    if (!jobs) return;
    std::map<std::uint32_t, const slurm::JobInfo*> by_id;
    for (const auto& j : *jobs) by_id[j.id] = &j;
    std::vector<std::int64_t> erase;
    for (auto& [run, s] : runs_) {
        if (s.job == 0) continue;
        auto it = by_id.find(s.job);
        auto ev = [&](ExecEvent::Kind k, int worker = -1, Seconds at = -1) {
            ExecEvent e{k, at >= 0 ? at : t, run};
            e.worker = worker;
            e.attempt = s.r.attempt;
            out.push_back(e);
            return &out.back();
        };
        if (it == by_id.end()) {  // gone from slurmctld (purged): the attempt is over
            if (s.phase == Phase::Starting || s.phase == Phase::Running) {
                ev(ExecEvent::Kind::Failed);
                ev(ExecEvent::Kind::Released);
                s.phase = Phase::Done;
            }
            continue;
        }
        const slurm::JobInfo& j = *it->second;
        s.completing_seen = j.completing;
        if (s.phase == Phase::Starting && s.deferred && j.state == slurm::JobState::Pending) {
            if (j.completing) continue;  // the requeue is not finished: released at a later poll
            if (auto ok = release(s, *s.deferred); !ok)
                fail_launch(s, t, "cannot release the Slurm job: " + ok.error().message, out);
            s.deferred.reset();
            continue;
        }
        if ((s.phase == Phase::Parked || s.phase == Phase::Waiting) && s.forgotten_at >= 0 &&
            j.state == slurm::JobState::Cancelled) {
            erase.push_back(run);  // forgotten, then cancelled by someone else: nothing to cancel
            continue;
        }
        if (s.phase != Phase::Done && poll_cancel(s, j, t, out)) continue;
        if (s.phase == Phase::Starting || s.phase == Phase::Parked || s.phase == Phase::AdminHeld ||
            s.phase == Phase::Waiting) {
            const Phase before = s.phase;
            poll_admin_hold(s, j, t, out);
            if (s.phase != before || s.phase == Phase::AdminHeld) continue;
        }
        if (s.phase == Phase::Starting && s.restarts_at_launch == 0) s.restarts_at_launch = j.restarts;
        const bool requeued_by_slurm = j.state == slurm::JobState::Pending && j.restarts > s.restarts_at_launch;
        switch (s.phase) {
            case Phase::Starting:
            case Phase::Running:
                if (s.phase == Phase::Running && j.state == slurm::JobState::Running)
                    poll_worker_files(s, j.restarts, t, out);
                if (s.phase == Phase::Starting && j.state == slurm::JobState::Pending && !j.held &&
                    !requeued_by_slurm && slurm::past_pending_bound(s.released_s, wall_now(), c_.pending_bound_s)) {
                    (void)take_back(s, j, t, out);
                } else if (s.phase == Phase::Starting && j.state == slurm::JobState::Running) {
                    // The segment's start as Slurm records it (sacct's Start), not this poll's.
                    const Seconds start = slurm_time(j.start_s, t);
                    s.phase = Phase::Running;
                    s.running_since = start;
                    for (int w = 0; w < s.r.workers; ++w) ev(ExecEvent::Kind::WorkerStarted, w, start);
                    ev(ExecEvent::Kind::Started, -1, start)->level = -1;
                } else if (requeued_by_slurm && poll_admin_requeue(s, j, t, out)) {
                    // an administrator's requeue: preempted (slurm_executor_admin.cpp)
                } else if ((final_state(j.state) && !j.completing) || requeued_by_slurm) {
                    // Requeued by Slurm (a node failure): its segment ended by this poll. Ended
                    // for good: at Slurm's end time. Failed: the segment ends at our requeue.
                    const bool finished = j.state == slurm::JobState::Complete && j.exit_code == 0 && !requeued_by_slurm;
                    if (s.phase == Phase::Starting && !requeued_by_slurm && j.start_s > 0 && !j.nodes.empty()) {
                        const Seconds start = slurm_time(j.start_s, t);
                        // It ran and ended between two looks (a restart of the service): its
                        // segment started first.
                        s.running_since = start;
                        for (int w = 0; w < s.r.workers; ++w) ev(ExecEvent::Kind::WorkerStarted, w, start);
                        ev(ExecEvent::Kind::Started, -1, start)->level = -1;
                    }
                    if (requeued_by_slurm) s.segment_end_s = wall_now();
                    const Seconds end = finished ? slurm_time(j.end_s, t) : t;
                    if (s.running_since >= 0) s.executed_s += std::max<Seconds>(0, end - s.running_since);
                    s.running_since = -1;
                    auto* x = ev(ExecEvent::Kind::WorkerExited, 0);
                    x->exit_code = j.exit_signal ? -1 : j.exit_code;
                    x->signal = j.exit_signal;
                    if (finished) {
                        ev(ExecEvent::Kind::Finished, -1, end);
                        s.phase = Phase::Done;
                    } else {
                        ev(ExecEvent::Kind::Failed, 0);
                        s.phase = Phase::Failed;
                        s.requeue_sent = s.uhold_sent = false;
                    }
                }
                break;
            case Phase::Stopping:
            case Phase::Failed:
                if (s.term_at && std::chrono::steady_clock::now() >= *s.term_at) {
                    (void)client_.signal(s.job, SIGTERM, /*steps_only=*/true);
                    s.term_at.reset();
                }
                if (j.state == slurm::JobState::Pending) {
                    if (s.segment_end_s < 0) s.segment_end_s = wall_now();  // requeued by someone else
                    if (!j.held || (j.admin_held && !s.uhold_sent)) {
                        // Not held, or held as an administrator's hold (a requeue-held): our
                        // user hold, so that an administrator's later hold is told apart.
                        (void)client_.hold(s.job);
                        s.uhold_sent = s.uhold_sent || j.held;
                    } else {
                        s.user_hold_seen = !j.admin_held;
                        // At the segment's end (sacct's End: our requeue), not this poll's time.
                        ev(s.phase == Phase::Stopping ? ExecEvent::Kind::StopDone : ExecEvent::Kind::Released, -1,
                           slurm_time(s.segment_end_s, t));
                        s.phase = Phase::Parked;
                    }
                } else if (!s.requeue_sent &&
                           ((final_state(j.state) && !j.completing) ||
                            (j.state == slurm::JobState::Running &&
                             (s.phase == Phase::Failed || wall_now() >= s.stop_deadline)))) {
                    const Seconds at = wall_now();
                    if (client_.requeue_hold(s.job)) {
                        s.requeue_sent = true;
                        s.segment_end_s = at;  // Slurm ends the segment at the requeue
                    }
                }
                break;
            case Phase::Parked:
                // Forgotten right before a re-placement, whose launch may wait for other runs'
                // GPUs (their grace): cancel only when no launch came for a minute past that.
                if (s.forgotten_at >= 0 && wall_now() - s.forgotten_at >= 60 + c_.grace_s) {
                    (void)client_.cancel(s.job);
                    erase.push_back(run);
                }
                break;
            case Phase::Waiting:
                if (s.forgotten_at >= 0 && wall_now() - s.forgotten_at >= 2) {  // ended while waiting
                    (void)client_.cancel(s.job);
                    erase.push_back(run);
                }
                break;
            case Phase::AdminHeld:
            case Phase::Done: break;
        }
    }
    for (auto run : erase) runs_.erase(run);
}

bool SlurmExecutor::poll_cancel(RunState& s, const slurm::JobInfo& j, Seconds t, std::vector<ExecEvent>& out) {
    // Every job of runs_ this process cancels itself is erased from runs_ at once (forget(), a
    // forgotten parked job): a CANCELLED one was cancelled by someone else.
    if (j.state != slurm::JobState::Cancelled) return false;
    if (j.completing) return true;  // its processes are still being ended: its GPUs are held
    if (s.cancel_seen_s < 0) s.cancel_seen_s = wall_now();
    auto by = client_.cancelled_by(s.job);
    if (!by && wall_now() - s.cancel_seen_s < 3) return true;  // slurmdbd records it shortly
    const Seconds end = j.end_s > 0 ? j.end_s : wall_now();
    ExecEvent e{ExecEvent::Kind::Cancelled, slurm_time(end, t), s.r.run};
    e.attempt = s.r.attempt;
    e.detail = "cancelled in Slurm by " + (by ? user_text(*by) : std::string("someone else (no accounting record)")) +
               " at " + utc(end) + " (job " + std::to_string(s.job) + ")";
    if (s.running_since >= 0) s.executed_s += std::max<Seconds>(0, e.t - s.running_since);
    s.running_since = -1;
    s.phase = Phase::Done;
    out.push_back(std::move(e));
    return true;
}

void SlurmExecutor::poll_admin_hold(RunState& s, const slurm::JobInfo& j, Seconds t, std::vector<ExecEvent>& out) {
    if (j.state != slurm::JobState::Pending) return;
    auto event = [&](ExecEvent::Kind k, std::string detail) {
        ExecEvent e{k, t, s.r.run};
        e.attempt = s.r.attempt;
        e.detail = std::move(detail);
        out.push_back(std::move(e));
    };
    switch (s.phase) {
        case Phase::Waiting:
        case Phase::Parked:
            if (s.forgotten_at >= 0) return;
            if (!j.held) {  // released by someone while parked: held again, it is not placed
                (void)client_.hold(s.job);
                return;
            }
            if (!j.admin_held) {
                s.user_hold_seen = true;
                return;
            }
            if (!s.user_hold_seen) return;  // our own hold, not yet seen as a user hold
            [[fallthrough]];
        case Phase::Starting:
            if (!j.admin_held) return;
            // Far off: a release (the administrator's) must not start it on the nodes chosen
            // before; the next launch sets StartTime again (release_on).
            (void)client_.set_begin(s.job, wall_now() + slurm_time::kHeldStartOffsetS);
            s.phase = Phase::AdminHeld;
            s.uhold_sent = false;
            event(ExecEvent::Kind::Held, "held in Slurm by an administrator (scontrol hold) since " +
                                             utc(wall_now()) + " (job " + std::to_string(s.job) + ")");
            return;
        case Phase::AdminHeld:
            // Our hold after the release (a requeue-held job may show as held, not admin-held,
            // before any release: uhold_sent tells ours): the service may place it.
            if (j.held && !j.admin_held && s.uhold_sent) {
                s.phase = Phase::Parked;
                s.user_hold_seen = true;
                event(ExecEvent::Kind::Unheld, "");
            } else if (!j.held) {
                (void)client_.hold(s.job);  // released: held by us until the next launch
                s.uhold_sent = true;
            }
            return;
        default: return;
    }
}

void SlurmExecutor::poll_worker_files(RunState& s, std::uint32_t restarts, Seconds t,
                                      std::vector<ExecEvent>& out) const {
    const std::string dir = run_dir(s.r) + "/attempt-" + std::to_string(restarts + 1);
    const auto n = static_cast<std::size_t>(s.r.workers);
    if (s.steps.size() != n) s.steps.assign(n, -1);
    if (s.sampled.size() != n) s.sampled.assign(n, -1);
    auto event = [&](ExecEvent::Kind k, int w) {
        ExecEvent e{k, t, s.r.run};
        e.worker = w;
        e.attempt = s.r.attempt;
        out.push_back(e);
        return &out.back();
    };
    for (int w = 0; w < s.r.workers; ++w) {
        const std::string base = dir + "/worker-" + std::to_string(w);
        if (const auto text_ = read_small(base + ".progress")) {
            const std::string& text = *text_;
            const auto step = parse_progress(text);
            auto& last = s.steps[static_cast<std::size_t>(w)];
            if (step && *step > last) {
                last = *step;
                event(ExecEvent::Kind::Progress, w)->step = *step;
            }
        }
        if (const auto util = read_small(base + ".util")) {  // "UNIX_SECONDS MEAN_PERCENT"
            std::istringstream in(*util);
            std::int64_t at = -1;
            double pct = -1;
            auto& last = s.sampled[static_cast<std::size_t>(w)];
            if (in >> at >> pct && at > last && pct >= 0) {
                last = at;
                event(ExecEvent::Kind::Utilization, w)->level = pct;
            }
        }
    }
}

void SlurmExecutor::poll_nodes(Seconds t, std::vector<ExecEvent>& out) {
    auto nodes = client_.nodes();
    if (!nodes) return;
    for (const auto& n : *nodes) {
        auto m = node_machine_.find(n.name);
        if (m == node_machine_.end()) continue;
        const bool up = !(n.down || n.drain);
        bool& was = node_up_[n.name];
        if (up == was) continue;
        was = up;
        ExecEvent e{up ? ExecEvent::Kind::MachineBack : ExecEvent::Kind::MachineLost, t, 0};
        e.machine = m->second;
        out.push_back(e);
    }
    // GPUs held by jobs this service did not submit: out of the service's placements until
    // they end (one RPC for all jobs; a failed one changes nothing).
    auto allocs = client_.allocations();
    if (!allocs) return;
    const auto foreign = slurm::foreign_gpus(*allocs, c_.runs_dir);
    const auto on_node = blocked_.empty() ? std::map<std::string, std::vector<std::uint32_t>>{}
                                          : slurm::foreign_jobs_per_node(*allocs, c_.runs_dir);
    for (auto b = blocked_.begin(); b != blocked_.end();) {
        auto jobs = on_node.find(b->first);
        if (slurm::still_blocked(b->second, jobs == on_node.end() ? std::vector<std::uint32_t>{} : jobs->second,
                                 wall_now(), c_.blocked_cool_off_s))
            ++b;
        else
            b = blocked_.erase(b);
    }
    for (const auto& [node, machine] : node_machine_) {
        auto it = foreign.find(node);
        foreign_[node] = it == foreign.end() ? slurm::ForeignNode{} : it->second;
        foreign_event(node, t, out);
    }
}

void SlurmExecutor::loop() {
    std::unique_lock lock(mu_);
    while (!quit_) {
        std::vector<ExecEvent> evs;
        const Seconds t = now();
        poll_waiting();
        poll_jobs(t, evs);
        if (wall_now() != last_nodes_poll_) {
            last_nodes_poll_ = wall_now();
            poll_nodes(t, evs);
        }
        if (!evs.empty() || wake_pending_) {
            for (auto& e : evs) events_.push_back(e);
            std::stable_sort(events_.begin(), events_.end(),
                             [](const ExecEvent& a, const ExecEvent& b) { return a.t < b.t; });
            wake_pending_ = false;
            lock.unlock();
            if (wake_) wake_();
            lock.lock();
        }
        cv_.wait_for(lock, std::chrono::milliseconds(c_.poll_ms), [this] { return quit_ || wake_pending_; });
    }
}

}  // namespace astraeus::exec
