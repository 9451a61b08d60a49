#include "astraeus/service/leadership.hpp"

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
}

void Leadership::note(const store::LeaseView& v) {
    std::lock_guard lk(mu_);
    last_ = v;
    seen_at_ = std::chrono::steady_clock::now();
    leading_ = v.held;
}

bool Leadership::try_lead() {
    auto v = lease_->acquire_or_renew();
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
        auto last_ok = std::chrono::steady_clock::now();
        std::unique_lock lk(mu_);
        while (!stopping_) {
            cv_.wait_for(lk, std::chrono::duration<double>(renew_s_), [&] { return stopping_; });
            if (stopping_) break;
            lk.unlock();
            auto v = lease_->renew();
            const auto now = std::chrono::steady_clock::now();
            std::string why;
            if (v && v->held) {
                last_ok = now;
                note(*v);
            } else if (v) {
                note(*v);
                why = "the lease is at generation " + std::to_string(v->generation) + ", held by " + v->holder +
                      " (this replica led with generation " + std::to_string(lease_->generation()) + ")";
            } else if (std::chrono::duration<double>(now - last_ok).count() > duration_s_) {
                why = "no lease renewal for more than lease_duration_s (" + v.error().message + ")";
            } else {
                log(LogLevel::Warn, "leader.renew_failed", {{"error", v.error().message}});
            }
            if (!why.empty()) {
                log(LogLevel::Error, "leader.deposed",
                    {{"error", why}, {"action", "exiting with code 3: another replica leads this database"}});
                std::fflush(nullptr);
                std::_Exit(3);
            }
            lk.lock();
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
