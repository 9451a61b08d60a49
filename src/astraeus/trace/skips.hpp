// What a trace reader left out of the workload on purpose (rows that are valid but not a GPU job
// the simulator can run: CPU-only jobs, jobs without recorded run time, ...), counted by reason.
// Malformed rows are errors, never skips. Thread safety: a plain value, one per read.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace astraeus {

struct SkipCounts {
    /// (reason, rows skipped for it), reasons in first-seen order.
    std::vector<std::pair<std::string, std::int64_t>> by_reason;

    void add(const std::string& reason, std::int64_t n = 1) {
        for (auto& [r, c] : by_reason)
            if (r == reason) {
                c += n;
                return;
            }
        by_reason.emplace_back(reason, n);
    }
    std::int64_t total() const {
        std::int64_t t = 0;
        for (const auto& rc : by_reason) t += rc.second;
        return t;
    }
    /// "12 (no attempts: 10, no GPUs: 2)", or "0".
    std::string summary() const {
        std::string s = std::to_string(total());
        if (by_reason.empty()) return s;
        s += " (";
        for (std::size_t i = 0; i < by_reason.size(); ++i)
            s += (i ? ", " : "") + by_reason[i].first + ": " + std::to_string(by_reason[i].second);
        return s + ")";
    }
};

}  // namespace astraeus
