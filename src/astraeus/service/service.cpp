#include "astraeus/service/service.hpp"
#include "astraeus/service/pending_reasons.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "astraeus/goodput_io/prometheus_text.hpp"
#include "astraeus/service/token.hpp"
#include "astraeus/exec/agent_hub.hpp"
#include "astraeus/goodput/calendar.hpp"
#include "astraeus/goodput_io/ledger_json.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

using nlohmann::json;
namespace gp = goodput;
using namespace detail;

namespace detail {


std::string parts_text(const std::vector<gp::HeldPart>& parts) {
    std::string s;
    for (const auto& p : parts) {
        if (!s.empty()) s += ',';
        s += std::to_string(p.machine);
        s += ':';
        s += std::to_string(p.gpus);
    }
    return s;
}

std::vector<gp::HeldPart> parse_parts(const std::string& s) {
    std::vector<gp::HeldPart> out;
    std::size_t i = 0;
    while (i < s.size()) {
        const std::size_t comma = std::min(s.find(',', i), s.size());
        const std::string item = s.substr(i, comma - i);
        const std::size_t colon = item.find(':');
        if (colon != std::string::npos)
            out.push_back({std::stoi(item.substr(0, colon)), std::stoi(item.substr(colon + 1))});
        i = comma + 1;
    }
    return out;
}

}  // namespace detail

bool valid_name(const std::string& s) {
    // [A-Za-z0-9][A-Za-z0-9._-]{0,62}, by hand: std::regex trips GCC 12 -Wmaybe-uninitialized
    // under the sanitizers, and is slow.
    const auto alnum = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    };
    if (s.empty() || s.size() > 63 || !alnum(s.front())) return false;
    return std::all_of(s.begin(), s.end(),
                       [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

bool valid_pool_name(const std::string& s) {
    // 1-63 bytes of valid UTF-8, no control character (C0, DEL, C1), no space at either end.
    if (s.empty() || s.size() > 63 || s.front() == ' ' || s.back() == ' ') return false;
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const int n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        std::uint32_t cp = n == 1 ? c : c & (0x7Fu >> n);
        for (int k = 1; k < n; ++k) {
            const auto d = static_cast<unsigned char>(s[i + k]);
            if ((d & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (d & 0x3F);
        }
        const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;  // overlong, surrogate
        if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return false;
        i += static_cast<std::size_t>(n);
    }
    return true;
}

// --- state -----------------------------------------------------------------------------------

void Service::touch(RunMem& r) {
    r.note_state();
    dirty_.insert(r.rec.id);
    if (!r.ended()) live_.emplace(r.rec.id, &r);
}

std::vector<Service::RunMem*> Service::live_runs() {
    std::vector<RunMem*> out;
    for (auto it = live_.begin(); it != live_.end();) {
        RunMem& r = *it->second;
        // Pending and ended runs leave (a pending run comes back when touched: placed).
        if (r.ended() || r.rec.state == "pending") {
            it = live_.erase(it);
            continue;
        }
        out.push_back(&r);
        ++it;
    }
    return out;
}

std::string Service::index_mismatch() const {
    std::lock_guard lk(mu_);
    std::map<store::Id, std::map<store::Id, RunMem*>> by_ws;
    for (const auto& [id, r] : runs_) {
        by_ws[r->rec.workspace_id][id] = r.get();
        const bool live = !r->ended() && r->rec.state != "pending";
        const auto in = live_.find(id);
        if (live && (in == live_.end() || in->second != r.get()))
            return "run " + std::to_string(id) + " (" + r->rec.state + ") is not in the live runs";
        if (ledger_.workspace_of(static_cast<int>(id)) != static_cast<int>(r->rec.workspace_id))
            return "run " + std::to_string(id) + " is in another workspace in the ledger";
    }
    if (by_ws != ws_runs_) return "the runs per workspace differ from the runs";
    for (const auto& [ws, runs] : by_ws) {
        std::vector<int> ids;
        for (const auto& [id, r] : runs) ids.push_back(static_cast<int>(id));
        if (ids != ledger_.runs_of(static_cast<int>(ws)))
            return "the ledger's runs of workspace " + std::to_string(ws) + " differ";
    }
    return "";
}

class Service::Sink final : public gp::DeltaSink {
public:
    Sink(gp::GoodputLedger& l, store::Batch& b) : ledger_(l), batch_(b) {}
    void add(const gp::Delta& d) override {
        ledger_.add(d);
        batch_.goodput.push_back(goodput_row(d));
    }
    // Open waits live in the ledger only: their rows are written when they close (the run's
    // worker record says where each stands, for a restart: count_resume_point).
    void open_wait(const gp::OpenWait& o) override { ledger_.open_wait(o); }
    void close_wait(int worker) override { ledger_.close_wait(worker); }
    void counted_to(Seconds b) override { ledger_.counted_to(b); }

private:
    gp::GoodputLedger& ledger_;
    store::Batch& batch_;
};

Service::Service(ServiceConfig config, std::unique_ptr<store::Store> store,
                 std::unique_ptr<Executor> executor, Clock clock)
    : cfg_(std::move(config)), store_(std::move(store)), exec_(std::move(executor)),
      clock_(std::move(clock)) {
    sink_ = std::make_unique<Sink>(ledger_, batch_);
    agents_ = dynamic_cast<exec::AgentHub*>(exec_.get());
    agent_machines_ = agents_ != nullptr;
    if (agents_) agents_->set_notify([this] { agent_cv_.notify_all(); });
    // A utilization sample decides 2 sampling periods, on the service's clock (the samplers'
    // period is real time: local.utilization_period_s, an agent's default alike).
    const auto period = static_cast<Seconds>(std::ceil(cfg_.local.utilization_period_s * cfg_.time_scale));
    counter_ = std::make_unique<gp::GoodputCounter>(
        gp::CounterConfig{cfg_.stall_timeout_s, cfg_.busy_pct, std::max<Seconds>(1, period), true}, *sink_);
    exec_->attach([this] { return clock_.now(); },
                  [this] {
                      {
                          std::lock_guard lk(mu_);
                          wake_ = true;
                      }
                      cv_.notify_all();
                  });
}

Service::~Service() {
    {
        std::lock_guard lk(mu_);
        forecaster_stop_ = true;
    }
    forecast_cv_.notify_all();
    if (forecaster_.joinable()) forecaster_.join();
    exec_.reset();  // first: its thread may still call the wake callback, which uses mu_ and cv_
}

Result<std::unique_ptr<Service>> Service::open(ServiceConfig config,
                                               std::unique_ptr<store::Store> store,
                                               std::unique_ptr<Executor> executor) {
    auto last = store->meta("last_event_s");
    if (!last) return std::unexpected(last.error());
    // The count's clock never goes back (counted_to: no GPU-second counted twice), and at
    // time_scale 1 the service's clock is the real clock. A data directory run faster
    // (time_scale > 1) is ahead of the real clock: continuing it at time_scale 1 would keep
    // the clock ahead for good, so it is refused beyond a small skew (a clock step of the
    // host); within it the clock is the real one and the count waits for it.
    const Seconds real = Clock::real_now();
    const Seconds stored = last->value_or(0);
    constexpr Seconds kMaxSkew = 120;
    if (config.time_scale == 1.0 && stored > real + kMaxSkew)
        return fail("the data directory's clock is at " + gp::format_rfc3339(stored) + ", " +
                    std::to_string(stored - real) + " s ahead of the real clock (" + gp::format_rfc3339(real) +
                    "): it was run with time_scale > 1, and its times cannot go back; use a new data "
                    "directory for time_scale 1 (or keep time_scale > 1)");
    const Seconds base = config.time_scale == 1.0 ? real : std::max(real, stored);
    const double scale = config.time_scale;
    std::unique_ptr<Service> s(
        new Service(std::move(config), std::move(store), std::move(executor), Clock(base, scale)));
    if (auto ok = s->load(); !ok) return std::unexpected(ok.error());
    s->open_auth_reader();
    return s;
}

Result<std::unique_ptr<Service>> Service::open_manual(ServiceConfig config,
                                                      std::unique_ptr<store::Store> store,
                                                      std::unique_ptr<Executor> executor,
                                                      std::shared_ptr<const ManualTime> time) {
    if (!time) return fail("open_manual: no ManualTime given");
    if (config.time_scale != 1.0) return fail("open_manual: time_scale must be 1 (the manual clock's seconds are the service's)");
    std::unique_ptr<Service> s(
        new Service(std::move(config), std::move(store), std::move(executor), Clock(std::move(time))));
    if (auto ok = s->load(); !ok) return std::unexpected(ok.error());
    s->open_auth_reader();
    return s;
}

void Service::refresh_workspaces() {
    auto ws = store_->workspaces(org_.id, cluster_.id);
    if (!ws) {
        log(LogLevel::Error, "store.read_failed", {{"error", ws.error().message}});
        return;
    }
    std::vector<Tenant> tenants;
    for (const auto& w : *ws) {
        workspaces_[w.id] = w;
        tenants.push_back({w.name, w.weight});
    }
    for (auto& p : pools_) p->sched->set_tenants(tenants);
    auto names = std::make_shared<std::map<store::Id, std::string>>();
    for (const auto& [id, w] : workspaces_) (*names)[id] = w.name;
    ws_names_.store(std::move(names));
}

void Service::open_auth_reader() {
    auto r = store_->open_reader();
    if (!r) {
        log(LogLevel::Warn, "auth.shared_lock",
            {{"why", r.error().message}, {"effect", "tokens are read under the service's lock"}});
        return;
    }
    auth_store_ = std::move(*r);
}

// --- transactions ----------------------------------------------------------------------------

void Service::begin(Seconds now) {
    batch_ = store::Batch{};
    dirty_.clear();
    (void)now;
}

namespace {
/// A deposed leader (its lease generation taken over: store::is_fenced) stops at once, writing
/// nothing more: exit code 3 (docs/operations.md "Replicas").
[[noreturn]] void exit_deposed(const std::string& why) {
    log(LogLevel::Error, "leader.deposed",
        {{"error", why}, {"action", "exiting with code 3: another replica leads this database"}});
    std::fflush(nullptr);
    std::_Exit(3);
}
}  // namespace

bool Service::commit() {
    if (read_only_) {  // a snapshot never writes (open_snapshot); nothing changed it anyway
        batch_ = store::Batch{};
        dirty_.clear();
        return true;
    }
    const Seconds now = std::max(last_event_s_, clock_.now());
    for (store::Id id : dirty_) {
        RunMem& r = *runs_.at(id);
        r.note_state();
        write_workers(r);
        batch_.runs.push_back(r.rec);
    }
    batch_.meta.push_back({"counted_to_s", gp::minute_start(last_event_s_)});
    batch_.meta.push_back({"last_event_s", last_event_s_});
    (void)now;
    // While the store refuses writes (a full disk, an I/O error), everything it refused is kept
    // in unsaved_ and written, in one transaction with the new changes, at the next commit (the
    // loop retries every 2 s). The memory is ahead of the store meanwhile: writes are refused
    // (507), rounds are held (no new launches), and nothing acknowledged is lost: a write that
    // failed was answered 507, not 2xx. The service never exits for it (docs/operations.md).
    bool durable = true;
    if (store_failing_) {
        store::merge_batch(unsaved_, std::move(batch_));
        if (auto ok = store_->apply(unsaved_); ok) {
            store_failing_ = false;
            unsaved_ = store::Batch{};
            log(LogLevel::Info, "store.recovered", {{"after", store_error_}});
            store_error_.clear();
            for (auto& p : pools_) p->dirty = true;  // the rounds held meanwhile
            wake_ = true;
        } else {
            if (store::is_fenced(ok.error())) exit_deposed(ok.error().message);
            store_error_ = ok.error().message;
            durable = false;
        }
    } else if (auto ok = store_->apply(batch_); !ok) {
        if (store::is_fenced(ok.error())) exit_deposed(ok.error().message);
        store_failing_ = true;
        store_error_ = ok.error().message;
        log(LogLevel::Error, "store.write_failed",
            {{"error", store_error_}, {"action", "writes refused (507), launches held, retried every 2 s"}});
        unsaved_ = std::move(batch_);
        durable = false;
    }
    batch_ = store::Batch{};
    dirty_.clear();
    return durable;
}

ApiResult<void> Service::writable() const {
    if (read_only_) return std::unexpected(ApiError{503, "this replica is a follower: it serves reads only", 1});
    if (!store_failing_) return {};
    return std::unexpected(ApiError{507, "the service cannot write its store (" + store_error_ +
                                             "): writes are refused until it can (a full disk? free space in "
                                             "the data directory); reads are served",
                                    10});
}

void Service::advance_count(Seconds t) {
    if (t < last_event_s_) t = last_event_s_;
    counter_->advance(t);
    last_event_s_ = t;
}

Seconds Service::next_timed_event() {
    Seconds t = exec_->next_event_s();
    for (const RunMem* r : live_runs())
        if (!r->ended() && (r->rec.state == "starting" || r->rec.state == "running") &&
            r->rec.lease_end_s >= 0)
            t = std::min(t, r->rec.lease_end_s);
    for (auto& p : pools_) {
        const Seconds w = p->sched->next_wake_s();
        if (w != kNoWake) t = std::min(t, w);
    }
    return t;
}

namespace {
/// Seconds within which lease ends of one pool are taken together (see catch_up).
constexpr Seconds kLeaseAlignS = 60;
}  // namespace

void Service::catch_up(Seconds now, bool pending_rounds) {
    if (read_only_) return;  // a snapshot: no events, rounds nor count (the leader's)
    now = std::max(now, last_event_s_);
    for (int guard = 0; guard < 100000; ++guard) {
        const Seconds t = next_timed_event();
        if (t > now) break;
        const Seconds at = std::max(t, last_event_s_);
        advance_count(at);
        ExecEvent e;
        while (exec_->pop_due(t, e)) {
            e.t = std::max(e.t, last_event_s_);
            on_exec(e);
        }
        // Leases of a pool that end within kLeaseAlignS after one that ends now end with it:
        // one round then sees them together, as when they end at the same second, and swaps
        // only what must move (leases begun a few seconds apart, one submission per round,
        // otherwise each lease end swapped the run the previous one had just stopped back in).
        // The runs lose nothing: a lease end is a checkpoint, and the renewed lease is whole.
        std::vector<char> due(pools_.size(), 0);
        for (RunMem* r : live_runs())
            if (!r->ended() && (r->rec.state == "starting" || r->rec.state == "running") &&
                r->rec.lease_end_s >= 0 && r->rec.lease_end_s <= t)
                due[r->pool] = 1;
        for (RunMem* r : live_runs()) {
            if (r->ended() || !(r->rec.state == "starting" || r->rec.state == "running")) continue;
            if (r->rec.lease_end_s < 0 || !due[r->pool]) continue;
            if (r->rec.lease_end_s > t && !(r->rec.lease_end_s <= t + kLeaseAlignS &&
                                            r->rec.lease_start_s < at))
                continue;
            PoolState& p = *pools_[r->pool];
            p.sched->lease_end(r->job, at);
            r->lease_ended_at = at;
            p.lease_ended.push_back(r);
            r->rec.lease_end_s = -1;
            p.dirty = true;
        }
        for (auto& p : pools_) {
            const Seconds w = p->sched->next_wake_s();
            if (w != kNoWake && w <= t) p->dirty = true;
        }
        for (std::size_t p = 0; p < pools_.size(); ++p)
            if (pools_[p]->dirty) schedule(p, at);
    }
    advance_count(now);
    if (!pending_rounds) return;
    const auto real_now = std::chrono::steady_clock::now();
    for (std::size_t p = 0; p < pools_.size(); ++p)
        if (pools_[p]->dirty && pools_[p]->round_not_before <= real_now) schedule(p, now);
}

void Service::schedule(std::size_t pi, Seconds t) {
    PoolState& pool = *pools_[pi];
    if (store_failing_) {  // no new placements while the store refuses writes
        pool.dirty = true;
        return;
    }
    const auto began = std::chrono::steady_clock::now();
    pool.dirty = false;
    pool.forecast_stale = true;
    ++pool.rounds;
    const std::vector<Decision> ds = pool.sched->round(t);
    // Stops first (preemptions, lease ends not renewed), then starts: a real executor then knows
    // which GPUs are still winding down when it places the new runs on them.
    for (const Decision& d : ds) {
        auto it = pool.job_run.find(d.job);
        if (it == pool.job_run.end() || d.kind == Decision::Kind::Start) continue;
        preempt(*runs_.at(it->second), t);
    }
    // The runs whose lease catch_up ended (not every run: issue 18), in the order of their ids.
    std::ranges::sort(pool.lease_ended, {}, [](const RunMem* r) { return r->rec.id; });
    pool.lease_ended.erase(std::unique(pool.lease_ended.begin(), pool.lease_ended.end()), pool.lease_ended.end());
    for (RunMem* r : pool.lease_ended)
        if (r->pool == pi && !r->ended() && r->lease_ended_at == t && pool.sched->is_pending(r->job) && r->holding())
            preempt(*r, t);
    for (const Decision& d : ds) {
        auto it = pool.job_run.find(d.job);
        if (it == pool.job_run.end() || d.kind != Decision::Kind::Start) continue;
        apply_start(*runs_.at(it->second), d, t);
    }
    for (RunMem* r : pool.lease_ended)
        if (!r->ended()) r->lease_ended_at = -1;
    pool.lease_ended.clear();
    // The pending runs' reasons: one per kind of run (service/pending_reasons.hpp), for the
    // pool's pending jobs (not a pass over every run), told in the order of their ids.
    const auto run_of_job = [&](int k) -> const RunMem* { return pool.run_of_job(k); };
    PendingReasons reasons(*pool.sched, [&](int j, int workers, int gpus_per_worker) {
        return pool.sched->pending_reason(
            j, workers, gpus_per_worker, [&](int m) { return machine_reason_name(pool, m); },
            [&](int m) { return foreign_reason(pool, m); },
            [&](int k) {
                const RunMem* held = run_of_job(k);
                return held ? held->rec.name : "job " + std::to_string(k);
            },
            pool.rec.name,
            [&](int k) {
                const RunMem* held = run_of_job(k);
                return held ? held->rec.lease_end_s : Seconds{-1};
            });
    });
    const auto waits = [&](const RunMem* r) {
        return r != nullptr && r->pool == pi && !r->ended() && r->rec.state == "pending";
    };
    const auto give_reason = [&](RunMem* r) {
        const std::string& why = reasons.of(r->job, r->rec.workers, r->rec.gpus_per_worker);
        // A run requeued at start (its machine left the configuration) keeps saying so
        // until it is placed again. A reason is not a change to store on its own: the
        // store gets it with the run's next write, and the first round after a restart
        // says it again (writing every pending run whose reason changed made one round of
        // a 100,000-run backlog a transaction of 100,000 rows).
        if (why != r->rec.reason && !r->rec.reason.starts_with("requeued: ")) r->rec.reason = why;
        // An executor that shows the demand to its resource manager (Slurm: a held job per
        // pending run) is told each pending run's reason when it changes.
        if (exec_->shows_waiting() && r->told_waiting != r->rec.reason) {
            r->told_waiting = r->rec.reason;
            exec_->waiting(t, exec_run(*r), r->rec.reason);
        }
    };
    if (exec_->shows_waiting()) {  // told in the order of the runs' ids
        std::vector<RunMem*> waiting;
        waiting.reserve(pool.sched->pending_total());
        for (int k : pool.sched->pending_jobs())
            if (RunMem* r = pool.run_of_job(k); waits(r)) waiting.push_back(r);
        std::ranges::sort(waiting, {}, [](const RunMem* r) { return r->rec.id; });
        for (RunMem* r : waiting) give_reason(r);
    } else {  // one pass: each run is read once (at 100,000 pending, a cache miss each)
        for (int k : pool.sched->pending_jobs())
            if (RunMem* r = pool.run_of_job(k); waits(r)) give_reason(r);
    }
    const auto ended = std::chrono::steady_clock::now();
    pool.round_not_before = pool.sched->pending_total() > kSyncRoundBacklog ? ended + kBacklogRestFactor * (ended - began)
                                                                             : std::chrono::steady_clock::time_point{};
}

void Service::apply_start(RunMem& r, const Decision& d, Seconds t) {
    PoolState& pool = *pools_[r.pool];
    const Seconds lease_end = d.lease_end_s >= kNoLeaseEnd ? -1 : d.lease_end_s;
    touch(r);
    if (r.rec.stop_cause == "owner" || r.rec.stop_cause == "limit") return;  // winding down
    if (d.renewal && r.holding()) {
        r.rec.lease_start_s = t;
        r.rec.lease_end_s = lease_end;
        return;
    }
    if (r.rec.state == "running") r.rec.executed_s += t - r.rec.phase_since_s;
    preempt_attempt(r, t);
    for (int w : r.w)
        if (counter_->status(w).phase != gp::Phase::Waiting) (void)counter_->release(t, w);
    // A real executor's previous attempt still winding down keeps its processes (and its
    // checkpoint) until they are gone: the new attempt's launch waits for that (try_launch).
    if (exec_->runs_commands() && (r.rec.state == "starting" || r.rec.state == "running") && !r.launch_pending) {
        exec_->stop(t, r.rec.id);  // moved to other GPUs: the checkpoint signal first
        r.prev_alive = true;
    }
    r.prev_alive = r.prev_alive || (exec_->runs_commands() && r.rec.state == "stopping");
    if (!r.prev_alive) exec_->forget(r.rec.id);
    // Workers take gpus_per_worker GPUs each from the placement's parts, in order.
    std::vector<std::pair<int, int>> left;  // (machine id, gpus)
    for (const auto& p : d.placement.parts) left.push_back({static_cast<int>(pool.machines[p.machine].id), p.gpus});
    std::size_t cur = 0;
    for (std::size_t k = 0; k < r.w.size(); ++k) {
        int need = r.rec.gpus_per_worker;
        std::vector<gp::HeldPart> mine;
        while (need > 0 && cur < left.size()) {
            const int take = std::min(need, left[cur].second);
            mine.push_back({left[cur].first, take});
            left[cur].second -= take;
            need -= take;
            if (left[cur].second == 0) ++cur;
        }
        r.parts[k] = mine;
        if (exec_->holds_from_start()) continue;  // placed in the count at Started
        if (auto ok = counter_->place(t, r.w[k], mine); !ok)
            log(LogLevel::Error, "count.bug", {{"run", r.rec.name}, {"error", ok.error().message}});
    }
    ++r.rec.attempts;
    r.attempt_parts[r.rec.attempts] = r.parts;
    if (r.attempt_parts.size() > RunMem::kKeptAttemptPlacements) r.attempt_parts.erase(r.attempt_parts.begin());
    r.rec.attempt_list.push_back({r.rec.attempts, t, -1, ""});
    r.rec.state = "starting";
    r.rec.reason.clear();
    r.told_waiting.reset();
    r.rec.stop_cause.clear();
    r.rec.phase_since_s = t;
    r.rec.lease_start_s = t;
    r.rec.lease_end_s = lease_end;
    assign_gpus(r);
    r.launch_pending = true;
    try_launch(r, t);
    log(LogLevel::Info, "run.placed", {{"run", r.rec.name}, {"attempt", std::to_string(r.rec.attempts)}});
}

void Service::preempt_attempt(RunMem& r, Seconds t) {
    for (int w : r.w) {
        const gp::Phase ph = counter_->status(w).phase;
        if (ph == gp::Phase::Placed || ph == gp::Phase::Running) (void)counter_->stop(t, w, gp::Cause::Preemption);
    }
    end_open_attempt(r.rec, t, "preempted");
}

void Service::preempt(RunMem& r, Seconds t) {
    if (r.rec.state == "stopping" && r.rec.stop_cause != "preemption") {
        // Never reached while the rounds see stopping runs as leaving (wind_down): logged if so.
        log(LogLevel::Error, "sched.bug", {{"run", r.rec.name}, {"error", "preempt of a stopping run"}});
        return;
    }
    touch(r);
    if (r.rec.state == "running") r.rec.executed_s += t - r.rec.phase_since_s;
    if (r.rec.state == "stopping" && r.rec.stop_cause == "failure") {
        for (int w : r.w) (void)counter_->release(t, w);
        exec_->forget(r.rec.id);
        r.rec.state = "pending";
        r.rec.stop_cause.clear();
        r.rec.phase_since_s = t;
        return;
    }
    preempt_attempt(r, t);
    exec_->stop(t, r.rec.id);
    r.rec.state = "stopping";
    r.rec.stop_cause = "preemption";
    r.rec.phase_since_s = t;
    r.rec.lease_end_s = -1;
    cancel_launch(r, t);
    log(LogLevel::Info, "run.preempted", {{"run", r.rec.name}});
}

void Service::end_run(RunMem& r, Seconds t, const std::string& state, const std::string& outcome) {
    PoolState& pool = *pools_[r.pool];
    for (int w : r.w) (void)counter_->end(t, w);
    pool.sched->remove(r.job, t);
    pool.dirty = true;
    exec_->forget(r.rec.id);
    log_quota_.settle(r.rec.id);
    end_open_attempt(r.rec, t, outcome.empty() ? state : outcome);
    r.rec.state = state;
    r.rec.reason.clear();
    r.rec.ended_s = t;
    r.rec.phase_since_s = t;
    r.rec.lease_end_s = -1;
    touch(r);
    log(LogLevel::Info, "run.ended", {{"run", r.rec.name}, {"state", state}});
}

void Service::minute_work(Seconds now) {
    if (read_only_) return;  // a snapshot: the leader counts, alerts and prunes
    const Seconds minute = gp::minute_start(now);
    if (minute <= last_minute_s_) return;
    last_minute_s_ = minute;
    gp::LiveCounts live;
    std::int64_t max_ws = 0;
    for (const auto& [id, w] : workspaces_) max_ws = std::max(max_ws, id);
    live.stalled_workers.assign(static_cast<std::size_t>(max_ws) + 1, 0);
    live.runs_with_straggler.assign(static_cast<std::size_t>(max_ws) + 1, 0);
    // Running workers belong to live runs (placed or stopping): not a pass over the backlog.
    for (const RunMem* r : live_runs())
        for (int w : r->w)
            if (counter_->status(w).phase == gp::Phase::Running && counter_->status(w).stalled)
                ++live.stalled_workers[static_cast<std::size_t>(r->rec.workspace_id)];
    for (store::Id id : runs_with_straggler(now))
        ++live.runs_with_straggler[static_cast<std::size_t>(runs_.at(id)->rec.workspace_id)];
    const auto changes = alerts_->evaluate(now, ledger_, live);
    for (const auto& a : changes)
        log(LogLevel::Warn, "alert", {{"name", std::string(alerts_->name_of(a))},
                                      {"state", std::string(gp::to_string(a.state))},
                                      {"target", by_name(a.scope == gp::ScopeKind::Workspace ? gp::By::Workspace
                                                         : a.scope == gp::ScopeKind::Pool ? gp::By::Pool
                                                                                          : gp::By::Machine,
                                                         a.scope_id)}});
    if (!changes.empty()) {
        std::vector<store::AlertRec> recs;
        for (const auto& a : alerts_->alerts()) {
            const gp::By by = a.scope == gp::ScopeKind::Workspace ? gp::By::Workspace
                              : a.scope == gp::ScopeKind::Pool    ? gp::By::Pool
                                                                  : gp::By::Machine;
            recs.push_back({std::string(alerts_->name_of(a)), std::string(gp::to_string(a.scope)),
                            a.scope == gp::ScopeKind::Cluster ? cluster_.name : by_name(by, a.scope_id),
                            std::string(gp::to_string(a.state)), a.since, a.value});
        }
        batch_.alerts = std::move(recs);
    }
    if (now - last_prune_s_ >= 3600) {
        last_prune_s_ = now;
        ledger_.prune(now);
        batch_.prune_before_hour = now - gp::kRetention;
        if (idem_.prune(now - kIdempotencyKeepS) > 0) batch_.prune_idempotency_before = now - kIdempotencyKeepS;
    }
}

void Service::tick() {
    std::unique_lock lk(mu_);
    const Seconds now = clock_.now();
    begin(now);
    catch_up(now);
    minute_work(now);
    commit();
}

void Service::loop() {
    log(LogLevel::Info, "scheduler.started", {{"policy", cfg_.policy}, {"switches", cfg_.scheduler.describe()}});
    std::unique_lock lk(mu_);
    loop_running_ = true;
    while (!stopping_) {
        const Seconds now = clock_.now();
        begin(now);
        catch_up(now);
        minute_work(now);
        commit();
        const Seconds next = std::min(next_timed_event(), gp::minute_start(std::max(now, last_event_s_)) + 60);
        auto wait = clock_.until(next);
        if (store_failing_) wait = std::min(wait, std::chrono::milliseconds(2000));  // retry the store
        else
            for (const auto& p : pools_)  // a round deferred by catch_up (round_not_before)
                if (p->dirty)
                    wait = std::min(wait, std::chrono::duration_cast<decltype(wait)>(
                                              p->round_not_before - std::chrono::steady_clock::now()) +
                                              decltype(wait)(1));
        cv_.wait_for(lk, wait, [&] { return stopping_ || wake_; });
        wake_ = false;
    }
    loop_running_ = false;
    log(LogLevel::Info, "scheduler.stopped");
}

void Service::stop() {
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
}

}  // namespace astraeus::service
