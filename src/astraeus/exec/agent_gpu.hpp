// GPU utilization samples in the node agent protocol (docs/agents.md "GPU utilization"): the
// agent samples its GPUs every `--utilization-period` seconds (exec/gpu_sampler.hpp) and sends
// the samples not yet taken with its next heartbeat, as the compact field
//   "gpu_util": [[50, 48, 0, -1], ...]   oldest first; one array per sample, one integer
//                                         percent per GPU index (-1: NVML could not read it)
// The service stamps them with the heartbeat's arrival (the agent sends a heartbeat as soon as
// it has a sample, so they arrive within one request's latency) and gives each running worker
// there the mean of its GPUs (mean_utilization), which feeds the goodput count.
// Bounded: the agent keeps at most kMaxGpuSamples (older ones are dropped while the service is
// unreachable); the service reads at most kMaxGpuSamples of a message (the newest) and at most
// the machine's GPU count of entries per sample. Thread safety: pure functions.
#pragma once
#include <deque>
#include <nlohmann/json.hpp>
#include <vector>

namespace astraeus::exec {

inline constexpr std::size_t kMaxGpuSamples = 6;

/// The "gpu_util" field of `samples` (percent per GPU, rounded to integers; negative -> -1).
nlohmann::json gpu_samples_json(const std::deque<std::vector<double>>& samples);

/// The samples of a heartbeat `body` ("gpu_util"), bounded as above: at most kMaxGpuSamples
/// (the newest), each cut to `gpus` entries; an entry that is not a number is -1 (unreadable).
/// No field, or not an array of arrays: none.
std::vector<std::vector<double>> parse_gpu_samples(const nlohmann::json& body, int gpus);

}  // namespace astraeus::exec
