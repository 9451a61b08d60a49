#include "astraeus/goodput/category.hpp"

#include <string>

namespace astraeus::goodput {

namespace {
constexpr std::array<std::string_view, kCategories> kKeys{
    "productive", "idle", "stalled", "starting", "restart", "failure", "preemption", "waiting"};
}

std::string_view to_string(Category c) {
    const int i = static_cast<int>(c);
    return i < kCategories ? kKeys[i] : "unmeasured";
}

Result<Category> parse_category(std::string_view key) {
    for (int i = 0; i < kCategories; ++i)
        if (kKeys[i] == key) return static_cast<Category>(i);
    std::string valid;
    for (auto k : kKeys) valid += (valid.empty() ? "" : ", ") + std::string(k);
    return fail("unknown category '" + std::string(key) + "' (expected one of " + valid + ")");
}

Counts& Counts::operator+=(const Counts& o) {
    for (int i = 0; i < kCategories; ++i) {
        held[i] += o.held[i];
        not_held[i] += o.not_held[i];
    }
    unmeasured += o.unmeasured;
    return *this;
}

Figures figures(const Counts& c) {
    Figures f;
    for (int i = 0; i < kCategories; ++i) {
        f.allocated += c.held[i];
        f.waiting += c.not_held[i];
    }
    f.productive = c.held_of(Category::Productive);
    f.lost = f.allocated + f.waiting - f.productive;
    if (f.allocated != 0)
        f.goodput = static_cast<double>(f.productive) / static_cast<double>(f.allocated);
    return f;
}

}  // namespace astraeus::goodput
