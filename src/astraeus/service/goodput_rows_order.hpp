// The order and the first rows of GET /v1/goodput (?sort=KEY&dir=asc|desc&limit=N, docs/api.md):
// the rows sorted on the server by one column of the web pages' goodput table, ties by name, then
// cut to `limit`, so that a page never receives thousands of rows to sort itself. The total and
// rows_total are still over every row. Thread safety: pure functions.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/goodput/category.hpp"
#include "astraeus/service/service.hpp"

namespace astraeus::service {

/// The sort keys, as in the pages' table: name, then GPU-hours held, productive, goodput
/// (a row with nothing held sorts as -1), the six held loss columns and waiting (not held).
inline constexpr std::string_view kGoodputSortKeys =
    "name, held, productive, goodput, idle, stalled, starting, restart, failure, preemption, waiting";
/// The largest `limit`.
inline constexpr std::size_t kMaxGoodputRows = 100000;

struct GoodputRowsOrder {
    std::string key;        ///< "" = the API's usual order (by id), else one of kGoodputSortKeys
    bool desc = false;      ///< default: descending for the figures, ascending for name
    std::size_t limit = 0;  ///< 0 = every row
};

/// Takes sort, dir and limit out of `q` (the rest is the window's: parse_goodput_window) and
/// parses them. 400 naming the parameter: an unknown sort key (the message lists the keys), dir
/// other than asc/desc, dir without sort, limit not 1..kMaxGoodputRows. Never throws.
ApiResult<GoodputRowsOrder> take_goodput_rows_order(Params& q);

/// One row to order: its name (a run's name for by=run, with its workspace in `workspace`;
/// ties and the name key compare workspace, then name, bytewise) and its counts.
struct OrderedRow {
    std::string_view name;
    std::string_view workspace;
    goodput::Counts counts;
};

/// The indexes of `rows` to show, in order: every row sorted by `o.key` (stable on ties of the
/// key and name; an empty key keeps the given order), the first `o.limit` of them (all when 0).
std::vector<std::size_t> order_goodput_rows(const std::vector<OrderedRow>& rows, const GoodputRowsOrder& o);

}  // namespace astraeus::service
