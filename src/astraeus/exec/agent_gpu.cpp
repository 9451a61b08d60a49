#include "astraeus/exec/agent_gpu.hpp"

#include <cmath>

namespace astraeus::exec {

using nlohmann::json;

json gpu_samples_json(const std::deque<std::vector<double>>& samples) {
    json out = json::array();
    for (const auto& s : samples) {
        json a = json::array();
        for (double v : s)
            a.push_back(v >= 0 && std::isfinite(v) ? static_cast<std::int64_t>(std::llround(v))
                                                   : std::int64_t{-1});
        out.push_back(std::move(a));
    }
    return out;
}

std::vector<std::vector<double>> parse_gpu_samples(const json& body, int gpus) {
    std::vector<std::vector<double>> out;
    auto it = body.find("gpu_util");
    if (it == body.end() || !it->is_array()) return out;
    const std::size_t n = it->size();
    const std::size_t first = n > kMaxGpuSamples ? n - kMaxGpuSamples : 0;
    const std::size_t width = gpus > 0 ? static_cast<std::size_t>(gpus) : 0;
    for (std::size_t i = first; i < n; ++i) {
        const json& s = (*it)[i];
        if (!s.is_array()) continue;
        std::vector<double> v;
        for (std::size_t g = 0; g < s.size() && g < width; ++g)
            v.push_back(s[g].is_number() ? s[g].get<double>() : -1.0);
        out.push_back(std::move(v));
    }
    return out;
}

}  // namespace astraeus::exec
