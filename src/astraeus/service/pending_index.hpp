// The pending runs of one pool as the round adapter (service/round_adapter.hpp) keeps them:
// indexes updated by events, so that a submission, a start or a stop costs O(log n) (plus the
// move of a list's tail when a run leaves from the middle) and a round's cost does not grow
// with how long the backlog has waited (issue 24). It holds
//   - every pending run, and each tenant's, in the order they joined (began to wait);
//   - each tenant's starving runs (waited T_starve since they began to wait), by submit time
//     then join order, with a per-run mark (as the simulator's sim/engine_base.hpp);
//   - the runs not yet starving, by when they began to wait (promote() moves the due ones);
//   - per tenant, the pending gangs' sizes (the smallest) and how many pending runs never ran.
// Internal to the service. Thread safety: none (the adapter runs under the service's lock).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "astraeus/base/time.hpp"

namespace astraeus::service {

class PendingIndex {
public:
    /// A new tenant (index = the number added before).
    void add_tenant();
    /// A new job (index = the number added before) of tenant u, `gpus` GPUs, submitted at
    /// `submit_s` (the starving lists' order); not pending.
    void add_job(int u, int gpus, Seconds submit_s);

    /// Job j begins to wait at `wait_begin_s` (appended to the pending lists, not starving);
    /// `fresh`: it never ran (counted in new_jobs).
    void join(int j, Seconds wait_begin_s, bool fresh);
    /// Job j leaves the pending lists (and its tenant's starving list if there).
    void leave(int j);
    /// Jobs `js` (pending, distinct) leave at once, as a round's starts do: one pass over each
    /// list instead of an erase from the middle per job.
    void leave_all(std::span<const int> js);
    /// Pending job j's "never ran" changed (a restart restored its past).
    void set_fresh(int j, bool fresh);
    /// Makes the starving lists those at `now`: the runs that have waited `starvation_s` join
    /// them (O(k log k) for k new ones, plus a merge per tenant that got some). A `now` before
    /// the previous call's sends back the runs no longer starving then (rare: O(pending)).
    void promote(Seconds now, Seconds starvation_s);

    bool pending(int j) const { return pending_[j] != 0; }
    bool starving(int j) const { return starving_[j] != 0; }
    /// Per job: when it last joined the pending lists (increasing along the lists; 0: never;
    /// kept after it leaves).
    const std::vector<std::uint64_t>& seq() const { return seq_; }
    const std::vector<int>& all() const { return all_; }
    const std::vector<std::vector<int>>& by_tenant() const { return by_tenant_; }
    const std::vector<int>& starving_of(std::size_t u) const { return starving_of_[u]; }
    /// Smallest gang among tenant u's pending runs (INT_MAX if none).
    int min_gpus(std::size_t u) const;
    /// Tenant u's pending runs that never ran.
    int fresh(std::size_t u) const { return fresh_of_[u]; }
    /// The earliest `wait_begin_s` after `after` of a run not starving (none: nullopt).
    std::optional<Seconds> first_wait_after(Seconds after) const;

private:
    /// Job j's counts, waiting entry and marks (not the lists); whether it was starving.
    bool detach(int j);
    /// Erases j from a list sorted by `before` (binary search; j must be there).
    template <class Before>
    static void erase_sorted(std::vector<int>& v, int j, Before before);
    bool join_order(int a, int b) const { return seq_[a] < seq_[b]; }
    bool starving_order(int a, int b) const {
        return submit_[a] != submit_[b] ? submit_[a] < submit_[b] : seq_[a] < seq_[b];
    }

    // Per job.
    std::vector<int> tenant_, gpus_;
    std::vector<Seconds> submit_, wait_begin_;
    std::vector<std::uint64_t> seq_;
    std::vector<char> pending_, starving_, fresh_;
    std::uint64_t next_seq_ = 0;
    // The lists.
    std::vector<int> all_;
    std::vector<std::vector<int>> by_tenant_, starving_of_;
    std::set<std::pair<Seconds, int>> waiting_;  ///< (wait begin, job): pending, not starving
    Seconds promoted_at_ = 0;                    ///< the last promote()'s now
    bool promoted_ = false;
    // Per tenant.
    std::vector<std::map<int, int>> gangs_;      ///< GPUs -> pending runs of that gang
    std::vector<int> fresh_of_;
    std::vector<int> batch_;                     ///< promote()'s scratch
};

}  // namespace astraeus::service
