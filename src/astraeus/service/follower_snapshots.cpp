#include "astraeus/service/follower_snapshots.hpp"

#include "astraeus/service/log.hpp"
#include "astraeus/service/service.hpp"

namespace astraeus::service {

FollowerSnapshots::FollowerSnapshots(ServiceConfig cfg, std::function<Result<std::unique_ptr<store::Store>>()> open_store,
                                     bool agent_machines)
    : cfg_(std::move(cfg)), open_store_(std::move(open_store)), agent_machines_(agent_machines) {}

FollowerSnapshots::~FollowerSnapshots() { stop(); }

void FollowerSnapshots::load_once() {
    const auto t0 = std::chrono::steady_clock::now();
    std::string why;
    if (!shared_) {
        auto st = open_store_();
        if (st) {
            shared_ = std::make_shared<store::SharedStore>();
            shared_->store = std::move(*st);
        } else {
            why = st.error().message;
        }
    }
    std::shared_ptr<Service> fresh;
    if (shared_) {
        auto s = Service::open_snapshot(cfg_, store::read_only_view(shared_), agent_machines_);
        if (s) {
            (*s)->await_forecasts();  // its lists show the pending runs' positions at once
            fresh = std::shared_ptr<Service>(std::move(*s));
        } else {
            why = s.error().message;
            // Made again at the next load (a broken connection, a database replaced). The
            // snapshots still serving keep the old one until they are dropped.
            shared_.reset();
        }
    }
    std::shared_ptr<Service> old;  // destroyed outside the lock (its forecaster thread joins)
    std::lock_guard lk(mu_);
    if (fresh) {
        old = std::move(current_);
        current_ = std::move(fresh);
        read_at_ = t0;
        ++loads_;
        if (!error_.empty()) log(LogLevel::Info, "follower.snapshot_loaded", {{"after", error_}});
        error_.clear();
    } else if (why != error_) {  // logged once per distinct failure
        log(LogLevel::Warn, "follower.snapshot_failed",
            {{"error", why}, {"action", "reads serve the previous snapshot (if any); retried every follower_refresh_s"}});
        error_ = why;
    }
}

void FollowerSnapshots::start() {
    load_once();
    th_ = std::thread([this] {
        const auto period = std::chrono::duration<double>(cfg_.follower_refresh_s);
        std::unique_lock lk(mu_);
        for (;;) {
            if (cv_.wait_for(lk, period, [this] { return stopping_; })) return;
            lk.unlock();
            load_once();
            lk.lock();
        }
    });
}

void FollowerSnapshots::stop() {
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (th_.joinable()) th_.join();
}

std::shared_ptr<Service> FollowerSnapshots::current() const {
    std::lock_guard lk(mu_);
    return current_;
}

std::int64_t FollowerSnapshots::age_ms() const {
    std::lock_guard lk(mu_);
    if (!current_) return -1;
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - read_at_).count();
}

std::string FollowerSnapshots::last_error() const {
    std::lock_guard lk(mu_);
    return error_;
}

long FollowerSnapshots::loads() const {
    std::lock_guard lk(mu_);
    return loads_;
}

}  // namespace astraeus::service
