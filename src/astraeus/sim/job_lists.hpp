// Insertion-ordered lists of job indexes with O(1) removal, for the simulator's pending and
// running lists (global and per tenant). One JobLists object is a family of disjoint lists that
// share one position array: a job is in at most one list of a family at a time.
// Thread safety: not thread-safe (one engine per thread).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace astraeus::detail {

class JobLists {
public:
    /// A removed job's entry until the list is compacted.
    static constexpr int kGone = -1;

    /// `lists` lists over jobs 0..jobs-1. With `tombstones` (the event engine) a removal marks
    /// the entry kGone in O(1) and the list is compacted, order kept, when it is next read
    /// whole through live() or when tombstones are most of it: a job's removal costs O(1)
    /// amortized instead of O(list length). Without (compat: the reference walks its running
    /// list while erasing from it, and its results depend on that) a removal erases at once.
    JobLists(std::size_t lists, std::size_t jobs, bool tombstones);

    /// Appends j to list `l`; j must be in no list of this family.
    void push(std::size_t l, int j);
    /// Removes j from list `l`, where it must be.
    void remove(std::size_t l, int j);
    /// Live entries of list `l`.
    std::size_t size(std::size_t l) const { return lists_[l].size() - dead_[l]; }
    bool empty(std::size_t l) const { return size(l) == 0; }
    /// List `l` without tombstones, in insertion order (compacts it: O(its stored length)).
    const std::vector<int>& live(std::size_t l);
    /// List `l` as stored: kGone entries are removed jobs, to be skipped.
    const std::vector<int>& stored(std::size_t l) const { return lists_[l]; }
    /// Every list as stored (stable address for RoundInput's spans); compact_all() makes them live.
    const std::vector<std::vector<int>>& all() const { return lists_; }
    void compact_all();

private:
    void compact(std::size_t l);

    std::vector<std::vector<int>> lists_;
    std::vector<std::size_t> dead_;
    std::vector<std::uint32_t> pos_;  ///< per job: its index in the list it is in (tombstones)
    bool tombstones_;
};

}  // namespace astraeus::detail
