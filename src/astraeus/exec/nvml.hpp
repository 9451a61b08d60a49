// NVML (NVIDIA Management Library) through dlopen at run time: libnvidia-ml.so.1 is loaded when
// the service or an agent starts, never linked, so the project builds and runs on machines
// without it. Used: nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2,
// nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetUUID, nvmlDeviceGetName, nvmlDeviceGetMemoryInfo,
// nvmlDeviceGetUtilizationRates, nvmlErrorString (declared here from NVML's documented C API).
// Thread safety: utilization() and gpus() may be called from any one thread at a time.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/exec/gpu_source.hpp"

namespace astraeus::exec {

/// The library to load: $ASTRAEUS_NVML_LIBRARY when set (tests use a fake), else
/// "libnvidia-ml.so.1" (the driver's, found by the dynamic loader).
std::string nvml_library();

class Nvml final : public GpuSource {
public:
    /// Loads `library`, initialises NVML and reads every GPU's index, UUID, name and memory.
    /// Errors: the library cannot be loaded (the usual case without an NVIDIA driver), a symbol
    /// is missing, or an NVML call fails (with nvmlErrorString's text).
    static Result<std::unique_ptr<Nvml>> open(const std::string& library);
    ~Nvml() override;
    std::vector<GpuInfo> gpus() const override { return gpus_; }
    /// nvmlDeviceGetUtilizationRates' `gpu` field (percent over the driver's last sample
    /// period) per GPU, -1 where the call fails.
    std::vector<double> utilization() override;

private:
    struct Api;
    Nvml() = default;
    void* lib_ = nullptr;
    std::unique_ptr<Api> api_;
    std::vector<void*> devices_;
    std::vector<GpuInfo> gpus_;
};

}  // namespace astraeus::exec
