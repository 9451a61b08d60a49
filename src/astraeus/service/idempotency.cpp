#include "astraeus/service/idempotency.hpp"

#include <tuple>

namespace astraeus::service {

std::string idempotency_key_problem(std::string_view key) {
    if (key.empty()) return "the Idempotency-Key header is empty";
    if (key.size() > kIdempotencyKeyMax)
        return "the Idempotency-Key header is longer than " + std::to_string(kIdempotencyKeyMax) + " bytes";
    for (unsigned char ch : key)
        if (ch < 0x20 || ch > 0x7e)
            return "the Idempotency-Key header has a byte that is not printable ASCII (use letters, digits, '-')";
    if (key.front() == ' ' || key.back() == ' ') return "the Idempotency-Key header starts or ends with a space";
    return {};
}

void IdempotencyIndex::load(const std::vector<store::IdempotencyRec>& recs) {
    by_key_.clear();
    by_time_.clear();
    for (const auto& r : recs) add(r);
}

const IdempotencyIndex::Entry* IdempotencyIndex::find(store::Id token_id, const std::string& key) const {
    auto it = by_key_.find({token_id, key});
    return it == by_key_.end() ? nullptr : &it->second;
}

void IdempotencyIndex::add(const store::IdempotencyRec& rec) {
    auto [it, added] = by_key_.try_emplace({rec.token_id, rec.key}, Entry{rec.body_sha256, rec.run_id, rec.created_s});
    if (added) by_time_.emplace(rec.created_s, rec.token_id, rec.key);
}

std::size_t IdempotencyIndex::prune(Seconds before_s) {
    std::size_t n = 0;
    while (!by_time_.empty() && std::get<0>(*by_time_.begin()) < before_s) {
        const auto& [t, token, key] = *by_time_.begin();
        by_key_.erase({token, key});
        by_time_.erase(by_time_.begin());
        ++n;
    }
    return n;
}

}  // namespace astraeus::service
