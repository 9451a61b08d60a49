// A read-only view of a store shared by several owners (a follower's snapshots, one after
// another: service/follower_snapshots.hpp): every read is forwarded to the shared store under
// one mutex (a PostgreSQL connection serves one call at a time), every write is refused with an
// error starting "read-only:" and never reaches the store.
// Thread safety: thread-safe (the mutex is shared by every view of the same store).
#pragma once
#include <memory>
#include <mutex>

#include "astraeus/store/store.hpp"

namespace astraeus::store {

/// The shared store every view reads, with the mutex that serialises its calls.
struct SharedStore {
    std::unique_ptr<Store> store;
    std::mutex mu;
};

/// A view of `shared` that reads and never writes (its writes fail "read-only: ...").
std::unique_ptr<Store> read_only_view(std::shared_ptr<SharedStore> shared);

}  // namespace astraeus::store
