#include "astraeus/exec/nvml.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace astraeus::exec {

namespace {
// NVML's C types (nvml.h), declared here: no NVML header is needed to build.
using nvmlReturn_t = int;  // NVML_SUCCESS = 0
using nvmlDevice_t = void*;
struct nvmlMemory_t {
    unsigned long long total, free, used;
};
struct nvmlUtilization_t {
    unsigned int gpu, memory;
};
}  // namespace

struct Nvml::Api {
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    nvmlReturn_t (*count)(unsigned int*) = nullptr;
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
    nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
    nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
    const char* (*error)(nvmlReturn_t) = nullptr;
};

std::string nvml_library() {
    const char* e = std::getenv("ASTRAEUS_NVML_LIBRARY");
    return e && *e ? e : "libnvidia-ml.so.1";
}

Result<std::unique_ptr<Nvml>> Nvml::open(const std::string& library) {
    std::unique_ptr<Nvml> n(new Nvml());
    n->lib_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!n->lib_) {
        const char* e = ::dlerror();
        return fail("NVML: cannot load " + library + ": " + (e ? e : "unknown error"));
    }
    n->api_ = std::make_unique<Api>();
    Api& a = *n->api_;
    std::string missing;
    auto sym = [&](auto& fn, const char* name) {
        void* p = ::dlsym(n->lib_, name);
        if (!p) missing += std::string(missing.empty() ? "" : ", ") + name;
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    sym(a.init, "nvmlInit_v2");
    sym(a.shutdown, "nvmlShutdown");
    sym(a.count, "nvmlDeviceGetCount_v2");
    sym(a.handle, "nvmlDeviceGetHandleByIndex_v2");
    sym(a.uuid, "nvmlDeviceGetUUID");
    sym(a.name, "nvmlDeviceGetName");
    sym(a.memory, "nvmlDeviceGetMemoryInfo");
    sym(a.utilization, "nvmlDeviceGetUtilizationRates");
    sym(a.error, "nvmlErrorString");
    if (!missing.empty()) {
        a.shutdown = nullptr;  // never initialised
        return fail("NVML: " + library + " lacks " + missing);
    }
    auto err = [&](nvmlReturn_t r) { return std::string(a.error(r) ? a.error(r) : "unknown error"); };
    if (nvmlReturn_t r = a.init(); r != 0) {
        a.shutdown = nullptr;
        return fail("NVML: nvmlInit_v2 failed: " + err(r));
    }
    unsigned int count = 0;
    if (nvmlReturn_t r = a.count(&count); r != 0) return fail("NVML: nvmlDeviceGetCount_v2 failed: " + err(r));
    for (unsigned int i = 0; i < count; ++i) {
        nvmlDevice_t d = nullptr;
        if (nvmlReturn_t r = a.handle(i, &d); r != 0)
            return fail("NVML: nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) + ") failed: " + err(r));
        GpuInfo g;
        g.index = static_cast<int>(i);
        char buf[96] = {};
        if (a.uuid(d, buf, sizeof buf - 1) == 0) g.uuid = buf;
        char nbuf[96] = {};
        if (a.name(d, nbuf, sizeof nbuf - 1) == 0) g.name = nbuf;
        nvmlMemory_t m{};
        if (a.memory(d, &m) == 0) g.memory_bytes = m.total;
        n->devices_.push_back(d);
        n->gpus_.push_back(g);
    }
    return n;
}

Nvml::~Nvml() {
    if (api_ && api_->shutdown) api_->shutdown();
    if (lib_) ::dlclose(lib_);
}

std::vector<double> Nvml::utilization() {
    std::vector<double> out;
    for (void* d : devices_) {
        nvmlUtilization_t u{};
        out.push_back(api_->utilization(d, &u) == 0 ? static_cast<double>(u.gpu) : -1.0);
    }
    return out;
}

}  // namespace astraeus::exec
