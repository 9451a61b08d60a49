#include "astraeus/store/failpoint.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace astraeus::store {
namespace {

struct Armed {
    bool on = false;
    std::string name;
    long at = 1;  ///< die at this hit (1-based)
    std::atomic<long> hits{0};
};

Armed& armed() {
    static Armed* a = [] {
        auto* x = new Armed;  // never freed: a failpoint may fire during static destruction
        const char* v = std::getenv("ASTRAEUS_FAILPOINT");
        if (v == nullptr || *v == '\0') return x;
        std::string s(v);
        const std::size_t colon = s.rfind(':');
        if (colon != std::string::npos) {
            char* end = nullptr;
            const long n = std::strtol(s.c_str() + colon + 1, &end, 10);
            if (end != nullptr && *end == '\0' && n >= 1) {
                x->at = n;
                s.resize(colon);
            }
        }
        x->name = s;
        x->on = true;
        return x;
    }();
    return *a;
}

}  // namespace

void failpoint(const char* name) {
    Armed& a = armed();
    if (!a.on || a.name != name) return;
    const long hit = a.hits.fetch_add(1) + 1;
    if (hit != a.at) return;
    char line[256];
    const int n = std::snprintf(line, sizeof line, "failpoint %s: hit %ld, killing the process\n", name, hit);
    if (n > 0) (void)!::write(2, line, static_cast<std::size_t>(std::min(n, static_cast<int>(sizeof line) - 1)));
    ::kill(::getpid(), SIGKILL);
    ::_exit(137);  // not reached
}

}  // namespace astraeus::store
