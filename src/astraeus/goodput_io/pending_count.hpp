// A worker's pending count as text (store::WorkerRec::pending): the Deltas its next minute
// count would emit (GoodputCounter::pending), kept with its state at every store write so that
// a restart (kill -9 included) adds them once and goes on from the time they reach
// (spec/goodput.md "The count": every second between submission and end counted exactly once).
//
// Text: entries "machine,hour,category,held,gpu_s" joined by ';' (machine -1: not placed;
// category 0..8, 8 the unmeasured pseudo-category), one entry per key, GPU-seconds summed,
// in key order. The run is the worker's own (not in the text).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/goodput/counter.hpp"

namespace astraeus::goodput {

/// Collects Deltas summed per (machine, hour, category, held); `text()` is the stored form.
class PendingCount final : public DeltaSink {
public:
    void add(const Delta& d) override;
    std::string text() const;

private:
    std::vector<Delta> rows_;  ///< one per key, gpu_s summed
};

/// The Deltas of `text` for run `run`; an error naming the entry on anything malformed.
Result<std::vector<Delta>> parse_pending_count(std::string_view text, int run);

}  // namespace astraeus::goodput
