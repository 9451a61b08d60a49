#include "astraeus/goodput_io/pending_count.hpp"

#include <algorithm>
#include <charconv>
#include <tuple>

namespace astraeus::goodput {

namespace {
auto key(const Delta& d) { return std::tuple(d.machine, d.hour, static_cast<int>(d.category), d.held); }

template <class T>
bool number(std::string_view s, T& out) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && p == s.data() + s.size();
}
}  // namespace

void PendingCount::add(const Delta& d) {
    auto it = std::lower_bound(rows_.begin(), rows_.end(), d,
                               [](const Delta& a, const Delta& b) { return key(a) < key(b); });
    if (it != rows_.end() && key(*it) == key(d)) it->gpu_s += d.gpu_s;
    else rows_.insert(it, d);
}

std::string PendingCount::text() const {
    std::string out;
    for (const Delta& d : rows_) {
        if (d.gpu_s == 0) continue;
        if (!out.empty()) out += ';';
        out += std::to_string(d.machine) + ',' + std::to_string(d.hour) + ',' +
               std::to_string(static_cast<int>(d.category)) + ',' + (d.held ? '1' : '0') + ',' +
               std::to_string(d.gpu_s);
    }
    return out;
}

Result<std::vector<Delta>> parse_pending_count(std::string_view text, int run) {
    std::vector<Delta> out;
    while (!text.empty()) {
        const auto end = text.find(';');
        const std::string_view entry = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        std::string_view f[5];
        std::string_view rest = entry;
        int n = 0;
        for (; n < 5 && !rest.empty(); ++n) {
            const auto c = rest.find(',');
            f[n] = rest.substr(0, c);
            rest = c == std::string_view::npos ? std::string_view{} : rest.substr(c + 1);
        }
        Delta d{run, 0, 0, Category::Productive, false, 0};
        int category = -1;
        int held = -1;
        if (n != 5 || !rest.empty() || !number(f[0], d.machine) || !number(f[1], d.hour) ||
            !number(f[2], category) || category < 0 || category > static_cast<int>(kUnmeasured) ||
            !number(f[3], held) || held < 0 || held > 1 || !number(f[4], d.gpu_s))
            return fail("pending count: entry '" + std::string(entry) +
                        "' is not machine,hour,category(0-8),held(0|1),gpu_s");
        d.category = static_cast<Category>(category);
        d.held = held == 1;
        out.push_back(d);
    }
    return out;
}

}  // namespace astraeus::goodput
