#include "astraeus/exec/gpu_sampler.hpp"

#include <algorithm>

namespace astraeus::exec {

double mean_utilization(const std::vector<double>& util, const std::vector<int>& gpus) {
    double sum = 0;
    int n = 0;
    for (int g : gpus)
        if (g >= 0 && static_cast<std::size_t>(g) < util.size() &&
            util[static_cast<std::size_t>(g)] >= 0) {
            sum += util[static_cast<std::size_t>(g)];
            ++n;
        }
    return n == 0 ? -1.0 : sum / n;
}

GpuSampler::GpuSampler(std::shared_ptr<GpuSource> source, double period_s)
    : source_(std::move(source)),
      period_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(std::max(0.001, period_s)))) {}

std::vector<double> GpuSampler::sample(Clock::time_point now) {
    if (!source_) return {};
    next_ = now + period_;
    return source_->utilization();
}

}  // namespace astraeus::exec
