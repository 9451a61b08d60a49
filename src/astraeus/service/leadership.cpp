#include "astraeus/service/leadership.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "astraeus/service/log.hpp"

namespace astraeus::service {

Result<std::unique_ptr<Leadership>> Leadership::open(const ServiceConfig& c) {
    const bool own_default = c.replica.empty();
    auto l = store::LeaderLease::open(c.store_postgresql, own_default ? store::default_replica_id(c.data_dir) : c.replica,
                                      c.address, c.lease_duration_s, /*id_is_exclusive=*/own_default);
    if (!l) return std::unexpected(l.error());
    return std::unique_ptr<Leadership>(new Leadership(std::move(*l), c.lease_duration_s, c.lease_renew_s));
}

Leadership::~Leadership() {
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (renewer_.joinable()) renewer_.join();
    if (watchdog_.joinable()) watchdog_.join();
}

namespace {
std::int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

Result<store::LeaseView> Leadership::renew_timed(bool acquire) {
    const std::int64_t sent = steady_ns();
    auto v = acquire ? lease_->acquire_or_renew() : lease_->renew();
    // A margin (a tenth of the lease, at most 0.5 s) for the time this process takes to stop.
    const double margin_s = std::min(0.5, duration_s_ / 10);
    if (v && v->held) valid_until_ns_ = sent + static_cast<std::int64_t>((duration_s_ - margin_s) * 1e9);
    return v;
}

void Leadership::note(const store::LeaseView& v) {
    std::lock_guard lk(mu_);
    last_ = v;
    seen_at_ = std::chrono::steady_clock::now();
    leading_ = v.held;
}

bool Leadership::try_lead() {
    auto v = renew_timed(/*acquire=*/true);
    if (!v) {
        log(LogLevel::Warn, "leader.lease_unreachable", {{"error", v.error().message}});
        return false;
    }
    note(*v);
    if (v->took_over)
        log(LogLevel::Info, "leader.elected",
            {{"replica", lease_->replica()}, {"generation", std::to_string(v->generation)}});
    return v->held;
}

store::LeaseView Leadership::view() const {
    std::lock_guard lk(mu_);
    store::LeaseView v = last_;
    v.age_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - seen_at_).count();
    return v;
}

void Leadership::keep_leading() {
    renewer_ = std::thread([this] {
        std::unique_lock lk(mu_);
        while (!stopping_) {
            cv_.wait_for(lk, std::chrono::duration<double>(renew_s_), [&] { return stopping_; });
            if (stopping_) break;
            lk.unlock();
            auto v = renew_timed(/*acquire=*/false);
            if (v) {
                note(*v);
                if (!v->held) {
                    log(LogLevel::Error, "leader.deposed",
                        {{"error", "the lease is at generation " + std::to_string(v->generation) + ", held by " +
                                       v->holder + " (this replica led with generation " +
                                       std::to_string(lease_->generation()) + ")"},
                         {"action", "exiting with code 3: another replica leads this database"}});
                    std::fflush(nullptr);
                    std::_Exit(3);
                }
            } else {
                log(LogLevel::Warn, "leader.renew_failed", {{"error", v.error().message}});
            }
            lk.lock();
            if (!v) last_error_ = v.error().message;
        }
    });
    // Apart from the renewals: a renewal may hang (a database cut off without a word), and the
    // lease runs out in the database all the same.
    watchdog_ = std::thread([this] {
        const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(std::min(renew_s_, duration_s_) / 4 * 1e9));
        std::unique_lock lk(mu_);
        while (!stopping_) {
            // Wakes at the deadline itself (or a quarter renewal later to look again).
            const std::int64_t left = valid_until_ns_.load() - steady_ns();
            if (left > 0) {
                cv_.wait_for(lk, std::min(period, std::chrono::nanoseconds(left)), [&] { return stopping_; });
                continue;
            }
            std::ostringstream why;
            why << "no lease renewal succeeded within lease_duration_s (" << duration_s_ << " s, less "
                << std::min(0.5, duration_s_ / 10) << " s to stop in): "
                << (last_error_.empty() ? std::string("a renewal has not answered") : last_error_);
            log(LogLevel::Error, "leader.deposed",
                {{"error", why.str()}, {"action", "exiting with code 3: another replica may lead this database"}});
            std::fflush(nullptr);
            std::_Exit(3);
        }
    });
}

void Leadership::release() {
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (renewer_.joinable()) renewer_.join();
    lease_->release();
    log(LogLevel::Info, "leader.released", {{"replica", lease_->replica()}});
}

namespace {
std::string label_value(const std::string& s) {
    std::string o;
    for (char ch : s) {
        if (ch == '\\' || ch == '"') o += '\\';
        if (ch == '\n') { o += "\\n"; continue; }
        o += ch;
    }
    return o;
}
}  // namespace

std::string Leadership::metrics_text() const {
    const store::LeaseView v = view();
    std::ostringstream o;
    o << "# HELP astraeus_leader 1 when this replica leads the database (holds the leader lease), else 0.\n"
      << "# TYPE astraeus_leader gauge\n"
      << "astraeus_leader{replica=\"" << label_value(lease_->replica()) << "\"} " << (v.held ? 1 : 0) << "\n"
      << "# HELP astraeus_leader_generation The leader lease's generation (its fencing token).\n"
      << "# TYPE astraeus_leader_generation gauge\n"
      << "astraeus_leader_generation " << v.generation << "\n"
      << "# HELP astraeus_leader_lease_age_seconds Seconds since the leader lease was last renewed.\n"
      << "# TYPE astraeus_leader_lease_age_seconds gauge\n"
      << "astraeus_leader_lease_age_seconds " << v.age_s << "\n";
    return o.str();
}

}  // namespace astraeus::service
