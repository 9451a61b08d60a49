// The local executor (`astraeus serve --executor local`, the default): the service runs each
// run's workers as its own child processes on its machine, through the worker runner
// (exec/worker_runner.hpp), on the one machine the service declares (its GPUs from NVML or
// `--gpus N`). Files of a run, under `runs_dir` (outside the service's private data folder;
// root's, 0711), every folder the run's identity's (0700: another workspace cannot enter):
//   <workspace>/<run>/                    the default working directory
//   <workspace>/<run>/checkpoint/         ASTRAEUS_CHECKPOINT_DIR, kept across attempts
//   <workspace>/<run>/attempt-K/worker-I.log       stdout+stderr (capped), written by the
//                                                  service from the pipe it holds (root's, 0640)
//   <workspace>/<run>/attempt-K/worker-I.progress  ASTRAEUS_PROGRESS_FILE
// Every path inside is opened without following links (exec/sandbox/safe_fs.hpp). With the
// sandbox (runner.sandbox set) each worker runs as its workspace's uid in its own cgroup
// (r<run>-a<attempt>-w<worker>) and pid and mount namespaces (exec/sandbox/sandbox.hpp).
// A thread of its own polls the workers every `poll_ms` (exits, progress files, the grace's
// SIGKILL) and the GPUs every `utilization_period_s` (Utilization events, the mean of each
// running worker's GPUs), queues the events (gang semantics: exec/gang.hpp) and wakes the
// service. When the service stops (shutdown()), its workers get the checkpoint signal and their
// grace, then SIGKILL; the service records their attempts as preempted (not failed). A restart of the service does not adopt local workers: their leaders die with the
// service (PR_SET_PDEATHSIG), the restarted service kills what is left of their groups and
// reports the attempt failed (Failed, then Released); stopping ones are done (StopDone).
// Thread safety: the Executor calls are serialised by the service; the internal thread shares
// state under a mutex and calls `wake` without holding it.
#pragma once
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "astraeus/exec/executor.hpp"
#include "astraeus/exec/gang.hpp"
#include "astraeus/exec/gpu_source.hpp"
#include "astraeus/exec/sandbox/sandbox.hpp"
#include "astraeus/exec/worker_runner.hpp"

namespace astraeus::exec {

struct LocalExecutorConfig {
    RunnerConfig runner;
    std::string runs_dir = "astraeus-runs";  ///< made absolute and canonical at start
    sandbox::SandboxConfig sandbox;         ///< identities and limits (runner.sandbox: what the machine allows)
    std::string master_addr = "127.0.0.1";
    int poll_ms = 20;
    double utilization_period_s = 10;
};

class LocalExecutor final : public Executor {
public:
    /// `gpus`: the machine's GPU source (null: no utilization samples).
    LocalExecutor(LocalExecutorConfig c, std::shared_ptr<GpuSource> gpus);
    ~LocalExecutor() override;

    void launch(Seconds t, const ExecRun& r) override;
    void stop(Seconds t, std::int64_t run) override;
    void forget(std::int64_t run) override;
    void restore(const ExecRun& r, ExecPhase phase, Seconds since_s, Seconds executed_s) override;
    Seconds next_event_s() const override;
    bool pop_due(Seconds now, ExecEvent& out) override;
    Seconds executed_s(std::int64_t run, Seconds t) const override;
    void attach(std::function<Seconds()> now, std::function<void()> wake) override;
    /// Stops its thread, then every worker gets the checkpoint signal and its grace (grace_s);
    /// what is left is killed by the runner's destructor. Returns true (idempotent).
    bool shutdown() override;
    bool runs_commands() const override { return true; }
    std::string log_path(const std::string& workspace, const std::string& run, int attempt,
                         int worker) const override;

    /// The run's directory: <runs_dir>/<workspace>/<run>.
    std::string run_dir(const std::string& workspace, const std::string& run) const;
    /// The cgroup name of a worker of an attempt: r<run>-a<attempt>-w<worker>.
    static std::string cgroup_name(std::int64_t run, int attempt, int worker);

private:
    struct RunState {
        explicit RunState(Gang g) : gang(std::move(g)) {}
        Gang gang;
        std::vector<WorkerRunner::Handle> handles;  ///< per worker (0: none)
        bool stop_sent = false;
    };
    void loop();
    /// Under mu_: queue events in time order.
    void queue(std::vector<ExecEvent>& evs);
    /// Under mu_: stop the live workers of runs that want it.
    void enforce_stops();
    Seconds now() const;

    LocalExecutorConfig c_;
    std::shared_ptr<GpuSource> gpus_;
    std::function<Seconds()> now_;
    std::function<void()> wake_;

    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool quit_ = false;
    WorkerRunner runner_;
    std::map<std::int64_t, RunState> runs_;
    std::map<WorkerRunner::Handle, std::pair<std::int64_t, int>> owner_;  ///< -> (run, worker)
    std::deque<ExecEvent> events_;
    std::thread thread_;
};

}  // namespace astraeus::exec
