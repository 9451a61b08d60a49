// `astraeus gpu-sample --out FILE --gpus LIST`: the GPU sampler of a Slurm step (the batch
// script starts it beside each worker, docs/slurm.md). It reads this node's GPUs through NVML
// (exec/nvml.hpp, the agents' shared exec/gpu_sampler) every --period seconds and keeps the
// latest sample in FILE as "UNIX_SECONDS MEAN_PERCENT\n" (written to FILE.tmp, then renamed),
// the mean over the GPUs of LIST (CUDA_VISIBLE_DEVICES). The Slurm executor reads FILE from
// the shared run folder and reports each new sample as the worker's utilization. It exits when
// its parent (the worker) is gone; without NVML it exits at once (no samples: progress or
// "unmeasured" decide, spec/goodput.md). Exit codes: 0, 2 bad usage.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "astraeus/cli/commands.hpp"
#include "astraeus/exec/gpu_sampler.hpp"
#include "astraeus/exec/nvml.hpp"

namespace astraeus::cli {
namespace {

struct SampleArgs {
    std::string out;
    std::string gpus;
    double period_s = 10;
};

int run_sample(const SampleArgs& a) {
    std::vector<int> idx;
    std::stringstream in(a.gpus);
    for (std::string item; std::getline(in, item, ',');) {
        char* end = nullptr;
        const long v = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 0 || v > 1023) {
            std::fprintf(stderr, "astraeus gpu-sample: --gpus: expected GPU indices like 0,1,2, got '%s'\n",
                         a.gpus.c_str());
            return 2;
        }
        idx.push_back(static_cast<int>(v));
    }
    auto nvml = exec::Nvml::open(exec::nvml_library());
    if (!nvml) return 0;  // no NVML on this node: nothing to sample
    exec::GpuSampler sampler(std::shared_ptr<exec::GpuSource>(std::move(*nvml)), a.period_s);
    const pid_t parent = ::getppid();
    while (::getppid() == parent) {
        const auto now = exec::GpuSampler::Clock::now();
        if (sampler.due(now)) {
            const double mean = exec::mean_utilization(sampler.sample(now), idx);
            if (mean >= 0) {
                const std::string tmp = a.out + ".tmp";
                {
                    std::ofstream f(tmp, std::ios::trunc);
                    f << std::time(nullptr) << ' ' << mean << '\n';
                }
                (void)std::rename(tmp.c_str(), a.out.c_str());
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return 0;
}

}  // namespace

std::function<int()> add_gpu_sample(CLI::App& app) {
    auto args = std::make_shared<SampleArgs>();
    auto* cmd = app.add_subcommand("gpu-sample", "sample this node's GPUs for a Slurm step (started "
                                                 "by the Slurm executor's batch script)");
    cmd->add_option("--out", args->out, "the file that keeps the latest sample")->required();
    cmd->add_option("--gpus", args->gpus, "the worker's GPU indices (CUDA_VISIBLE_DEVICES)");
    cmd->add_option("--period", args->period_s, "seconds between samples (default 10)")
        ->check(CLI::Range(0.05, 3600.0));
    return [cmd, args] {
        if (!cmd->parsed()) return -1;
        return run_sample(*args);
    };
}

}  // namespace astraeus::cli
