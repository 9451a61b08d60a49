#include "astraeus/sim/goodput_recorder.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "astraeus/goodput/calendar.hpp"
#include "astraeus/goodput_io/ledger_json.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/goodput_io/table.hpp"

namespace astraeus {

namespace {
goodput::CounterConfig counter_config(const LifecycleConfig& c) {
    goodput::CounterConfig k;
    k.stall_timeout_s = c.stall_timeout_s;
    return k;
}
}  // namespace

GoodputRecorder::GoodputRecorder(const Workload& w, const ClusterSpec& cluster, std::string pool,
                                 const LifecycleModel& model)
    : w_(w), model_(model), epoch_(w.epoch_unix_s), res_(std::make_shared<GoodputResult>()),
      counter_(counter_config(model.config()), res_->ledger) {
    jobs_.resize(w.jobs.size());
    util_.reserve(w.jobs.size());
    for (std::size_t j = 0; j < w.jobs.size(); ++j)
        util_.emplace_back(model.seed(), static_cast<std::uint64_t>(Draw::Utilization), j);
    res_->runs.reserve(w.jobs.size());
    for (const Job& job : w.jobs)
        res_->runs.push_back(job.name.empty() ? std::to_string(job.id) : job.name.str());
    for (const Tenant& t : w.tenants) res_->workspaces.push_back(t.name);
    for (int m = 0; m < cluster.machines(); ++m) {
        std::string name = "m";
        name += std::to_string(m);
        res_->machines.push_back(std::move(name));
    }
    res_->pools.push_back(std::move(pool));
    res_->lifecycle = model.config();
    res_->seed = model.seed();
    res_->start_unix = unix_s(w.jobs.empty() ? 0 : w.jobs.front().submit_s);
}

void GoodputRecorder::check(const Result<void>& r) {
    if (!r && error_.empty()) {
        error_ = "goodput count: ";
        error_ += r.error().message;
    }
}

void GoodputRecorder::level(int j, Seconds t) {
    JobState& s = jobs_[j];
    const double f = s.slowed ? model_.config().straggler_factor : 1.0;
    check(counter_.utilization_level(unix_s(t), s.worker, std::clamp(s.base * f, 0.0, 100.0)));
}

void GoodputRecorder::do_start(int j) {
    JobState& s = jobs_[j];
    const Seconds ts = s.start_at;
    s.start_at = -1;
    check(counter_.start(unix_s(ts), s.worker));
    s.running = true;
    const LifecycleConfig& c = model_.config();
    Stream& u = util_[j];
    s.base = model_.utilization_pct(u.uniform());
    s.slowed = false;
    level(j, ts);
    const bool constant = c.full_utilization || c.fixed_utilization_pct >= 0;
    s.next_change = constant ? kNever : ts + u.exponential_s(double(c.util_segment_s));
    s.straggler_at = kNever;
    if (c.straggler_p > 0 && u.uniform() < c.straggler_p)
        s.straggler_at = ts + u.exponential_s(double(c.util_segment_s));
    s.next_progress = s.tracked ? ts + c.stall_timeout_s - 60 : kNever;
}

void GoodputRecorder::flush(int j, Seconds t) {
    JobState& s = jobs_[j];
    if (s.start_at >= 0 && s.start_at <= t) do_start(j);
    if (!s.running) return;
    const LifecycleConfig& c = model_.config();
    for (;;) {
        const Seconds next = std::min({s.next_change, s.straggler_at, s.next_progress});
        if (next > t) return;
        if (next == s.next_progress) {
            check(counter_.progress(unix_s(next), s.worker, ++s.step));
            s.next_progress += c.stall_timeout_s - 60;
        } else if (next == s.straggler_at) {
            s.slowed = true;
            s.straggler_at = kNever;
            ++events_.stragglers;
            level(j, next);
        } else {
            Stream& u = util_[j];
            s.base = model_.utilization_pct(u.uniform());
            s.next_change = next + u.exponential_s(double(c.util_segment_s));
            level(j, next);
        }
    }
}

void GoodputRecorder::submit(int j, Seconds t) {
    const int u = w_.jobs[j].tenant;
    res_->ledger.set_run(j, u, 0);
    jobs_[j].worker = counter_.add_worker(unix_s(t), j, w_.jobs[j].gpus);
}

void GoodputRecorder::place(int j, Seconds t, const Placement& p, Seconds start_at) {
    JobState& s = jobs_[j];
    parts_.clear();
    for (const auto& part : p.parts) parts_.push_back({part.machine, part.gpus});
    check(counter_.place(unix_s(t), s.worker, parts_));
    s.start_at = start_at;
    s.running = false;
    ++events_.placements;
}

void GoodputRecorder::preempt(int j, Seconds stop_at, Seconds release_at) {
    flush(j, stop_at);
    JobState& s = jobs_[j];
    s.start_at = -1;
    s.running = false;
    check(counter_.stop(unix_s(stop_at), s.worker, goodput::Cause::Preemption));
    check(counter_.release(unix_s(release_at), s.worker));
    ++events_.preemptions;
}

void GoodputRecorder::fail(int j, Seconds t) {
    flush(j, t);
    JobState& s = jobs_[j];
    s.start_at = -1;
    s.running = false;
    check(counter_.fail(unix_s(t), s.worker));
    ++events_.failures;
}

void GoodputRecorder::stall(int j, Seconds onset, Seconds detected) {
    flush(j, onset);
    JobState& s = jobs_[j];
    s.tracked = true;
    check(counter_.progress(unix_s(onset), s.worker, ++s.step));
    s.next_progress = kNever;  // no progress from the onset on
    flush(j, detected);
    s.running = false;
    check(counter_.stop(unix_s(detected), s.worker, goodput::Cause::Stall));
    ++events_.stalls;
}

void GoodputRecorder::release(int j, Seconds t) {
    check(counter_.release(unix_s(t), jobs_[j].worker));
}

void GoodputRecorder::end(int j, Seconds t) {
    flush(j, t);
    JobState& s = jobs_[j];
    s.running = false;
    check(counter_.end(unix_s(t), s.worker));
}

void GoodputRecorder::fail_for_good(int j, Seconds t) {
    check(counter_.end(unix_s(t), jobs_[j].worker));
    ++events_.failed_for_good;
}

std::shared_ptr<GoodputResult> GoodputRecorder::finish(Seconds end_t) {
    counter_.advance(unix_s(end_t));
    res_->end_unix = std::max(res_->start_unix, unix_s(end_t));
    res_->events = events_;
    res_->unmeasured_gpu_s = counter_.unmeasured_gpu_s();
    return std::move(res_);
}

// --- reports ----------------------------------------------------------------------------------

namespace {

const std::vector<std::string>& names_of(const GoodputResult& r, goodput::By by) {
    switch (by) {
        case goodput::By::Workspace: return r.workspaces;
        case goodput::By::Run: return r.runs;
        case goodput::By::Machine: return r.machines;
        case goodput::By::Pool: return r.pools;
    }
    return r.pools;
}

std::vector<goodput::NamedCounts> named(const GoodputResult& r, goodput::By by,
                                        const std::vector<goodput::Row>& rows) {
    const auto& names = names_of(r, by);
    std::vector<goodput::NamedCounts> out;
    out.reserve(rows.size());
    for (const auto& row : rows)
        out.push_back({row.id >= 0 && row.id < static_cast<int>(names.size())
                           ? names[row.id]
                           : std::to_string(row.id),
                       row.counts});
    return out;
}

std::string header_of(goodput::By by) {
    switch (by) {
        case goodput::By::Workspace: return "WORKSPACE";
        case goodput::By::Run: return "RUN";
        case goodput::By::Machine: return "MACHINE";
        case goodput::By::Pool: return "POOL";
    }
    return "";
}

goodput::Period whole(const GoodputResult& r) {
    return {goodput::hour_start(r.start_unix), r.end_unix + 1};
}

}  // namespace

std::vector<goodput::NamedCounts> goodput_rows(const GoodputResult& r, goodput::By by) {
    return named(r, by, r.ledger.query(by, whole(r)));
}

std::string goodput_text(const GoodputResult& r, goodput::By by, int weeks) {
    std::string out = goodput::goodput_table(header_of(by), goodput_rows(r, by));
    if (weeks <= 0) return out;
    auto blocks = r.ledger.weekly(by, r.end_unix, weeks);
    if (!blocks) return out + "weekly: " + blocks.error().message + "\n";
    for (const auto& wk : *blocks) {
        // As `goodput replay --weeks` and the astra client: "Week 2017-W48 (from 2017-11-27)".
        out += fmt::format("\nWeek {} (from {})\n", goodput::iso_week_label(wk.week_start_s),
                           goodput::format_rfc3339(wk.week_start_s).substr(0, 10));
        out += goodput::goodput_table(header_of(by), named(r, by, wk.rows));
    }
    return out;
}

nlohmann::json goodput_json(const GoodputResult& r, goodput::By by, int weeks) {
    const goodput::Period p = whole(r);
    nlohmann::json j = goodput::rows_json(goodput::to_string(by), r.start_unix, r.end_unix,
                                          named(r, by, r.ledger.query(by, p)));
    if (weeks > 0) {
        nlohmann::json arr = nlohmann::json::array();
        if (auto blocks = r.ledger.weekly(by, r.end_unix, weeks)) {
            for (const auto& wk : *blocks) {
                nlohmann::json b = goodput::rows_json(
                    goodput::to_string(by), wk.week_start_s, wk.week_start_s + goodput::kWeek,
                    named(r, by, wk.rows));
                b["week"] = goodput::iso_week_label(wk.week_start_s);
                arr.push_back(std::move(b));
            }
        }
        j["weekly"] = std::move(arr);
    }
    const LifecycleConfig& c = r.lifecycle;
    j["lifecycle"] = {
        {"name", c.name},
        {"seed", r.seed},
        {"startup_s", c.startup_s},
        {"startup_per_doubling_s", c.startup_per_doubling_s},
        {"early_failure_p", c.early_failure_p},
        {"early_failure_window_s", c.early_failure_window_s},
        {"failure_rate_gpu_hour", c.failure_rate_gpu_hour},
        {"failure_rate_job_hour", c.failure_rate_job_hour},
        {"failure_hold_s", c.failure_hold_s},
        {"job_checkpoint_s", c.job_checkpoint_s},
        {"machine_loss_rate_day", c.machine_loss_rate_day},
        {"repair_s", c.repair_s},
        {"stall_rate_job_hour", c.stall_rate_job_hour},
        {"stall_timeout_s", c.stall_timeout_s},
        {"stall_stop_s", c.stall_stop_s},
        {"straggler_p", c.straggler_p},
        {"straggler_factor", c.straggler_factor},
        {"util_segment_s", c.util_segment_s},
        {"max_attempts", c.max_attempts},
        {"utilization", c.full_utilization              ? std::string("100%")
                        : c.fixed_utilization_pct >= 0 ? fmt::format("{}%", c.fixed_utilization_pct)
                                                       : std::string("philly-gpu-util-cdf")},
    };
    const GoodputEvents& e = r.events;
    j["events"] = {{"placements", e.placements},       {"failures", e.failures},
                   {"machine_losses", e.machine_losses}, {"stalls", e.stalls},
                   {"stragglers", e.stragglers},       {"preemptions", e.preemptions},
                   {"failed_for_good", e.failed_for_good}, {"most_failures", e.most_failures}};
    j["unmeasured_gpu_hours"] = goodput::gpu_hours(r.unmeasured_gpu_s);
    return j;
}

}  // namespace astraeus
