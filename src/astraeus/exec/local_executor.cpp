#include "astraeus/exec/local_executor.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>

#include "astraeus/exec/gpu_sampler.hpp"
#include "astraeus/exec/sandbox/safe_fs.hpp"

namespace astraeus::exec {

namespace fs = std::filesystem;

namespace {

/// A free TCP port on `addr` now (the kernel's choice), for MASTER_PORT; 29500 when none.
int free_port(const std::string& addr) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 29500;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = 0;
    if (::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int port = 29500;
    socklen_t len = sizeof sa;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0)
        port = ntohs(sa.sin_port);
    ::close(fd);
    return port;
}

/// A name safe as one path component (workspace and run names are validated by the service;
/// this only guards the file system).
std::string component(const std::string& s) {
    std::string out;
    for (char ch : s) out += (ch == '/' || ch == '\0') ? '_' : ch;
    return out.empty() || out == "." || out == ".." ? "_" : out;
}

void write_text(int fd, const std::string& m) {
    const char* p = m.data();
    std::size_t n = m.size();
    while (n > 0) {
        const ssize_t k = ::write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        p += k;
        n -= static_cast<std::size_t>(k);
    }
}

}  // namespace

LocalExecutor::LocalExecutor(LocalExecutorConfig c, std::shared_ptr<GpuSource> gpus)
    : c_(std::move(c)), gpus_(std::move(gpus)), runner_(c_.runner) {
    // The runs' root: root's, 0711 (the workspaces' folders below are each 0700); canonical, so
    // that paths under it can be opened with no symlink anywhere (safe_fs.hpp).
    std::error_code ec;
    fs::create_directories(c_.runs_dir, ec);
    if (auto canon = fs::canonical(c_.runs_dir, ec); !ec) c_.runs_dir = canon.string();
    ::chmod(c_.runs_dir.c_str(), 0711);
    now_ = [] {
        return static_cast<Seconds>(std::chrono::duration_cast<std::chrono::seconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
    };
    thread_ = std::thread([this] { loop(); });
}

LocalExecutor::~LocalExecutor() { (void)shutdown(); }

bool LocalExecutor::shutdown() {
    if (!thread_.joinable()) return true;  // done already
    {
        std::lock_guard lk(mu_);
        quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
    // The service stops: every worker gets the checkpoint signal and its grace (bounded by
    // grace_s); runner_'s destructor then kills and reaps whatever is left.
    std::lock_guard lk(mu_);
    for (const auto& [id, st] : runs_)
        for (auto h : st.handles)
            if (h) runner_.stop(h);
    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(static_cast<std::int64_t>(c_.runner.grace_s * 1000.0));
    while (runner_.live() > 0 && std::chrono::steady_clock::now() < end) (void)runner_.poll(20);
    return true;
}

void LocalExecutor::attach(std::function<Seconds()> now, std::function<void()> wake) {
    std::lock_guard lk(mu_);
    now_ = std::move(now);
    wake_ = std::move(wake);
}

Seconds LocalExecutor::now() const { return now_(); }

std::string LocalExecutor::run_dir(const std::string& workspace, const std::string& run) const {
    return (fs::path(c_.runs_dir) / component(workspace.empty() ? "default" : workspace) / component(run)).string();
}

std::string LocalExecutor::cgroup_name(std::int64_t run, int attempt, int worker) {
    std::string s = "r";
    s += std::to_string(run);
    s += "-a";
    s += std::to_string(attempt);
    s += "-w";
    s += std::to_string(worker);
    return s;
}

std::string LocalExecutor::log_path(const std::string& workspace, const std::string& run, int attempt,
                                    int worker) const {
    return (fs::path(run_dir(workspace, run)) / ("attempt-" + std::to_string(attempt)) /
            ("worker-" + std::to_string(worker) + ".log"))
        .string();
}

void LocalExecutor::queue(std::vector<ExecEvent>& evs) {
    for (const ExecEvent& e : evs) {
        auto at = std::upper_bound(events_.begin(), events_.end(), e.t,
                                   [](Seconds t, const ExecEvent& x) { return t < x.t; });
        events_.insert(at, e);
    }
    evs.clear();
}

void LocalExecutor::launch(Seconds t, const ExecRun& r) {
    std::vector<ExecEvent> out;
    {
        std::lock_guard lk(mu_);
        // A new attempt replaces whatever is left of the run.
        if (auto old = runs_.find(r.run); old != runs_.end()) {
            for (auto h : old->second.handles)
                if (h) {
                    runner_.forget(h);
                    owner_.erase(h);
                }
            runs_.erase(old);
        }
        std::erase_if(events_, [&](const ExecEvent& e) { return e.run == r.run && e.kind != ExecEvent::Kind::MachineLost && e.kind != ExecEvent::Kind::MachineBack; });
        RunState& st = runs_.emplace(r.run, RunState(Gang(r, t))).first->second;
        st.handles.assign(static_cast<std::size_t>(r.workers), 0);
        const fs::path dir = run_dir(r.workspace, r.run_name);
        const fs::path attempt = dir / ("attempt-" + std::to_string(r.attempt));
        const fs::path ckpt = dir / "checkpoint";
        // Who the workers are, then their folders, theirs (made without following links).
        auto ident = sandbox::identity_for(c_.sandbox, c_.runner.allow_root, c_.runner.run_as_user, r.workspace,
                                           r.workspace_id);
        std::string setup_error = ident ? "" : ident.error().message;
        const uid_t uid = ident ? ident->uid : 0;
        const gid_t gid = ident ? ident->gid : 0;
        for (const fs::path& p : {dir.parent_path(), dir, ckpt, attempt}) {
            if (!setup_error.empty()) break;
            auto fd = sandbox::ensure_dir(p.string(), uid, gid, 0700);
            if (!fd) setup_error = fd.error().message;
            else ::close(*fd);
        }
        const int port = free_port(c_.master_addr);
        const auto base = current_env();
        std::map<std::int64_t, int> per_machine;
        struct Pending {
            WorkerSpec spec;
            int log_fd = -1;
            std::optional<std::string> error;  ///< nothing launched: why
        };
        std::vector<Pending> pending(static_cast<std::size_t>(r.workers));
        for (int w = 0; w < r.workers; ++w) {
            WorkerIdentity id;
            id.run = r.run_name;
            id.workspace = r.workspace;
            id.worker = w;
            id.workers = r.workers;
            id.attempt = r.attempt;
            const std::int64_t machine = static_cast<std::size_t>(w) < r.placement.size() ? r.placement[w].machine : 0;
            if (static_cast<std::size_t>(w) < r.placement.size()) id.gpus = r.placement[w].gpus;
            id.master_addr = c_.master_addr;
            id.master_port = port;
            id.local_rank = per_machine[machine]++;
            id.checkpoint_dir = ckpt.string();
            id.progress_file = (attempt / ("worker-" + std::to_string(w) + ".progress")).string();
            WorkerSpec spec;
            spec.argv = r.argv;
            spec.env = worker_env(id, r.env, base);
            spec.workdir = r.workdir.empty() ? dir.string() : r.workdir;
            spec.log_path = log_path(r.workspace, r.run_name, r.attempt, w);
            spec.progress_path = id.progress_file;
            spec.log_cap_bytes = r.log_cap_bytes;
            // The log: created afresh by the service (a link planted there is removed, not
            // followed), written only from the pipe through this descriptor.
            int log_fd = -1;
            if (setup_error.empty()) {
                auto fd = sandbox::create_fresh(spec.log_path, gid, 0640);
                if (fd) log_fd = *fd;
                else setup_error = fd.error().message;
            }
            if (ident && c_.runner.sandbox) {
                spec.sandbox.on = true;
                spec.sandbox.id = *ident;
                spec.sandbox.cgroup = cgroup_name(r.run, r.attempt, w);
                spec.sandbox.limits.memory_bytes = c_.sandbox.memory_bytes;
                spec.sandbox.limits.pids_max = c_.sandbox.pids_max;
                spec.sandbox.limits.gpus = id.gpus;
                spec.sandbox.keep = {dir.string()};
            }
            Pending& p = pending[static_cast<std::size_t>(w)];
            p.log_fd = log_fd;
            if (!setup_error.empty()) p.error = setup_error;
            else if (spec.argv.empty()) p.error = "the run has no command";
            else {
                spec.log_fd = ::dup(log_fd);  // ours stays open for a launch error
                p.spec = std::move(spec);
            }
        }
        // Every worker of the gang at once (their namespaces and execve overlap), then each
        // result: a worker that could not start failed at once (the reason in its log).
        std::vector<const WorkerSpec*> specs;
        for (const Pending& p : pending)
            if (!p.error) specs.push_back(&p.spec);
        std::vector<Result<WorkerRunner::Handle>> launched = runner_.launch_all(specs);
        for (int w = 0, k = 0; w < r.workers; ++w) {
            Pending& p = pending[static_cast<std::size_t>(w)];
            Result<WorkerRunner::Handle> h = p.error ? Result<WorkerRunner::Handle>(fail(*p.error))
                                                     : std::move(launched[static_cast<std::size_t>(k++)]);
            if (!h) {
                if (p.log_fd >= 0) write_text(p.log_fd, "astraeus: cannot launch worker " + std::to_string(w) + ": " + h.error().message + "\n");
                if (p.log_fd >= 0) ::close(p.log_fd);
                st.gang.worker_exited(w, 127, 0, false, t, out);
                st.gang.worker_gone(w, t, out);
                continue;
            }
            ::close(p.log_fd);
            st.handles[static_cast<std::size_t>(w)] = *h;
            owner_[*h] = {r.run, w};
            if (runner_.started(*h)) st.gang.worker_up(w, t, out);
        }
        queue(out);
        enforce_stops();
    }
    cv_.notify_all();
}

void LocalExecutor::enforce_stops() {
    for (auto& [id, st] : runs_) {
        if (!st.gang.wants_stop() || st.stop_sent) continue;
        st.stop_sent = true;
        for (auto h : st.handles)
            if (h) runner_.stop(h);
    }
}

void LocalExecutor::stop(Seconds t, std::int64_t run) {
    std::lock_guard lk(mu_);
    auto it = runs_.find(run);
    if (it == runs_.end()) return;
    it->second.gang.stop(t);
    enforce_stops();
}

void LocalExecutor::forget(std::int64_t run) {
    std::lock_guard lk(mu_);
    auto it = runs_.find(run);
    if (it != runs_.end()) {
        for (auto h : it->second.handles)
            if (h) {
                runner_.forget(h);
                owner_.erase(h);
            }
        runs_.erase(it);
    }
    std::erase_if(events_, [&](const ExecEvent& e) { return e.run == run && e.kind != ExecEvent::Kind::MachineLost && e.kind != ExecEvent::Kind::MachineBack; });
}

void LocalExecutor::restore(const ExecRun& r, ExecPhase phase, Seconds since_s, Seconds executed_s) {
    (void)since_s;
    std::vector<ExecEvent> out;
    {
        std::lock_guard lk(mu_);
        // Its workers died with the previous service (their namespace's init has
        // PR_SET_PDEATHSIG; what was left in their cgroups was killed by sandbox::sweep at start).
        ExecRun rr = r;
        rr.executed_s = executed_s;
        const Seconds t = now();
        RunState& st = runs_.insert_or_assign(r.run, RunState(Gang(rr, t))).first->second;
        if (phase == ExecPhase::Stopping) st.gang.stop(t);
        else st.gang.fail(t, out);
        if (phase == ExecPhase::Failed) out.clear();  // already failed: only the release is left
        for (int w = 0; w < r.workers; ++w) st.gang.worker_gone(w, t, out);
        queue(out);
    }
}

Seconds LocalExecutor::next_event_s() const {
    std::lock_guard lk(mu_);
    return events_.empty() ? kNever : events_.front().t;
}

bool LocalExecutor::pop_due(Seconds now_s, ExecEvent& out) {
    std::lock_guard lk(mu_);
    if (events_.empty() || events_.front().t > now_s) return false;
    out = events_.front();
    events_.pop_front();
    return true;
}

Seconds LocalExecutor::executed_s(std::int64_t run, Seconds t) const {
    std::lock_guard lk(mu_);
    auto it = runs_.find(run);
    return it == runs_.end() ? 0 : it->second.gang.executed_s(t);
}

void LocalExecutor::loop() {
    using Clock = std::chrono::steady_clock;
    GpuSampler sampler(gpus_, c_.utilization_period_s);
    std::unique_lock lk(mu_);
    while (!quit_) {
        std::vector<ExecEvent> out;
        const Seconds t = now();
        for (const auto& rep : runner_.poll(0)) {
            auto o = owner_.find(rep.worker);
            if (o == owner_.end()) continue;
            auto rs = runs_.find(o->second.first);
            if (rs == runs_.end()) continue;
            Gang& g = rs->second.gang;
            const int w = o->second.second;
            switch (rep.kind) {
                case WorkerRunner::Report::Kind::Exited:
                    g.worker_exited(w, rep.exit_code, rep.signal, rep.we_signalled, t, out);
                    break;
                case WorkerRunner::Report::Kind::Progress: g.progress(w, rep.step, t, out); break;
                case WorkerRunner::Report::Kind::Gone:
                    g.worker_gone(w, t, out);
                    runner_.forget(rep.worker);
                    owner_.erase(o);
                    break;
            }
        }
        for (auto& [id, st] : runs_)
            if (st.gang.time_limit_at() <= t) st.gang.time_limit(t, out);
        enforce_stops();
        if (sampler.due(Clock::now())) {
            lk.unlock();  // NVML may take a while
            const std::vector<double> util = sampler.sample(Clock::now());
            lk.lock();
            for (auto& [id, st] : runs_) {
                if (st.gang.phase() != ExecPhase::Running) continue;
                const ExecRun& r = st.gang.run();
                for (int w = 0; w < r.workers && static_cast<std::size_t>(w) < r.placement.size(); ++w) {
                    const double level = mean_utilization(util, r.placement[static_cast<std::size_t>(w)].gpus);
                    if (level < 0) continue;
                    ExecEvent e{ExecEvent::Kind::Utilization, t};
                    e.run = id;
                    e.worker = w;
                    e.level = level;
                    e.attempt = r.attempt;
                    out.push_back(e);
                }
            }
        }
        const bool any = !out.empty();
        queue(out);
        if (any && wake_) {
            auto wake = wake_;
            lk.unlock();
            wake();
            lk.lock();
        }
        // A worker writing fast (a poll read at least 64 KiB): poll again within a millisecond, so
        // that its pipe is drained as it fills (at 20 ms, a 4 MiB pipe caps a worker near 200 MB/s,
        // and far less when the wakeups come late on a loaded machine).
        const bool busy = runner_.drained_last_poll() >= (64u << 10);
        cv_.wait_for(lk, busy ? std::chrono::milliseconds(1) : std::chrono::milliseconds(c_.poll_ms),
                     [&] { return quit_; });
    }
}

}  // namespace astraeus::exec
