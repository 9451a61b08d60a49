// Job orders inside a tenant (spec/astraea.md section 4): how a tenant's pending jobs are ranked
// and in which order its delay jobs are preempted. Ties keep list order (as the reference
// simulator's stable Python sorts do). Thread safety: pure, given its arguments.
#pragma once
#include <span>
#include <vector>

#include "astraeus/base/rng.hpp"
#include "astraeus/model/run_state.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/sched/options.hpp"

namespace astraeus {

/// A rank: up to three numbers compared in turn, then the position in the list.
struct RankKey {
    double k1 = 0, k2 = 0, k3 = 0;
    int pos = 0;
    int job = 0;
    bool operator<(const RankKey& o) const {
        if (k1 != o.k1) return k1 < o.k1;
        if (k2 != o.k2) return k2 < o.k2;
        if (k3 != o.k3) return k3 < o.k3;
        return pos < o.pos;
    }
};

/// Jobs in rank order, ordered only as far as they are read: a round usually looks at the first
/// few candidates of a long queue, so reading k of n costs O(n + k log n) (a binary heap), not
/// O(n log n); past kHeapReads reads the rest is sorted at once (O(n log n) with a smaller
/// constant than a pop per read).
class LazyRanking {
public:
    void clear() {
        heap_.clear();
        ordered_.clear();
        built_ = false;
    }
    void add(RankKey key) { heap_.push_back(key); }
    std::size_t size() const { return heap_.size() + ordered_.size(); }
    /// The job ranked k-th (0 = served first); k < size().
    int operator[](std::size_t k);

private:
    /// Reads served by popping the heap; past them, the rest is sorted in one go.
    static constexpr std::size_t kHeapReads = 16;
    std::vector<RankKey> heap_;   ///< not yet ordered (a min-heap once built_)
    std::vector<int> ordered_;    ///< the jobs ranked 0, 1, ... so far
    bool built_ = false;
};

/// Ranks `pending` (job indexes in list order) into `out`. themis writes each ranked job's rho'
/// into `themis_rho` (the victim order reads the last value computed while the job was
/// pending, as the reference does); random shuffles with `rng`. gang_weight (gamma >= 0, fairness
/// order only): ranks by F_j * g_j^gamma instead of F_j (0: as published). due_first (fairness
/// order only): the jobs with F_j < 1 first, each group by the key above (false: as published).
void rank_pending(JobOrder order, std::span<const Job> jobs, std::span<const RunState> runs,
                  const std::vector<int>& pending, LazyRanking& out, std::span<double> themis_rho,
                  Rng& rng, double gang_weight = 0, bool due_first = false);

/// Sorts `delay` (running delay jobs, list order) into victim order, most over-served first.
/// Orders without a victim order (fifo, smallest_first, las, srtf, random) clear it.
/// gang_weight: as rank_pending's (the highest F_j * g_j^gamma first); due_first: the jobs with
/// F_j >= 1 first.
void order_victims(JobOrder order, std::span<const Job> jobs, std::span<const RunState> runs,
                   std::vector<int>& delay, std::span<const double> themis_rho,
                   double gang_weight = 0, bool due_first = false);

}  // namespace astraeus
