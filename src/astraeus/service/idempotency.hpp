// Idempotency-Key of POST /v1/runs (issue 18; docs/api.md "Idempotent submits"): a client that
// retries a submission whose reply was lost sends the same key, and gets the first reply again
// instead of a 409 for "a run of that name exists". Keys are per token, kept for a day (the
// service's clock), stored with the run they created in the same transaction (store schema 4);
// in memory only the index (token, key) -> body hash, run and time, not the reply text.
// Thread safety: none (the service calls it under its lock).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "astraeus/base/time.hpp"
#include "astraeus/store/store.hpp"

namespace astraeus::service {

/// How long a key is kept: replays within a day answer the first reply.
inline constexpr Seconds kIdempotencyKeepS = 24 * 3600;
/// The longest key (bytes).
inline constexpr std::size_t kIdempotencyKeyMax = 255;

/// "" when `key` is a valid Idempotency-Key (1-255 bytes of printable ASCII, 0x21-0x7E, with
/// spaces inside allowed); else why not (for a 400).
std::string idempotency_key_problem(std::string_view key);

class IdempotencyIndex {
public:
    struct Entry {
        std::string body_sha256;
        store::Id run_id = 0;
        Seconds created_s = 0;
    };
    /// Rebuilds the index from the store's keys (their reply texts are not needed).
    void load(const std::vector<store::IdempotencyRec>& recs);
    /// The entry of (token, key), or none.
    const Entry* find(store::Id token_id, const std::string& key) const;
    void add(const store::IdempotencyRec& rec);
    /// Forgets the keys created before `before_s`; how many.
    std::size_t prune(Seconds before_s);
    std::size_t size() const { return by_key_.size(); }

private:
    std::map<std::pair<store::Id, std::string>, Entry> by_key_;
    std::set<std::tuple<Seconds, store::Id, std::string>> by_time_;
};

}  // namespace astraeus::service
