// Internal to the service (service*.cpp): the in-memory state of pools and runs, and small
// helpers of the API operations. Not a public header. Thread safety: under Service::mu_.
#pragma once
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <optional>

#include "astraeus/exec/command_spec.hpp"
#include "astraeus/goodput/counter.hpp"
#include "astraeus/service/forecast.hpp"
#include "astraeus/service/round_adapter.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/api/run_limits.hpp"
#include "astraeus/store/store.hpp"

namespace astraeus::service::detail {

namespace gp = goodput;

using api::kMaxGpusPerWorker;
using api::kMaxRunSeconds;
using api::kMaxWorkers;

inline ApiError bad(std::string m) { return {400, std::move(m)}; }
inline ApiError not_found(std::string m) { return {404, std::move(m)}; }
inline std::string str(std::int64_t v) { return std::to_string(v); }
/// 1 to max_len decimal digits.
inline bool is_digits(const std::string& s, std::size_t max_len) {
    if (s.empty() || s.size() > max_len) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

/// Where the open wait of a waiting worker stored with open waits began: its stored count when
/// nothing was pending at the write, else the first minute boundary after it
/// (service_restore.cpp).
Seconds open_wait_start(const store::WorkerRec& k);

/// A count's Delta as the store's hourly row (added to the row of its key).
inline store::GoodputRowRec goodput_row(const gp::Delta& d) {
    return {d.run, d.machine, d.hour, static_cast<int>(d.category), d.held, d.gpu_s};
}
/// "machine:gpus,..." (the store's form of a worker's parts) and back.
std::string parts_text(const std::vector<gp::HeldPart>& parts);
std::vector<gp::HeldPart> parse_parts(const std::string& s);
/// The stored command as the API shows it: "command" (argv array, [] when none), "env",
/// "workdir", "running_at".
void add_command_json(nlohmann::json& j, const std::string& stored);
/// A worker's GPU indices as a suffix of its stored parts ("@0.1"; "" when none) and back.
std::string gpu_index_text(const std::vector<std::vector<int>>& idx, std::size_t worker);
std::vector<int> parse_gpu_index(const std::string& parts);
/// Ends the run's open attempt (the last one, if it has no end yet) at `t` with `outcome`
/// ("preempted", "failed", ...); an attempt already ended is left as it is.
void end_open_attempt(store::RunRec& rec, Seconds t, const std::string& outcome);

}  // namespace astraeus::service::detail

namespace astraeus::service {

/// What Service::read_store read that Service::reconcile_loaded needs (the two halves of load()).
struct Service::Loaded {
    std::vector<store::MachineRec> machines;  ///< the cluster's machines as stored, retired ones included
    AstraeaOptions opt;                       ///< the options the rounds schedule with
    Seconds counted_to = 0;                   ///< the store's counted_to_s (Unix seconds)
    std::vector<store::Id> order;             ///< the runs' ids in the store's order
    std::size_t ledger_rows = 0;              ///< goodput rows read (read_ledger)
};

struct Service::PoolState {
    store::PoolRec rec;
    std::vector<store::MachineRec> machines;
    std::unique_ptr<RoundAdapter> sched;
    std::map<int, store::Id> job_run;
    /// Per job index: its run (null: none), as job_run says; the rounds read it per pending run.
    std::vector<RunMem*> job_mem;
    /// Runs whose lease catch_up ended (RunMem::lease_ended_at set) since the pool's last round:
    /// the round reads and resets these, not every run.
    std::vector<RunMem*> lease_ended;
    bool dirty = false;
    std::uint64_t rounds = 0;  ///< rounds made (schedule())
    /// With a backlog over kSyncRoundBacklog, the next round asked for by a change (not by a
    /// timed event) waits until then: kBacklogRestFactor times as long as the last round took, so
    /// that a flood of submissions is placed by one round per burst (a round is O(pending): one
    /// per submission made a flood quadratic), rounds at most a tenth of the loop's time.
    std::chrono::steady_clock::time_point round_not_before{};
    /// Its pending runs' last published forecast by job (service_forecast.cpp); stale after
    /// each round. Numbers: forecasts begun (forked) and the one published (0: none yet).
    mutable std::map<int, RunForecast> forecast;
    mutable bool forecast_stale = true;
    mutable bool forecast_wanted = false;  ///< a read asked the forecaster for a new one
    mutable std::uint64_t forecast_begun = 0, forecast_published = 0;
    mutable std::chrono::steady_clock::time_point forecast_not_before{};  ///< the next one's earliest
    void set_job_mem(int j, RunMem* r) {
        if (static_cast<std::size_t>(j) >= job_mem.size()) job_mem.resize(static_cast<std::size_t>(j) + 1, nullptr);
        job_mem[static_cast<std::size_t>(j)] = r;
    }
    RunMem* run_of_job(int j) const {
        return j >= 0 && static_cast<std::size_t>(j) < job_mem.size() ? job_mem[static_cast<std::size_t>(j)] : nullptr;
    }
    int gpus() const {
        int n = 0;
        for (const auto& m : machines) n += m.gpus;
        return n;
    }
};

struct Service::RunMem {
    store::RunRec rec;
    std::size_t pool = 0;
    int job = -1;
    std::vector<int> w;                              ///< counter worker ids
    std::vector<std::vector<goodput::HeldPart>> parts;    ///< per worker, machine ids
    std::vector<std::vector<int>> gpu_index;         ///< per worker, GPU indices on its machines
    double level = -1;
    Seconds lease_ended_at = -1;
    bool requeue_at_stop_done = false;  ///< stopped by a drain: the scheduler requeues it then
    bool launch_pending = false;  ///< placed; the executor's launch waits for its GPUs
    bool prev_alive = false;      ///< its previous attempt's processes may still run
    bool held_outside = false;    ///< held by the resource manager's administrator (Held event)
    /// The pending reason last told to an executor that shows waiting runs (Executor::waiting).
    std::optional<std::string> told_waiting;
    /// How the first worker that failed in attempt `exit_attempt` ended ("worker 0 exited with
    /// code 7"): the detail of that attempt's failure when the executor gives none.
    std::string exit_detail;
    int exit_attempt = 0;
    std::map<int, std::uint64_t> log_caps;  ///< attempt -> each worker's log cap (log quota)
    /// attempt -> per worker, the machines it was placed on: the attempts placed since the
    /// service started and the latest one of the store, the last kKeptAttemptPlacements. Only
    /// the agent of a worker's machine may ship its log (POST /v1/agent/logs).
    std::map<int, std::vector<std::vector<goodput::HeldPart>>> attempt_parts;
    static constexpr std::size_t kKeptAttemptPlacements = 4;
    /// The run's states since the service started (the API's "history"): when each began.
    struct Transition {
        Seconds since_s;
        std::string state, cause;
        int attempt;
    };
    std::vector<Transition> history;
    /// A "stopping" state carries its cause (owner, limit, preemption, failure); so does a
    /// "stopped" one reached straight from "pending" (stopped by its owner while waiting).
    void note_state() {
        const auto before = std::find_if(history.rbegin(), history.rend(),
                                         [](const Transition& h) { return h.state != "stopped"; });
        const bool from_pending = rec.state == "stopped" && before != history.rend() && before->state == "pending";
        const std::string cause = rec.state == "stopping" || from_pending ? rec.stop_cause : "";
        if (!history.empty() && history.back().since_s == rec.phase_since_s &&
            history.back().state == rec.state && history.back().cause == cause)
            return;
        if (!history.empty() && history.back().state == rec.state && history.back().cause == cause &&
            history.back().attempt == rec.attempts)
            return;
        history.push_back({rec.phase_since_s, rec.state, cause, rec.attempts});
    }
    bool ended() const { return rec.ended_s >= 0; }
    bool holding() const {
        return rec.state == "starting" || rec.state == "running" ||
               (rec.state == "stopping" && rec.stop_cause != "preemption");
    }
};

template <class F>
void Service::each_run_of(store::Id ws, F&& f) const {
    if (ws <= 0) {
        for (const auto& [id, r] : runs_) f(*r);
        return;
    }
    const auto it = ws_runs_.find(ws);
    if (it == ws_runs_.end()) return;
    for (const auto& [id, r] : it->second) f(*r);
}

}  // namespace astraeus::service
