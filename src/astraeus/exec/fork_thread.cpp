#include "astraeus/exec/fork_thread.hpp"

#include <pthread.h>

#include <csignal>

namespace astraeus::exec {

ForkThread::ForkThread() {
    // Created with every signal blocked, so that it inherits the block (no window in which a
    // process-directed signal could land on this thread).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    thread_ = std::thread([this] { loop(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

ForkThread::~ForkThread() {
    {
        std::lock_guard lk(mu_);
        quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void ForkThread::run(const std::function<void()>& job) {
    std::lock_guard one(run_mu_);
    std::unique_lock lk(mu_);
    job_ = &job;
    done_ = false;
    cv_.notify_all();
    cv_.wait(lk, [&] { return done_; });
    job_ = nullptr;
}

void ForkThread::loop() {
    std::unique_lock lk(mu_);
    for (;;) {
        cv_.wait(lk, [&] { return quit_ || (job_ && !done_); });
        if (job_ && !done_) {
            (*job_)();
            done_ = true;
            cv_.notify_all();
            continue;
        }
        if (quit_) return;
    }
}

}  // namespace astraeus::exec
