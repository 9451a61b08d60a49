// The bounds of a run's request (POST /v1/runs; docs/api.md): the service refuses values outside
// them with a 400, and `astra runs submit` states and checks the same ones before it sends.
#pragma once
#include <cstdint>

namespace astraeus::api {

inline constexpr int kMaxWorkers = 4096;                        ///< workers of one gang
inline constexpr int kMaxGpusPerWorker = 1024;                  ///< GPUs of one worker
inline constexpr std::int64_t kMaxRunSeconds = 10LL * 365 * 86400;  ///< time_limit_s, sim_duration_s

}  // namespace astraeus::api
