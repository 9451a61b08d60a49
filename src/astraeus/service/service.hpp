// The live service (issue 6): runs, workers and attempts of the workspaces of one cluster,
// scheduled by a Policy per pool (service/round_adapter.hpp) on the service's clock, executed by
// an Executor (service/executor.hpp), the goodput minute count (goodput/counter.hpp) into the
// hourly ledgers, alerts, and the REST API's operations (service contract,
// docs/api.md) as JSON values, with the visibility rules of
// spec/goodput.md "Who sees what". The HTTP adapter (api/http_server.hpp) only parses requests
// and writes answers.
//
// Durability: every operation that changes state runs under one lock and ends with one store
// transaction (runs, workers, attempts, goodput rows, the count's clock) before it returns, so a
// reply is sent only for what is on disk. The count's clock: before any change at time t, every
// live worker is counted through the minute boundaries <= t, and `counted_to` (that boundary)
// is written in the same transaction; after a restart each live worker is counted again from
// max(its submission, counted_to) in the state stored for it, so no GPU-second is lost or
// counted twice.
// Thread safety: every public function is thread-safe (one mutex).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <expected>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "astraeus/goodput/alerts.hpp"
#include "astraeus/goodput/counter.hpp"
#include "astraeus/goodput/ledger.hpp"
#include "astraeus/goodput/stragglers.hpp"
#include "astraeus/service/clock.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/service/executor.hpp"
#include "astraeus/service/idempotency.hpp"
#include "astraeus/service/log_quota.hpp"
#include "astraeus/service/submit_limiter.hpp"
#include "astraeus/service/round_adapter.hpp"
#include "astraeus/store/store.hpp"

namespace astraeus::exec {
class AgentHub;
}

namespace astraeus::service {

struct GoodputRowsOrder;

/// An API failure: the HTTP status and a message ({"error": message}).
struct ApiError {
    int status = 400;
    std::string message;
    int retry_after_s = 0;  ///< > 0: sent as Retry-After (429, 503, 507)
};
template <class T>
using ApiResult = std::expected<T, ApiError>;

/// Names of runs and workspaces: [A-Za-z0-9][A-Za-z0-9._-]{0,62} (safe in URLs, metric labels
/// and tables).
bool valid_name(const std::string& s);
/// A pool name: 1-63 bytes of valid UTF-8 without control characters (C0, DEL, C1) or a space at
/// either end. Wider than valid_name (pools are named by operators, shown escaped everywhere).
bool valid_pool_name(const std::string& s);

/// Query parameters of a request.
using Params = std::map<std::string, std::string>;

/// The caller of a request, from its bearer token.
struct Caller {
    store::TokenRec token;
    bool admin() const { return token.scope == store::Scope::OrgAdmin; }
    bool operator_() const { return token.scope == store::Scope::Operator; }
};

class Service {
public:
    /// Opens the service over `store`: creates the organisation, cluster, pools and machines
    /// of `config` when the store is empty, then rebuilds every run, worker and ledger row.
    static Result<std::unique_ptr<Service>> open(ServiceConfig config,
                                                 std::unique_ptr<store::Store> store,
                                                 std::unique_ptr<Executor> executor);
    /// open() on a clock its caller owns (tests): the service's time is `time`'s, moved only by
    /// ManualTime::set (then tick() runs what became due). Otherwise as open(), except that the
    /// store's clock is not checked against the real clock (the test chooses the times);
    /// `config.time_scale` must be 1. `serve` always uses open().
    static Result<std::unique_ptr<Service>> open_manual(ServiceConfig config,
                                                        std::unique_ptr<store::Store> store,
                                                        std::unique_ptr<Executor> executor,
                                                        std::shared_ptr<const ManualTime> time);
    /// A follower replica's read-only view (docs/operations.md "Replicas"): the state of `store`
    /// (a read-only store: store/read_only_store.hpp) loaded as open() does, but writing nothing
    /// (no organisation created, no pool or machine added, no run reconciled, no count resumed),
    /// with no executor (service/snapshot_executor.hpp): the rounds, the goodput count and every
    /// write operation are never run (loop() must not be called). `agent_machines`: the leader
    /// runs node agents (machines come from the store, as the leader's). Errors: the store's, or
    /// "the database holds no organisation yet" before a leader initialised it.
    static Result<std::unique_ptr<Service>> open_snapshot(ServiceConfig config, std::unique_ptr<store::Store> store,
                                                          bool agent_machines);
    ~Service();
    /// Waits (at most kForecastWaitS per pool) until every pool with pending runs has a current
    /// forecast: a follower's snapshot, before it is served, so that its lists show the pending
    /// runs' positions and estimated starts as the leader's do (a fresh snapshot has none yet).
    void await_forecasts();

    /// The caller of an `Authorization` header value ("Bearer astx_..."); 401 otherwise; 403
    /// for agent tokens (they call the agent endpoints only).
    ApiResult<Caller> authenticate(std::string_view authorization);

    // --- web sessions (service_sessions.cpp; sessions.hpp; docs/security.md "Web sessions") ----
    /// A session just opened: its secret (for the cookie only, never stored) and the answer.
    struct OpenedSession {
        std::string secret;
        Seconds max_age_s = 0;  ///< the cookie's Max-Age (ServiceConfig::web_sessions.lifetime_s)
        nlohmann::json doc;     ///< GET /v1/whoami's answer + "expires_at" (RFC 3339 UTC)
    };
    /// POST /v1/session: body {"token": "astx_..."}, the token checked as authenticate() checks
    /// it (401 unknown or revoked, 403 agent tokens; 400 a bad body); then a session lasting
    /// web_sessions.lifetime_s real seconds is stored (its secret's SHA-256; the token's oldest
    /// sessions beyond web_sessions.max_per_token end). 507 when the store refuses the write.
    ApiResult<OpenedSession> open_session(std::string_view body);
    /// The caller of a request carrying session secret `secret`: the session's token, with its
    /// scope; 401 when the session is unknown, expired or signed out, or its token revoked.
    ApiResult<Caller> authenticate_session(std::string_view secret);
    /// DELETE /v1/session: ends session `secret` in the store (nothing to do when unknown).
    ApiResult<void> close_session(std::string_view secret);

    // --- node agents and machines (docs/agents.md; service_agents.cpp) -------------------------
    /// The caller of an agent endpoint: an agent token of this cluster; 401 / 403 otherwise.
    ApiResult<Caller> authenticate_agent(std::string_view authorization);
    /// POST /v1/agent/register: body {"name", "pool", "gpus", "session", "addr"?, "workers",
    /// "events"}; `remote_addr` is the address used when "addr" is absent. Adds the machine to
    /// its pool (first time), adopts or kills the workers it reports. 400 bad body, 409 when
    /// the service does not run agents or the name is taken with other GPUs or another pool.
    ApiResult<nlohmann::json> agent_register(const Caller& c, std::string_view body,
                                             const std::string& remote_addr);
    /// POST /v1/agent/heartbeat and /v1/agent/events: body {"name", "session",
    /// "commands_acked", "events", "wait_ms"?}; answers {"commands", "events_acked",
    /// "heartbeat_s"} or {"register": true}.
    ApiResult<nlohmann::json> agent_heartbeat(const Caller& c, std::string_view body);
    /// POST /v1/agent/logs (service_agent_logs.cpp; docs/agents.md "Logs"): body {"name",
    /// "chunks": [{"run", "attempt", "worker", "offset", "data" (base64)}]}, at most 512 KiB of
    /// log bytes; appended to the worker's log under the data dir (agent_log_file.hpp). Answers
    /// {"chunks": [{"run", "attempt", "worker", "have", "capped"} or {..., "error"}]}: `have` is
    /// where the agent resumes. 400 bad body, 413 too much data, 409 not an agents service.
    ApiResult<nlohmann::json> agent_logs(const Caller& c, std::string_view body);
    /// GET /v1/machines (operators and org admins; 403 otherwise): every machine with its
    /// state, pool, GPUs, drain, last heartbeat and the runs it holds.
    ApiResult<nlohmann::json> machines_list(const Caller& c);
    /// POST /v1/machines/{name}/drain and /undrain (operators and org admins): a drained
    /// machine takes no new placement and its runs are stopped with the checkpoint signal
    /// (counted preemption); undrain makes it take work again. 404 for an unknown machine.
    ApiResult<nlohmann::json> drain_machine(const Caller& c, const std::string& name, bool drain);

    // --- runs (contract "Runs") ---------------------------------------------------------------
    /// POST /v1/runs (docs/api.md). `idempotency_key` (the Idempotency-Key header, "" when
    /// absent): the first submission with it from this token is stored with its reply in the
    /// run's transaction; a later one with the same body answers that reply again (201, no new
    /// run), with another body 422. 400 for a bad key. Kept kIdempotencyKeepS.
    /// Per-workspace limits (ServiceConfig::limits): beyond the workspace's pending runs or
    /// submissions per minute, a 429 with Retry-After. O(log n) in the runs, except a round: run
    /// at once while the pool's backlog is under kSyncRoundBacklog (the reply shows the
    /// placement or the reason), by the loop's next round otherwise (one round for a burst).
    ApiResult<nlohmann::json> submit(const Caller& c, std::string_view body,
                                     std::string_view idempotency_key = {});
    /// The backlog (pending runs of the pool) under which a submission runs its round itself.
    static constexpr std::size_t kSyncRoundBacklog = 256;
    /// Over kSyncRoundBacklog, a round (and a forecast) asked for by a change waits this many
    /// times as long as the last one took: each is O(pending), so together they take at most
    /// about a tenth of a core each while a flood is submitted (issue 18: at 4, 100,000 pending
    /// runs cost 1.35x per submission of 10,000 over HTTP on 2 cores).
    static constexpr int kBacklogRestFactor = 9;
    /// GET /v1/runs: one page of the visible runs, newest first, summary fields only (no
    /// command, workers or history: GET /v1/runs/{name} and /history); filters and page as in
    /// parse_runs_query (request_parse.hpp). Answers {"runs": [...], "matches": N,
    /// "next_cursor"?: "..."} ("matches": the runs matching the filters on every page;
    /// "next_cursor" only when more runs follow); each run's "goodput" (0..1, since submitted;
    /// absent when nothing was held). 400 on a bad parameter.
    ApiResult<nlohmann::json> list_runs(const Caller& c, const Params& q);
    /// GET /v1/runs/{name}/history: {"run", "workspace", "state", "history": [{"at", "at_s",
    /// "state", "attempt", "cause"?}]} (the run's states since the service started). 404 unknown.
    ApiResult<nlohmann::json> run_history(const Caller& c, const std::string& name, const Params& q);
    ApiResult<nlohmann::json> show_run(const Caller& c, const std::string& name, const Params& q);
    ApiResult<nlohmann::json> stop_run(const Caller& c, const std::string& name, const Params& q);
    /// Progress reports of a running run's workers: body {"worker": i, "step": n} or
    /// {"steps": [n0, n1, ...]} (one per worker). Feeds stall detection (no progress for the
    /// stall timeout = stalled, counted from the last progress) and straggler detection. 400 on
    /// a bad body, 404 for an unknown run, 409 when the run is not running, 403 for operators.
    /// Answers {"run", "workers": [{"index", "stalled", "straggler"}]}.
    ApiResult<nlohmann::json> report_progress(const Caller& c, const std::string& name,
                                              const Params& q, std::string_view body);

    /// A worker's log of one attempt (service_logs.cpp): ?worker=I (default 0), ?attempt=K
    /// (default the latest), ?offset=BYTES (default 0), ?limit=BYTES (default 1 MiB, at most
    /// 4 MiB). Only workspace tokens of the run's workspace (403 otherwise); 404 for an unknown
    /// run, a run not started yet, or an executor without logs. Answers {"run", "workspace",
    /// "attempt", "worker", "offset", "next_offset", "size", "done", "text"}; "done": nothing
    /// more will be written and everything was read.
    ApiResult<nlohmann::json> run_logs(const Caller& c, const std::string& name, const Params& q);

    // --- goodput (contract "Goodput") ---------------------------------------------------------
    ApiResult<nlohmann::json> goodput(const Caller& c, const Params& q);
    ApiResult<nlohmann::json> goodput_weekly(const Caller& c, const Params& q);
    ApiResult<nlohmann::json> run_goodput(const Caller& c, const std::string& name, const Params& q);
    ApiResult<nlohmann::json> cluster_goodput(const Caller& c, const std::string& org,
                                              const std::string& cluster, const Params& q);

    // --- read-only views for the web pages (service_web_api.cpp; docs/api.md) ------------------
    /// GET /fairness: per pool, each visible workspace's GPU time received (U) against deserved
    /// (D) over the scheduler's LTGF window and per closed bucket, and why each visible pending
    /// run waits. Workspace tokens see only their own workspace's rows and runs.
    ApiResult<nlohmann::json> fairness(const Caller& c);
    /// GET /runs/{run}/attempts: the run's attempts (start, end, outcome) and its workers'
    /// last step, rate, stalled and straggler flags now. 404 when unknown or not visible.
    ApiResult<nlohmann::json> run_attempts(const Caller& c, const std::string& name, const Params& q);
    /// GET /whoami: the caller's scope, workspace (workspace tokens), organisation and cluster.
    ApiResult<nlohmann::json> whoami(const Caller& c);
    /// GET /stalls: the visible running runs with workers stalled or a straggler now.
    ApiResult<nlohmann::json> stalls(const Caller& c);

    ApiResult<std::string> metrics(const Caller& c);
    ApiResult<nlohmann::json> alerts(const Caller& c);

    // --- health (no token; service_health.cpp) -------------------------------------------------
    /// Readiness: {"status": "ready", "store": "ok", "scheduler": "running"} when the store
    /// answers a read and the scheduler loop runs; 503 with what is not ready otherwise.
    ApiResult<nlohmann::json> readiness();
    /// The leader's part of a replicated service (service/leadership.hpp; before loop() starts):
    /// `metrics` is appended to metrics() (the lease's series), `ready` merged into readiness()'s
    /// answer (role, replica, generation); its generation becomes the fencing token of every
    /// reply to node agents (exec/agent_hub.hpp set_generation).
    void set_leadership(std::function<std::string()> metrics, nlohmann::json ready);

    /// The scheduler loop: wakes at executor events, lease ends and minute boundaries (the
    /// goodput count, alerts, pruning) until stop() is called.
    void loop();
    /// Asks loop() to return (from a signal-handling thread).
    void stop();
    /// After loop() has returned on a clean stop: when the executor's workers do not outlive
    /// the service (Executor::shutdown), they get the checkpoint signal and their grace, and
    /// their runs' attempts are ended as preemptions (the wind-down counted preemption while
    /// it holds the GPUs; not failure, not against max_failures) and stored: the runs wait
    /// again after the restart. Other executors: nothing is stored. Call once.
    void shutdown();
    /// Runs the due work now (tests; the loop does it by itself).
    void tick();
    Seconds now() const { return clock_.now(); }
    const ServiceConfig& config() const { return cfg_; }
    /// Tests: where the indexes kept as runs change (runs per workspace, the live runs, the
    /// ledger's runs per workspace) differ from a pass over every run; "" when they agree.
    std::string index_mismatch() const;

private:
    struct PoolState;
    struct RunMem;
    class Sink;

    Service(ServiceConfig config, std::unique_ptr<store::Store> store,
            std::unique_ptr<Executor> executor, Clock clock);
    /// What the read half of load() read that its reconcile half needs (service_state.hpp).
    struct Loaded;
    /// At open: read_store(), reconcile_loaded(), read_ledger(); then every pool's first round
    /// is due (service_read_store.cpp). Errors: the store's, or a configuration the store
    /// contradicts.
    Result<void> load();
    /// The read half of load() (service_read_store.cpp): the tenancy, pools and machines (those
    /// the configuration names added to the store first), workspaces, alert rules,
    /// Idempotency-Keys and the runs as stored, into memory; the executor is told nothing.
    Result<void> read_store(Loaded& got);
    /// The reconcile half of load() (service_reconcile.cpp): the executor's and the store's
    /// machines, each run not ended reconciled with the inventory (reconcile_run) and rebuilt
    /// (restore_run), the resumed counts stored (save_resumed_count), the fairness history
    /// replayed. A snapshot (read_only_) writes nothing.
    Result<void> reconcile_loaded(const Loaded& got);
    /// After the reconcile half (whose resumed rows it then includes): the goodput rows into the
    /// ledger (service_read_store.cpp).
    Result<void> read_ledger(Loaded& got);
    ApiResult<Caller> authenticate_any(std::string_view authorization);
    /// The caller of API token `token` (any scope, agents included); 401 unknown or revoked.
    /// Not under mu_ (the token is read through auth_store_), unless its workspace is new to the
    /// service (the workspaces are read again then).
    ApiResult<Caller> caller_of_token(const std::string& token);
    /// The token of SHA-256 `hash`: through auth_store_ under auth_mu_, else the store under mu_.
    Result<std::optional<store::TokenRec>> token_by_hash(const std::string& hash);
    /// After load(): auth_store_ opened (Store::open_reader); when the store has none, tokens are
    /// read under mu_ as before (logged).
    void open_auth_reader();
    /// The workspaces' names by id as last read (refresh_workspaces), readable without mu_.
    std::shared_ptr<const std::map<store::Id, std::string>> workspace_names() const { return ws_names_.load(); }
    void agent_machine_added(PoolState& pool, const store::MachineRec& m);
    /// Under mu_: binds the agent token of `c` to machine `name` at its first registration
    /// (stored); 403 when it is bound to another name (service_agent_tokens.cpp).
    ApiResult<void> bind_agent_token(const Caller& c, const std::string& name);
    /// Under mu_: whether the agent token of `c` registered machine `name` in this life of the
    /// service (false: it must register first); 403 when bound to another name.
    ApiResult<bool> agent_token_registered(const Caller& c, const std::string& name) const;
    Result<void> restore_run(RunMem& r, Seconds counted_to);
    // The goodput count across a restart (service_restore.cpp).
    /// r.rec.worker_list from the counter: each worker's state, parts, and where its count
    /// stands (last count, decided to, pending Deltas as text).
    void write_workers(RunMem& r);
    /// The time worker record k of run rec goes on counting from after a restart: its stored
    /// decided_s when the store's rows still stop at its stored count (the pending Deltas then
    /// join resumed_rows_, added once), else the store's counted_to (a later count emitted
    /// them); never before the submission. An error on a malformed pending text.
    Result<Seconds> count_resume_point(const store::RunRec& rec, const store::WorkerRec& k,
                                       Seconds counted_to);
    /// A waiting worker stored with open waits (open_waits_stored_) was counted up to the
    /// first minute boundary after its stored count unless its wait was open at the write
    /// (nothing pending: up to its stored count), and from there on not again: its resume
    /// point even when the store's counted_to is later.
    /// At load: writes resumed_rows_ and the resumed runs' workers in one transaction (all the
    /// live runs' workers, and meta open_waits = 1, on a store written before open waits).
    Result<void> save_resumed_count();
    /// A run not ended whose pool or a machine it holds is no longer in the configuration:
    /// requeued as after a failure (pending, reason "requeued: ...") or, when its pool is gone
    /// or its attempts are spent, ended failed (stopped when it was winding down at its
    /// owner's request), at time t; written to the store. Others: as is.
    Result<void> reconcile_run(store::RunRec& rec, Seconds t);

    // Under mu_:
    void begin(Seconds now);
    /// Writes the batch (and what the store refused before) in one transaction; whether it is
    /// durable. On a store error: store_failing_ (see writable()), nothing exits.
    bool commit();
    /// Under mu_: a 507 while the store refuses writes (writes are refused, reads served).
    ApiResult<void> writable() const;
    /// Everything due up to `now` (executor events, lease ends, woken pools: their rounds), then
    /// the count to `now`, and when `pending_rounds`, a round for each pool marked dirty.
    void catch_up(Seconds now, bool pending_rounds = true);
    void advance_count(Seconds t);
    void schedule(std::size_t pool, Seconds t);
    void apply_start(RunMem& r, const Decision& d, Seconds t);
    /// The run's placed or running workers stop for a preemption at t (counted preemption while
    /// they wind down) and its open attempt ends "preempted"; the run's state is the caller's.
    void preempt_attempt(RunMem& r, Seconds t);
    void preempt(RunMem& r, Seconds t);
    // The executors' events (service_exec_events.cpp).
    /// One executor event at its time e.t: a machine's, or a run's current attempt's (events
    /// of an earlier attempt only tell that its processes are gone).
    void on_exec(const ExecEvent& e);
    /// MachineLost (every run holding GPUs on it fails with it) and MachineBack.
    void machine_event(const ExecEvent& e);
    /// A Foreign event: the machine's GPUs held by jobs outside the service leave the rounds.
    void foreign_event(const ExecEvent& e);
    /// What the resource manager's administrator did to run r (Cancelled, Held, Unheld,
    /// Preempted) or a placement it did not start in time (Withdrawn): executor.hpp.
    void resource_manager_event(RunMem& r, const ExecEvent& e);
    void end_run(RunMem& r, Seconds t, const std::string& state, const std::string& outcome);
    /// WorkerStarted, WorkerExited, Progress and Utilization events (service_exec_events.cpp).
    void on_worker_event(RunMem& r, const ExecEvent& e);
    /// Failed attempts of run r (preemptions and withdrawn placements are not failures), for
    /// max_failures (service_exec_events.cpp).
    static int failures(const RunMem& r);
    /// Launches r's placed attempt unless its GPUs still hold processes of a stopping attempt
    /// (its own previous one, or another run's): then it waits, `starting`, and is retried
    /// when those are gone (service_exec.cpp).
    void try_launch(RunMem& r, Seconds t);
    /// A stop of a run whose launch was still waiting: nothing runs, the stop is done at t.
    void cancel_launch(RunMem& r, Seconds t);
    /// What the executor gets of run r's current attempt (service_exec.cpp).
    ExecRun exec_run(const RunMem& r) const;
    /// Reserves the log room of r's new attempt in its workspace's log quota (removing the
    /// workspace's oldest logs when needed): each worker's cap, unset for an executor that
    /// keeps no logs here (service_exec.cpp).
    std::optional<std::uint64_t> reserve_logs(RunMem& r, const ExecRun& e);
    /// GPU indices for r's workers on their machines, the lowest free ones (service_exec.cpp).
    void assign_gpus(RunMem& r);
    void minute_work(Seconds now);
    void refresh_workspaces();
    void touch(RunMem& r);
    Seconds next_timed_event();
    /// Where the service keeps a worker's log shipped by an agent: the local executor's layout
    /// under the data dir (service_agent_logs.cpp).
    std::string agent_log_path(const std::string& workspace, const std::string& run, int attempt,
                               int worker) const;
    /// Runs (by id) whose gang has a straggler now; only running runs count.
    std::set<store::Id> runs_with_straggler(Seconds now) const;

    ApiResult<RunMem*> find_run(const Caller& c, const std::string& name, const Params& q);
    bool visible(const Caller& c, const RunMem& r) const;
    /// The workspace whose runs a caller sees (a workspace token's), else
    /// goodput::kAllWorkspaces: the ledger's indexed queries of that scope.
    int ws_scope(const Caller& c) const;
    /// The fields every view of a run has (name .. time_limit_s, the forecast while pending).
    /// With `forecast` false the forecast is neither shown nor asked for: the reply to a
    /// submission, whose new run no published forecast holds yet (asking would make every
    /// submission start an O(backlog) forecast: a fork of the pool under mu_, issue 18).
    nlohmann::json run_head_json(const RunMem& r, bool forecast = true) const;
    nlohmann::json run_json(const RunMem& r, bool forecast = true) const;
    /// A run's fields in GET /v1/runs (no command, worker list nor history).
    nlohmann::json run_summary_json(const RunMem& r) const;
    std::string by_name(goodput::By by, int id) const;
    /// Under mu_ (service_forecast.cpp): adds a pending run's "position" (1-based, in its pool)
    /// and "estimated_start" (RFC 3339 UTC, null when unknown) to `j` from the pool's last
    /// published forecast (service/forecast.hpp); never computes it: when it is not current
    /// (a round or a change since), it asks the forecaster thread for a new one.
    void add_forecast_json(nlohmann::json& j, const RunMem& r) const;
    /// Under mu_ (held by `lk`, released while waiting): waits, at most kForecastWaitS, until
    /// pool `pi`'s forecast is current or one begun after this call is published, so that a
    /// run's own page shows its position as of now. Other readers never wait for a forecast.
    void await_forecast(std::unique_lock<std::mutex>& lk, std::size_t pi) const;
    /// Whether the pool's published forecast is of its state now (no round nor change since).
    static bool forecast_current(const PoolState& pool);
    /// The forecaster thread (started by the first read that asks): forks a pool's adapter
    /// under mu_, runs the forecast off it, publishes it under mu_, and waits at least as long
    /// as that took before the pool's next one (at most half of one core however many ask).
    void forecast_loop() const;
    /// Names pool machine m for a pending run's reason: "gpu-2 (lost)", "gpu-3 (drained)".
    std::string machine_reason_name(const PoolState& pool, int m) const;
    /// Why machine m's GPUs are out of the rounds for jobs outside the service (the executor's
    /// words: "4 GPUs of node gpu2 are held by Slurm jobs outside Astraeus (job 2)").
    std::string foreign_reason(const PoolState& pool, int m) const;
    /// Under mu_: adds a zero row (sorted by run id) for each run visible through `f` that held
    /// GPUs in [start_s, end_s) but has no ledger row yet (held less than a minute so far).
    void add_held_runs(std::vector<goodput::Row>& rows, Seconds start_s, Seconds end_s,
                       int workspace) const;
    /// by=run answers: each row gets its run's "workspace".
    void add_run_workspaces(nlohmann::json& doc, const std::vector<goodput::Row>& rows) const;
    /// The rows_json document of `rows` (by `by`, over [start_s, end_s)) with only the rows `o`
    /// keeps, in its order (goodput_rows_order.hpp), the total over every row and "rows_total"
    /// (how many rows there are in all); run rows name their workspace.
    nlohmann::json ordered_rows_json(goodput::By by, Seconds start_s, Seconds end_s,
                                     const std::vector<goodput::Row>& rows, const GoodputRowsOrder& o) const;
    ApiResult<nlohmann::json> goodput_for(const Caller& c, const Params& q, int workspace);

    ServiceConfig cfg_;
    std::unique_ptr<store::Store> store_;
    std::unique_ptr<Executor> exec_;
    exec::AgentHub* agents_ = nullptr;  ///< exec_ when it is the agents executor
    bool read_only_ = false;            ///< open_snapshot: never writes, never schedules nor counts
    bool agent_machines_ = false;       ///< machines come from node agents (agents_, or a snapshot of such a leader)
    std::set<store::Id> drained_;       ///< drained machines
    std::map<store::Id, std::string> foreign_;  ///< machine -> whose GPUs are held outside us
    std::map<store::Id, std::string> agent_tokens_;  ///< agent token -> its machine (registered)
    Clock clock_;

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::condition_variable agent_cv_;  ///< heartbeat long-polls wait for commands
    bool stopping_ = false;
    bool loop_running_ = false;  ///< loop() is running (readiness)
    std::function<std::string()> leader_metrics_;  ///< set_leadership (empty: SQLite, one server)
    nlohmann::json leader_ready_ = nlohmann::json::object();
    bool wake_ = false;
    std::mutex agent_logs_mu_;  ///< serialises appends to shipped logs (not under mu_)
    mutable std::condition_variable forecast_cv_;  ///< forecasts asked for / published (with mu_)
    mutable bool forecaster_stop_ = false;
    mutable std::thread forecaster_;  ///< forecast_loop(); joined by ~Service

    store::OrgRec org_;
    store::ClusterRec cluster_;
    std::vector<std::unique_ptr<PoolState>> pools_;
    std::map<store::Id, std::pair<std::size_t, int>> machine_index_;  ///< id -> (pool, index)
    std::map<store::Id, std::string> machine_names_;  ///< every machine, retired ones included
    std::map<store::Id, std::string> retired_pools_;   ///< pools no longer in the configuration
    std::map<store::Id, store::WorkspaceRec> workspaces_;
    /// workspaces_' names, published by refresh_workspaces for readers without mu_ (authentication,
    /// whoami).
    std::atomic<std::shared_ptr<const std::map<store::Id, std::string>>> ws_names_{
        std::make_shared<const std::map<store::Id, std::string>>()};
    /// A second connection to the store for token lookups, under auth_mu_ (not mu_): a call's
    /// authentication never waits behind a submission's transaction or a round.
    std::unique_ptr<store::Store> auth_store_;
    std::mutex auth_mu_;
    std::map<store::Id, std::unique_ptr<RunMem>> runs_;
    /// workspace -> its runs by id (the runs_ of that workspace; kept at submit and load, runs
    /// are never removed): a workspace's list costs its own runs.
    std::map<store::Id, std::map<store::Id, RunMem*>> ws_runs_;
    /// The runs a list or a count looks at: those of workspace `ws` (> 0), else every run.
    template <class F>
    void each_run_of(store::Id ws, F&& f) const;
    store::Id next_run_id_ = 1;

    std::unique_ptr<Sink> sink_;
    goodput::GoodputLedger ledger_;
    std::unique_ptr<goodput::GoodputCounter> counter_;
    std::unique_ptr<goodput::AlertEngine> alerts_;
    std::vector<goodput::Alert> alert_list_;
    goodput::StragglerDetector stragglers_;
    std::map<store::Id, int> progress_attempt_;  ///< per run: its attempt at the last report
    IdempotencyIndex idem_;                      ///< Idempotency-Keys of the last day
    SubmitLimiter limiter_;                      ///< submissions per minute per workspace
    LogQuota log_quota_{cfg_.limits.log_bytes, cfg_.local.runner.log_cap_bytes};  ///< logs per workspace
    /// (workspace, run name) -> run id: the name check of a submission in O(log n).
    std::map<std::pair<store::Id, std::string>, store::Id> run_names_;
    /// Runs that may hold GPUs (not pending, not ended), and some pending ones touched since the
    /// last scan: what the lease-end and next-event scans look at instead of every run (O(held),
    /// not O(backlog), per submission). Every run that leaves `pending` is touched first. By id,
    /// with the run itself (no lookup in runs_ per live run and call).
    std::map<store::Id, RunMem*> live_;
    /// Under mu_: the runs of live_ not pending nor ended (pruning the others).
    std::vector<RunMem*> live_runs();

    store::Batch batch_;
    store::Batch unsaved_;        ///< what the store refused, written at the next commit
    /// The store's worker records were written with open waits (meta open_waits = 1): a waiting
    /// worker's stored count is where its wait stands (count_resume_point).
    bool open_waits_stored_ = false;
    store::Batch resumed_;        ///< at load: the pending counts restored (save_resumed_count)
    bool store_failing_ = false;  ///< the last write failed (a full disk, an I/O error)
    std::string store_error_;     ///< its message
    std::set<store::Id> dirty_;
    Seconds last_event_s_ = 0;
    Seconds last_minute_s_ = 0;
    Seconds last_prune_s_ = 0;
};

}  // namespace astraeus::service
