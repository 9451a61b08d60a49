// A fake libnvidia-ml for the tests: the C symbols that exec/nvml.cpp loads, with GPUs read from
// the file named by $FAKE_NVML_FILE, one line per GPU: "UUID NAME MEMORY_MIB UTILIZATION_PCT"
// (read again at every utilization call, so a test can change it). No file: nvmlInit_v2 fails
// (NVML_ERROR_LIBRARY_NOT_FOUND = 12), like a machine whose driver is not loaded.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {
struct Gpu {
    std::string uuid, name;
    unsigned long long mib = 0;
    unsigned int util = 0;
};
std::vector<Gpu> read_gpus() {
    std::vector<Gpu> out;
    const char* path = std::getenv("FAKE_NVML_FILE");
    if (!path) return out;
    FILE* f = std::fopen(path, "r");
    if (!f) return out;
    char uuid[128], name[128];
    unsigned long long mib = 0;
    unsigned int util = 0;
    while (std::fscanf(f, "%127s %127s %llu %u", uuid, name, &mib, &util) == 4) out.push_back({uuid, name, mib, util});
    std::fclose(f);
    return out;
}
bool initialised = false;
struct Mem {
    unsigned long long total, free, used;
};
struct Util {
    unsigned int gpu, memory;
};
std::size_t index_of(void* d) { return reinterpret_cast<std::size_t>(d) - 1; }
}  // namespace

extern "C" {
int nvmlInit_v2() {
    const char* path = std::getenv("FAKE_NVML_FILE");
    if (!path) return 12;
    FILE* f = std::fopen(path, "r");
    if (!f) return 12;
    std::fclose(f);
    initialised = true;
    return 0;
}
int nvmlShutdown() {
    initialised = false;
    return 0;
}
int nvmlDeviceGetCount_v2(unsigned int* n) {
    if (!initialised) return 1;  // NVML_ERROR_UNINITIALIZED
    *n = static_cast<unsigned int>(read_gpus().size());
    return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** d) {
    if (i >= read_gpus().size()) return 2;  // NVML_ERROR_INVALID_ARGUMENT
    *d = reinterpret_cast<void*>(static_cast<std::size_t>(i) + 1);
    return 0;
}
int nvmlDeviceGetUUID(void* d, char* buf, unsigned int len) {
    const auto g = read_gpus();
    if (index_of(d) >= g.size()) return 2;
    std::snprintf(buf, len, "%s", g[index_of(d)].uuid.c_str());
    return 0;
}
int nvmlDeviceGetName(void* d, char* buf, unsigned int len) {
    const auto g = read_gpus();
    if (index_of(d) >= g.size()) return 2;
    std::snprintf(buf, len, "%s", g[index_of(d)].name.c_str());
    return 0;
}
int nvmlDeviceGetMemoryInfo(void* d, Mem* m) {
    const auto g = read_gpus();
    if (index_of(d) >= g.size()) return 2;
    m->total = g[index_of(d)].mib << 20;
    m->free = m->total;
    m->used = 0;
    return 0;
}
int nvmlDeviceGetUtilizationRates(void* d, Util* u) {
    const auto g = read_gpus();
    if (index_of(d) >= g.size()) return 2;
    u->gpu = g[index_of(d)].util;
    u->memory = 0;
    return 0;
}
const char* nvmlErrorString(int r) {
    switch (r) {
        case 0: return "Success";
        case 1: return "Uninitialized";
        case 2: return "Invalid Argument";
        case 12: return "NVML Shared Library Not Found";
        default: return "Unknown Error";
    }
}
}
