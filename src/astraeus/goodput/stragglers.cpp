#include "astraeus/goodput/stragglers.hpp"

#include <algorithm>

namespace astraeus::goodput {

StragglerDetector::StragglerDetector(StragglerConfig config) : cfg_(config) {}

void StragglerDetector::set_gang(int run, int workers) {
    if (run >= static_cast<int>(runs_.size())) runs_.resize(static_cast<std::size_t>(run) + 1);
    runs_[run].resize(static_cast<std::size_t>(std::max(workers, 0)));
}

void StragglerDetector::progress(int run, int worker, Seconds t, std::int64_t step) {
    if (run < 0 || run >= static_cast<int>(runs_.size())) return;
    auto& gang = runs_[run];
    if (worker < 0 || worker >= static_cast<int>(gang.size())) return;
    History& h = gang[worker];
    if (!h.empty() && step < h.back().step) h.clear();  // restarted from a checkpoint
    h.push_back({t, step});
    // Keep the last report at or before t - window (a future base) and everything after it.
    while (h.size() >= 2 && h[1].t <= t - cfg_.window_s) h.pop_front();
}

void StragglerDetector::reset(int run, int worker) {
    if (run < 0 || run >= static_cast<int>(runs_.size())) return;
    auto& gang = runs_[run];
    if (worker < 0 || worker >= static_cast<int>(gang.size())) return;
    gang[worker].clear();
}

std::int64_t StragglerDetector::last_step(int run, int worker) const {
    if (run < 0 || run >= static_cast<int>(runs_.size())) return -1;
    const auto& gang = runs_[run];
    if (worker < 0 || worker >= static_cast<int>(gang.size()) || gang[worker].empty()) return -1;
    return gang[worker].back().step;
}

double StragglerDetector::rate(int run, int worker, Seconds now) const {
    if (run < 0 || run >= static_cast<int>(runs_.size())) return -1;
    const auto& gang = runs_[run];
    if (worker < 0 || worker >= static_cast<int>(gang.size())) return -1;
    const History& h = gang[worker];
    const Seconds from = now - cfg_.window_s;
    // base: the last report at or before `from`; last: the last at or before `now`.
    const Report* base = nullptr;
    const Report* last = nullptr;
    for (const Report& r : h) {
        if (r.t <= from) base = &r;
        if (r.t <= now) last = &r;
    }
    if (base == nullptr) return -1;
    if (last == base || last->t == base->t) return 0;
    return static_cast<double>(last->step - base->step) / static_cast<double>(last->t - base->t);
}

std::vector<int> StragglerDetector::stragglers(int run, Seconds now) const {
    std::vector<int> out;
    if (run < 0 || run >= static_cast<int>(runs_.size())) return out;
    const int n = static_cast<int>(runs_[run].size());
    std::vector<double> rates(static_cast<std::size_t>(n), -1);
    std::vector<double> judged;
    for (int w = 0; w < n; ++w) {
        rates[w] = rate(run, w, now);
        if (rates[w] >= 0) judged.push_back(rates[w]);
    }
    if (judged.size() < 2) return out;
    std::sort(judged.begin(), judged.end());
    const std::size_t m = judged.size() / 2;
    const double median = judged.size() % 2 == 1 ? judged[m] : (judged[m - 1] + judged[m]) / 2;
    if (median <= 0) return out;
    for (int w = 0; w < n; ++w)
        if (rates[w] >= 0 && rates[w] < cfg_.ratio * median) out.push_back(w);
    return out;
}

std::vector<int> StragglerDetector::runs_with_straggler(Seconds now) const {
    std::vector<int> out;
    for (int r = 0; r < static_cast<int>(runs_.size()); ++r)
        if (has_straggler(r, now)) out.push_back(r);
    return out;
}

}  // namespace astraeus::goodput
