// Where GPU facts come from on one machine: how many GPUs there are and their utilization now.
// NVML implements it (exec/nvml.hpp); a machine without NVML declares its GPUs (`--gpus N`)
// and has no samples. Thread safety: implementations say.
#pragma once
#include <string>
#include <vector>

namespace astraeus::exec {

struct GpuInfo {
    int index = 0;
    std::string uuid;
    std::string name;
    unsigned long long memory_bytes = 0;
};

class GpuSource {
public:
    virtual ~GpuSource() = default;
    virtual std::vector<GpuInfo> gpus() const = 0;
    /// Utilization of every GPU now, percent (index = GPU index), -1 where it cannot be read.
    virtual std::vector<double> utilization() = 0;
};

}  // namespace astraeus::exec
