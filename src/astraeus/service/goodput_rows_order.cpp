#include "astraeus/service/goodput_rows_order.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "astraeus/service/service_state.hpp"

namespace astraeus::service {

namespace gp = goodput;
using detail::bad;
using detail::is_digits;

namespace {

// The numeric value of `key` for a row (GPU-seconds, or goodput in 0..1 and -1 when nothing was
// held); nullopt for an unknown key.
std::optional<double> value_of(std::string_view key, const gp::Counts& c) {
    const gp::Figures f = gp::figures(c);
    if (key == "held") return static_cast<double>(f.allocated);
    if (key == "productive") return static_cast<double>(f.productive);
    if (key == "goodput") return f.goodput ? *f.goodput : -1.0;
    if (key == "waiting") return static_cast<double>(f.waiting);
    auto cat = gp::parse_category(key);
    if (!cat || *cat == gp::Category::Productive) return std::nullopt;
    return static_cast<double>(c.held_of(*cat));
}

bool known_key(std::string_view key) { return key == "name" || value_of(key, gp::Counts{}).has_value(); }

}  // namespace

ApiResult<GoodputRowsOrder> take_goodput_rows_order(Params& q) {
    GoodputRowsOrder o;
    if (auto it = q.find("sort"); it != q.end()) {
        if (!known_key(it->second))
            return std::unexpected(bad("bad 'sort' '" + it->second.substr(0, 32) + "' (" + std::string(kGoodputSortKeys) + ")"));
        o.key = it->second;
        o.desc = o.key != "name";
        q.erase(it);
    }
    if (auto it = q.find("dir"); it != q.end()) {
        if (o.key.empty()) return std::unexpected(bad("'dir' goes with 'sort'"));
        if (it->second != "asc" && it->second != "desc")
            return std::unexpected(bad("bad 'dir' '" + it->second.substr(0, 32) + "' (asc or desc)"));
        o.desc = it->second == "desc";
        q.erase(it);
    }
    if (auto it = q.find("limit"); it != q.end()) {
        if (!is_digits(it->second, 6) || std::stoul(it->second) < 1 || std::stoul(it->second) > kMaxGoodputRows)
            return std::unexpected(bad("bad 'limit' '" + it->second.substr(0, 32) + "' (1 to " +
                                       std::to_string(kMaxGoodputRows) + " rows)"));
        o.limit = std::stoul(it->second);
        q.erase(it);
    }
    return o;
}

std::vector<std::size_t> order_goodput_rows(const std::vector<OrderedRow>& rows, const GoodputRowsOrder& o) {
    std::vector<std::size_t> idx(rows.size());
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    const std::size_t n = o.limit == 0 ? rows.size() : std::min(o.limit, rows.size());
    if (o.key.empty()) {
        idx.resize(n);
        return idx;
    }
    const auto by_name = [&](std::size_t a, std::size_t b) {
        if (rows[a].workspace != rows[b].workspace) return rows[a].workspace < rows[b].workspace;
        if (rows[a].name != rows[b].name) return rows[a].name < rows[b].name;
        return a < b;
    };
    std::vector<double> v;
    if (o.key != "name") {
        v.reserve(rows.size());
        for (const OrderedRow& r : rows) v.push_back(*value_of(o.key, r.counts));
    }
    // The key in the chosen direction; ties by name ascending whatever the direction.
    const auto before = [&](std::size_t a, std::size_t b) {
        if (o.key == "name") return o.desc ? by_name(b, a) : by_name(a, b);
        if (v[a] != v[b]) return o.desc ? v[a] > v[b] : v[a] < v[b];
        return by_name(a, b);
    };
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(), before);
    idx.resize(n);
    return idx;
}

}  // namespace astraeus::service
