// Service::readiness (service.hpp): GET /readyz.
#include "astraeus/service/service.hpp"

namespace astraeus::service {

ApiResult<nlohmann::json> Service::readiness() {
    std::lock_guard lk(mu_);
    auto m = store_->meta("last_event_s");
    if (!m) return std::unexpected(ApiError{503, "not ready: the store does not answer: " + m.error().message});
    if (!loop_running_) return std::unexpected(ApiError{503, "not ready: the scheduler is not running"});
    return nlohmann::json{{"status", "ready"}, {"store", "ok"}, {"scheduler", "running"}};
}

}  // namespace astraeus::service
