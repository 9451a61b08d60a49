// The goodput count across a restart (spec/goodput.md "The count": every second between a
// run's submission and its end counted exactly once, in the state it was really in).
//
// Every store write of a run carries, per worker, where its count stands: the hourly rows hold
// its time up to `counted_s`, `pending` holds the Deltas of [counted_s, decided_s) that its next
// minute count would emit, and from decided_s on it was in the stored state (the counter decides
// time only at the worker's own events, and every state change is written). After a restart
// (kill -9 included), a worker whose record is at least as new as the store's last count goes on
// from decided_s and its pending Deltas are added once; otherwise a later count emitted them and
// it goes on from that count (counted_to_s). Before this, a restart re-counted the time since the
// last minute in the worker's final state: an attempt that ran and failed inside that minute was
// counted as waiting (slurm_serve_restart: 160 held GPU-s missing).
#include <algorithm>

#include "astraeus/goodput_io/pending_count.hpp"
#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

namespace gp = goodput;
using namespace detail;

void Service::write_workers(RunMem& r) {
    r.rec.worker_list.clear();
    for (std::size_t k = 0; k < r.w.size(); ++k) {
        const int w = r.w[k];
        const gp::WorkerStatus& s = counter_->status(w);
        const bool parts = gp::holds_gpus(s) || (r.holding() && exec_->holds_from_start() && !r.parts[k].empty());
        store::WorkerRec rec;
        rec.index = static_cast<int>(k);
        rec.phase = static_cast<int>(s.phase);
        rec.cause = static_cast<int>(s.cause);
        rec.attempt = s.attempt;
        if (parts) rec.parts = parts_text(r.parts[k]) + gpu_index_text(r.gpu_index, k);
        rec.level = s.phase == gp::Phase::Running ? r.level : -1;
        gp::PendingCount pending;
        counter_->pending(w, pending);
        rec.counted_s = counter_->last_count(w);
        rec.decided_s = counter_->decided_to(w);
        rec.pending = pending.text();
        r.rec.worker_list.push_back(std::move(rec));
    }
}

Result<Seconds> Service::count_resume_point(const store::RunRec& rec, const store::WorkerRec& k,
                                            Seconds counted_to) {
    if (k.counted_s < 0 || k.counted_s < counted_to || k.decided_s < k.counted_s)
        return std::max(rec.submitted_s, counted_to);
    auto rows = gp::parse_pending_count(k.pending, static_cast<int>(rec.id));
    if (!rows) return std::unexpected(rows.error());
    for (const gp::Delta& d : *rows)
        resumed_.goodput.push_back({d.run, d.machine, d.hour, static_cast<int>(d.category), d.held, d.gpu_s});
    return std::max(rec.submitted_s, k.decided_s);
}

Result<void> Service::save_resumed_count() {
    if (resumed_.goodput.empty()) return {};
    // The live runs' workers now stand where the restored counter does (their pending time is
    // in the rows): a second restart must not add it again.
    for (store::Id id : live_) {
        RunMem& r = *runs_.at(id);
        write_workers(r);
        resumed_.runs.push_back(r.rec);
    }
    auto ok = store_->apply(resumed_);
    if (ok)
        log(LogLevel::Info, "goodput.resumed",
            {{"rows", std::to_string(resumed_.goodput.size())}, {"runs", std::to_string(resumed_.runs.size())}});
    resumed_ = store::Batch{};
    return ok;
}

}  // namespace astraeus::service
