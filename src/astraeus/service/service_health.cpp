// Service::readiness (service.hpp): GET /readyz.
#include "astraeus/service/service.hpp"

namespace astraeus::service {

ApiResult<nlohmann::json> Service::readiness() {
    std::lock_guard lk(mu_);
    auto m = store_->meta("last_event_s");
    if (!m) return std::unexpected(ApiError{503, "not ready: the store does not answer: " + m.error().message});
    if (!loop_running_) return std::unexpected(ApiError{503, "not ready: the scheduler is not running"});
    if (store_failing_)
        return std::unexpected(ApiError{503, "not ready: the store refuses writes (" + store_error_ +
                                                 "); reads are served, writes answer 507"});
    nlohmann::json out{{"status", "ready"}, {"store", "ok"}, {"scheduler", "running"}};
    out.update(leader_ready_);
    return out;
}

void Service::set_leadership(std::function<std::string()> metrics, nlohmann::json ready) {
    std::lock_guard lk(mu_);
    leader_metrics_ = std::move(metrics);
    leader_ready_ = std::move(ready);
    // The fencing token of every reply to agents (exec/agent_hub.hpp set_generation).
    if (agents_ && leader_ready_.contains("generation") && leader_ready_["generation"].is_number_integer())
        agents_->set_generation(leader_ready_["generation"].get<std::int64_t>());
}

}  // namespace astraeus::service
