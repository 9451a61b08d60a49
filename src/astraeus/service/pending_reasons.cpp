#include "astraeus/service/pending_reasons.hpp"

namespace astraeus::service {

const std::string& PendingReasons::of(int j, int workers, int gpus_per_worker) {
    auto key = std::make_tuple(adapter_.reason_kind(j), workers, gpus_per_worker);
    auto it = memo_.find(key);
    if (it == memo_.end()) it = memo_.emplace(std::move(key), reason_(j, workers, gpus_per_worker)).first;
    return it->second;
}

}  // namespace astraeus::service
