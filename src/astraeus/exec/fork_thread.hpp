// The thread every worker is forked from: one long-lived thread owned by the worker runner.
// Why: PR_SET_PDEATHSIG (which kills a worker's leader when the service dies) fires when the
// *thread* that forked the child ends, not the process. Forked from whichever thread called
// launch() (an HTTP handler, the scheduler loop), a worker was SIGKILLed the moment that thread
// ended: at `astraeus serve`'s shutdown the HTTP and scheduler threads end first, so workers died
// before the executor could give them the checkpoint signal and their grace (docs/agents.md).
// Forked from this thread, they live until the runner itself is gone.
// Thread safety: run() may be called from any thread; calls are serialised.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace astraeus::exec {

class ForkThread {
public:
    /// Starts the thread (every signal blocked in it: signals stay with the caller's threads).
    ForkThread();
    /// Ends and joins the thread (children it forked then get their PR_SET_PDEATHSIG).
    ~ForkThread();
    ForkThread(const ForkThread&) = delete;
    ForkThread& operator=(const ForkThread&) = delete;

    /// Runs `job` on the thread and returns once it has returned. `job` must not throw.
    void run(const std::function<void()>& job);

private:
    void loop();

    std::mutex run_mu_;  ///< one run() at a time
    std::mutex mu_;
    std::condition_variable cv_;
    const std::function<void()>* job_ = nullptr;
    bool done_ = false;
    bool quit_ = false;
    std::thread thread_;
};

}  // namespace astraeus::exec
