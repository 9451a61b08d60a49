// A Service on a manual clock (Service::open_manual) over a SQLite store in a temporary
// directory, driven by a scripted executor: it emits exactly the events a test queues, with the
// test's timestamps, and records the launches and stops the service asked for. Shared by the
// service tests that compute every value by hand (service_goodput_exact_test.cpp,
// service_exec_events_test.cpp). Not thread-safe: one test thread.
#pragma once
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/store/store.hpp"

namespace scripted_service {

namespace svc = astraeus::service;
namespace st = astraeus::store;
using astraeus::Seconds;
using nlohmann::json;
using svc::ExecEvent;
using K = ExecEvent::Kind;

inline constexpr Seconds T0 = 1793613600;  // 2026-11-02T10:00:00Z, a minute and hour boundary

/// What the test scripts and what the service told the executor, shared by both.
struct Script {
    std::vector<ExecEvent> queue;  ///< in time order (stable for equal times)
    struct Launch {
        Seconds t;
        svc::ExecRun run;
    };
    std::vector<Launch> launched;
    std::vector<std::pair<Seconds, std::int64_t>> stops;  ///< (t, run)
    bool holds_from_start = false;  ///< Executor::holds_from_start (as Slurm's)
};

/// An executor that emits exactly the events the test queues, with the test's timestamps, and
/// records launches and stops. No processes, no utilization of its own.
class ScriptedExecutor final : public svc::Executor {
public:
    explicit ScriptedExecutor(std::shared_ptr<Script> s) : s_(std::move(s)) {}
    void launch(Seconds t, const svc::ExecRun& r) override { s_->launched.push_back({t, r}); }
    void stop(Seconds t, std::int64_t run) override { s_->stops.push_back({t, run}); }
    void forget(std::int64_t) override {}
    void restore(const svc::ExecRun&, svc::ExecPhase, Seconds, Seconds) override {}
    Seconds next_event_s() const override { return s_->queue.empty() ? svc::kNever : s_->queue.front().t; }
    bool pop_due(Seconds now, ExecEvent& out) override {
        if (s_->queue.empty() || s_->queue.front().t > now) return false;
        out = s_->queue.front();
        s_->queue.erase(s_->queue.begin());
        return true;
    }
    Seconds executed_s(std::int64_t, Seconds) const override { return 0; }
    bool holds_from_start() const override { return s_->holds_from_start; }

private:
    std::shared_ptr<Script> s_;
};

/// One service over a fresh SQLite store: organisation "org", cluster "c1", one machine of 8
/// GPUs, workspace "ml" (its token the caller), the clock at T0.
class Harness {
public:
    /// `max_failures`: ServiceConfig::max_failures (a run ends failed at its max_failures-th
    /// failed attempt).
    explicit Harness(Seconds stall_timeout_s = 600, bool holds_from_start = false, int max_failures = 3) {
        svc::set_log_level("error");
        char tmpl[] = "/tmp/astraeus-svc-goodput-XXXXXX";
        const char* d = mkdtemp(tmpl);
        if (!d) throw std::runtime_error("mkdtemp failed");
        dir_ = d;
        auto store = st::open_sqlite(dir_);
        if (!store) throw std::runtime_error(store.error().message);
        auto ids = (*store)->init("org", "c1");
        if (!ids) throw std::runtime_error(ids.error().message);
        org_ = ids->first;
        cluster_id_ = ids->second;
        auto ws = (*store)->set_workspace(ids->first, ids->second, "ml", 1.0);
        if (!ws) throw std::runtime_error(ws.error().message);
        cfg_.organization = "org";
        cfg_.cluster = "c1";
        cfg_.pools = {{"default", {{1, 8}}}};
        cfg_.pools_given = true;
        cfg_.data_dir = dir_;
        cfg_.stall_timeout_s = stall_timeout_s;
        cfg_.max_failures = max_failures;
        cfg_.local.utilization_period_s = 10;  // a sample decides at most 2 x 10 s
        time_ = std::make_shared<svc::ManualTime>(T0);
        script_ = std::make_shared<Script>();
        script_->holds_from_start = holds_from_start;
        open(std::move(*store));
        caller_.token = st::TokenRec{1, "ml-token", st::Scope::Workspace, ids->first, *ws, 0, "", T0, false};
        admin_.token = st::TokenRec{2, "admin-token", st::Scope::OrgAdmin, ids->first, 0, 0, "", T0, false};
    }
    /// The service ends without a word (a crash, or a kill -9: every change was committed
    /// when it was answered) and starts again over the same store at time t, its executor's
    /// script kept (the runs' processes went on meanwhile).
    void restart_at(Seconds t) {
        svc_.reset();
        time_->set(t);
        auto store = st::open_sqlite(dir_);
        if (!store) throw std::runtime_error(store.error().message);
        open(std::move(*store));
    }
    ~Harness() {
        svc_.reset();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    /// Adds workspace `name` (the service starts again over its store to see it, at the same
    /// time); a caller with a token of that workspace.
    svc::Caller add_workspace(const std::string& name) {
        svc_.reset();
        auto store = st::open_sqlite(dir_);
        if (!store) throw std::runtime_error(store.error().message);
        auto ws = (*store)->set_workspace(org_, cluster_id_, name, 1.0);
        if (!ws) throw std::runtime_error(ws.error().message);
        open(std::move(*store));
        svc::Caller c;
        c.token = st::TokenRec{next_token_++, name + "-token", st::Scope::Workspace, org_, *ws, 0, "", T0, false};
        return c;
    }

    svc::Service& service() { return *svc_; }
    const svc::Caller& caller() const { return caller_; }
    const svc::Caller& admin() const { return admin_; }
    const Script& script() const { return *script_; }

    /// Moves the service's clock to t and runs what is due (events, rounds, the counts).
    void at(Seconds t) {
        time_->set(t);
        svc_->tick();
    }
    /// Queues an executor event of run `run`'s current attempt (the latest launch of it).
    void emit(K kind, Seconds t, std::int64_t run, double level = -1, int worker = -1, std::int64_t step = 0) {
        ExecEvent e{kind, t};
        e.run = run;
        e.level = level;
        e.worker = worker;
        e.step = step;
        for (const auto& l : script_->launched)
            if (l.run.run == run) e.attempt = l.run.attempt;
        auto& q = script_->queue;
        q.insert(std::upper_bound(q.begin(), q.end(), t, [](Seconds v, const ExecEvent& x) { return v < x.t; }), e);
    }
    /// emit() with `detail`: the executor's words (Withdrawn, Preempted, Held, Cancelled, Failed).
    void emit_detail(K kind, Seconds t, std::int64_t run, std::string detail) {
        emit(kind, t, run);
        auto& q = script_->queue;
        for (auto it = q.rbegin(); it != q.rend(); ++it)
            if (it->kind == kind && it->t == t && it->run == run) {
                it->detail = std::move(detail);
                break;
            }
    }
    /// A WorkerExited event of worker `worker` of run `run`'s current attempt at t: its exit
    /// code (-1 when killed) and the signal that ended it (0: none).
    void emit_exit(Seconds t, std::int64_t run, int worker, int exit_code, int signal) {
        emit(K::WorkerExited, t, run, -1, worker);
        auto& q = script_->queue;
        for (auto it = q.rbegin(); it != q.rend(); ++it)
            if (it->kind == K::WorkerExited && it->t == t && it->run == run && it->worker == worker) {
                it->exit_code = exit_code;
                it->signal = signal;
                break;
            }
    }
    /// Queues any event as is (machine events).
    void push(const ExecEvent& e) {
        auto& q = script_->queue;
        q.insert(std::upper_bound(q.begin(), q.end(), e.t, [](Seconds v, const ExecEvent& x) { return v < x.t; }), e);
    }
    void sample(Seconds t, std::int64_t run, double pct, int worker = 0) {
        emit(K::Utilization, t, run, pct, worker);
    }
    void progress(Seconds t, std::int64_t run, std::int64_t step, int worker = 0) {
        emit(K::Progress, t, run, 0, worker, step);
    }
    /// Submits run `name` (1 worker of `gpus` GPUs unless `extra` says otherwise) now; its id.
    std::int64_t submit(const std::string& name, int gpus, json extra = json::object()) {
        json b{{"name", name}, {"workers", 1}, {"gpus_per_worker", gpus}};
        b.update(extra);
        auto r = svc_->submit(caller_, b.dump());
        if (!r) throw std::runtime_error("submit " + name + ": " + r.error().message);
        return ++runs_;  // ids are 1, 2, ... in submission order on a fresh store
    }
    /// The run's ledger since its submission (GET /v1/runs/{name}/goodput).
    json ledger(const std::string& name) {
        auto r = svc_->run_goodput(caller_, name, {});
        if (!r) throw std::runtime_error("run_goodput " + name + ": " + r.error().message);
        return *r;
    }
    /// The launch time of run `run`'s attempt `attempt` (-1: not launched).
    Seconds launched_at(std::int64_t run, int attempt) const {
        for (const auto& l : script_->launched)
            if (l.run.run == run && l.run.attempt == attempt) return l.t;
        return -1;
    }

private:
    void open(std::unique_ptr<st::Store> store) {
        auto s = svc::Service::open_manual(cfg_, std::move(store), std::make_unique<ScriptedExecutor>(script_), time_);
        if (!s) throw std::runtime_error(s.error().message);
        svc_ = std::move(*s);
    }

    svc::ServiceConfig cfg_;
    std::string dir_;
    std::shared_ptr<svc::ManualTime> time_;
    std::shared_ptr<Script> script_;
    std::unique_ptr<svc::Service> svc_;
    svc::Caller caller_;
    svc::Caller admin_;
    std::int64_t runs_ = 0;
    st::Id org_ = 0, cluster_id_ = 0;
    st::Id next_token_ = 3;
};

/// GPU-hours of `gpu_s` GPU-seconds, as the API computes them.
inline double h(double gpu_s) { return gpu_s / 3600.0; }

/// The held part of category `k` (GPU-hours).
inline double held(const json& j, const char* k) { return j.at("held_gpu_hours").at(k).get<double>(); }
/// Held + not held of category `k` (GPU-hours).
inline double all(const json& j, const char* k) { return j.at("gpu_hours").at(k).get<double>(); }
/// unmeasured_gpu_hours, 0 when the key is absent (it is left out when zero).
inline double unmeasured(const json& j) { return j.value("unmeasured_gpu_hours", 0.0); }

}  // namespace scripted_service
