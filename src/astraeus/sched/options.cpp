#include "astraeus/sched/options.hpp"

#include <array>
#include <cmath>
#include <utility>

namespace astraeus {
namespace {

template <class E, std::size_t N>
using NameTable = std::array<std::pair<std::string_view, E>, N>;

constexpr NameTable<Mode, 2> kModes{{{"default", Mode::Default}, {"compat", Mode::Compat}}};
constexpr NameTable<JobOrder, 9> kOrders{{
    {"fairness", JobOrder::Fairness},
    {"disc_fairness", JobOrder::DiscFairness},
    {"job_reward", JobOrder::JobReward},
    {"themis", JobOrder::Themis},
    {"fifo", JobOrder::Fifo},
    {"smallest_first", JobOrder::SmallestFirst},
    {"las", JobOrder::Las},
    {"srtf", JobOrder::Srtf},
    {"random", JobOrder::Random},
}};
constexpr NameTable<QuotaMode, 2> kQuotas{{{"fair", QuotaMode::Fair}, {"static", QuotaMode::Static}}};

template <class E, std::size_t N>
std::string names(const NameTable<E, N>& table) {
    std::string out;
    for (auto& [n, v] : table) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

template <class E, std::size_t N>
Result<E> parse(const NameTable<E, N>& table, std::string_view name, std::string_view what) {
    for (auto& [n, v] : table)
        if (n == name) return v;
    return fail(std::string("unknown ") + std::string(what) + " '" + std::string(name) +
                "'; valid: " + names(table));
}

template <class E, std::size_t N>
std::string_view name_of(const NameTable<E, N>& table, E value) {
    for (auto& [n, v] : table)
        if (v == value) return n;
    return "?";
}

}  // namespace

Result<Mode> parse_mode(std::string_view n) { return parse(kModes, n, "mode"); }
Result<JobOrder> parse_job_order(std::string_view n) { return parse(kOrders, n, "job order"); }
Result<QuotaMode> parse_quota_mode(std::string_view n) { return parse(kQuotas, n, "quota mode"); }
std::string_view to_string(Mode m) { return name_of(kModes, m); }
std::string_view to_string(JobOrder o) { return name_of(kOrders, o); }
std::string_view to_string(QuotaMode q) { return name_of(kQuotas, q); }
std::string job_order_names() { return names(kOrders); }

}  // namespace astraeus

namespace astraeus {

int AstraeaImprovements::headroom_gpus(int pool_gpus) const {
    if (arrival_headroom >= 0) return arrival_headroom;
    if (pool_gpus <= 0 || !(arrival_headroom_fraction > 0)) return 0;
    // The small epsilon keeps products that are whole in decimals (0.003 x 1000 = 3) whole.
    return static_cast<int>(std::floor(arrival_headroom_fraction * pool_gpus + 1e-9));
}

}  // namespace astraeus
