// The hourly goodput ledgers (spec/goodput.md, "Ledgers"): rows keyed by (UTC hour, category,
// held or not) for each run, the machine its GPUs were on, its pool and its workspace, and the
// queries the REST API, the CLI and the simulator's report answer. Rows are kept per (run,
// machine) so that every view (and a workspace's own view of machines and pools) is a sum over
// them. Ids are the caller's (dense small integers); names belong to the shell.
// Thread safety: not thread-safe.
#pragma once
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/goodput/category.hpp"
#include "astraeus/goodput/counter.hpp"

namespace astraeus::goodput {

/// The row key of a query: `by` in the API.
enum class By : std::uint8_t { Workspace, Run, Machine, Pool };
/// "workspace", "run", "machine", "pool"; else an error naming them.
Result<By> parse_by(std::string_view name);
std::string_view to_string(By by);

/// A query's period [start_s, end_s), Unix seconds. Hourly rows whose hour begins in
/// [hour_start(start_s), end_s) are summed.
struct Period {
    Seconds start_s = 0;
    Seconds end_s = 0;
};
/// A valid period: an error when start is after end or when it is longer than 400 days.
Result<Period> make_period(Seconds start_s, Seconds end_s);

/// One row of a query: the id of its `by` key (run, machine, pool or workspace) and its counts.
struct Row {
    int id;
    Counts counts;
};

/// One ISO week of a weekly query.
struct WeekRows {
    Seconds week_start_s;  ///< Monday 00:00 UTC
    std::vector<Row> rows;
};

/// Which runs a caller may see (all when empty).
using RunFilter = std::function<bool(int run)>;

class GoodputLedger final : public DeltaSink {
public:
    /// Declares run `run` of `workspace`, asking for `pool` (before its first count).
    void set_run(int run, int workspace, int pool);
    void add(const Delta& d) override;
    /// Open waits (CounterConfig::open_waits) count as rows of their hours, not held, from
    /// their start to the last counted_to() boundary, in every query; close_wait drops one
    /// (its time then arrives through add()).
    void open_wait(const OpenWait& o) override;
    void close_wait(int worker) override;
    void counted_to(Seconds boundary_s) override { counted_to_ = boundary_s; }
    Seconds counted_to() const { return counted_to_; }
    /// Open waits now.
    std::size_t open_waits() const { return open_run_.size(); }

    /// Rows of `by` over `p`, ordered by id; only ids with a count. Machine rows hold held time
    /// only (time not placed belongs to no machine). `visible` filters runs.
    std::vector<Row> query(By by, const Period& p, const RunFilter& visible = {}) const;
    /// Rows by run of the held time on machine `machine` over `p` (a machine's page), ordered
    /// by run: one pass over the rows, as query().
    std::vector<Row> query_on_machine(int machine, const Period& p, const RunFilter& visible = {}) const;
    /// The last `weeks` complete ISO weeks plus the current one (oldest first), each a query
    /// over its week. Requires 0 <= weeks <= 56 (57 weeks stay within 400 days).
    Result<std::vector<WeekRows>> weekly(By by, Seconds now_s, int weeks,
                                         const RunFilter& visible = {}) const;
    /// A run's counts since it was submitted (every row it has).
    Counts run_total(int run) const;
    /// Sum of every row (the whole ledger).
    Counts total() const;
    /// Drops the rows of hours that began more than 400 days before now_s.
    void prune(Seconds now_s);
    int runs() const { return static_cast<int>(runs_.size()); }
    int workspace_of(int run) const { return runs_[run].workspace; }
    int pool_of(int run) const { return runs_[run].pool; }
    /// Stored rows (for memory figures).
    std::size_t row_count() const;

private:
    struct Entry {
        Seconds hour;
        int machine;
        Category category;
        bool held;
        GpuSeconds gpu_s;
    };
    struct RunRows {
        int workspace = -1;
        int pool = -1;
        std::vector<Entry> rows;
        std::vector<OpenWait> open;
    };
    int key(By by, int run, const Entry& e) const;
    /// Calls f(const Entry&) for each row of run r, then for each hour of its open waits.
    template <class F>
    void each(int r, F&& f) const;

    std::vector<RunRows> runs_;
    std::unordered_map<int, int> open_run_;  ///< worker -> run of each open wait
    Seconds counted_to_ = 0;
};

}  // namespace astraeus::goodput
