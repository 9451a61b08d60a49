// The agents executor's GPU utilization: the samples of a heartbeat (exec/agent_gpu.hpp) become
// Utilization events of the running workers on that machine, the local executor's rule
// (exec/gpu_sampler.hpp: the mean of the worker's GPUs' readable samples).
#include "astraeus/exec/agent_gpu.hpp"
#include "astraeus/exec/agent_hub.hpp"
#include "astraeus/exec/gpu_sampler.hpp"

namespace astraeus::exec {

int AgentHub::take_gpu_samples(Seconds t, std::int64_t id, const nlohmann::json& body) {
    auto m = machines_.find(id);
    if (m == machines_.end()) return 0;
    int n = 0;
    for (const std::vector<double>& sample : parse_gpu_samples(body, m->second.gpus))
        for (const auto& [run, r] : runs_) {
            if (r.phase != ExecPhase::Running) continue;
            for (std::size_t k = 0; k < r.w.size() && k < r.spec.placement.size(); ++k) {
                if (r.spec.placement[k].machine != id || r.w[k].st != W::Up) continue;
                const double level = mean_utilization(sample, r.w[k].gpus);
                if (level < 0) continue;
                ExecEvent e{ExecEvent::Kind::Utilization, t};
                e.run = run;
                e.machine = id;
                e.worker = static_cast<int>(k);
                e.level = level;
                e.attempt = r.spec.attempt;
                emit(e);
                ++n;
            }
        }
    return n;
}

}  // namespace astraeus::exec
