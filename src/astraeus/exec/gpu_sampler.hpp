// GPU utilization sampling, shared by the local executor (exec/local_executor.hpp) and the node
// agent (exec/agent_node.hpp): a GpuSource (NVML, exec/nvml.hpp) read every `period_s`, and the
// rule that turns one machine's per-GPU sample into a worker's level (the mean of its GPUs'
// readable samples; the goodput count then calls a minute busy at >= busy_pct, spec/goodput.md).
// Thread safety: GpuSampler is not thread-safe (one thread samples); mean_utilization is pure.
#pragma once
#include <chrono>
#include <memory>
#include <vector>

#include "astraeus/exec/gpu_source.hpp"

namespace astraeus::exec {

/// The mean utilization (percent) of the GPUs `gpus` (indices into `util`, one machine's
/// sample), over the entries that could be read (>= 0; NVML's failures are -1); -1 when none
/// could (no sample for that worker). Values above 100 (a driver's 4294967295) are passed on:
/// the goodput count rejects them and counts them invalid.
double mean_utilization(const std::vector<double>& util, const std::vector<int>& gpus);

class GpuSampler {
  public:
    using Clock = std::chrono::steady_clock;
    /// `source` null: never due (a machine without NVML has no samples). `period_s` > 0.
    GpuSampler(std::shared_ptr<GpuSource> source, double period_s);
    bool enabled() const { return source_ != nullptr; }
    /// Whether a sample is due at `now` (the first one at once).
    bool due(Clock::time_point now) const { return source_ && now >= next_; }
    /// Reads every GPU now (percent per GPU index, -1 where unreadable) and sets the next due
    /// time one period later. Empty when disabled.
    std::vector<double> sample(Clock::time_point now);

  private:
    std::shared_ptr<GpuSource> source_;
    Clock::duration period_;
    Clock::time_point next_{};
};

}  // namespace astraeus::exec
