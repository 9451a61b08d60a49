// The hourly goodput ledgers (spec/goodput.md, "Ledgers"): rows keyed by (UTC hour, category,
// held or not) for each run, the machine its GPUs were on, its pool and its workspace, and the
// queries the REST API, the CLI and the simulator's report answer. Rows are kept per (run,
// machine) so that every view (and a workspace's own view of machines and pools) is a sum over
// them. Ids are the caller's (dense small integers); names belong to the shell.
// Thread safety: not thread-safe.
#pragma once
#include <array>
#include <functional>
#include <map>
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
/// A workspace argument meaning every workspace.
inline constexpr int kAllWorkspaces = -1;

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
    /// only (time not placed belongs to no machine). `visible` filters runs: with a filter,
    /// one pass over every run's rows and open waits; without, the indexed query below.
    std::vector<Row> query(By by, const Period& p, const RunFilter& visible = {}) const;
    /// The same rows for the runs of `workspace` only (kAllWorkspaces: every run), from the
    /// indexes: by workspace, pool or machine over every run, the sums per key and hour plus the
    /// open waits grouped by (start, category), O(keys x hours + distinct wait starts x hours);
    /// for one workspace, a pass over its own runs (its own sums for by=workspace). By run over
    /// every run: one pass over the runs.
    std::vector<Row> query(By by, const Period& p, int workspace) const;
    /// Rows by run of the held time on machine `machine` over `p` (a machine's page), ordered
    /// by run: one pass over the rows, as query().
    std::vector<Row> query_on_machine(int machine, const Period& p, const RunFilter& visible = {}) const;
    /// The same over the runs of `workspace` only (kAllWorkspaces: every run).
    std::vector<Row> query_on_machine(int machine, const Period& p, int workspace) const;
    /// The last `weeks` complete ISO weeks plus the current one (oldest first), each a query
    /// over its week. Requires 0 <= weeks <= 56 (57 weeks stay within 400 days).
    Result<std::vector<WeekRows>> weekly(By by, Seconds now_s, int weeks,
                                         const RunFilter& visible = {}) const;
    /// The same, each week an indexed query over `workspace` (kAllWorkspaces: every run).
    Result<std::vector<WeekRows>> weekly(By by, Seconds now_s, int weeks, int workspace) const;
    /// A run's counts since it was submitted (every row it has).
    Counts run_total(int run) const;
    /// Sum of every row (the whole ledger).
    Counts total() const;
    /// Drops the rows of hours that began more than 400 days before now_s.
    void prune(Seconds now_s);
    int runs() const { return static_cast<int>(runs_.size()); }
    int workspace_of(int run) const { return runs_[run].workspace; }
    /// The runs declared in `workspace` (set_run), ascending.
    const std::vector<int>& runs_of(int workspace) const;
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
    /// Calls f(hour, category, gpu_s) for each hour of [from_hour, end_s) of an open wait of
    /// `gpus` GPUs from `from_s` (as each() does for one wait; gpus may be a sum of waits).
    template <class F>
    void each_open_hour(Seconds from_s, GpuSeconds gpus, Seconds from_hour, Seconds end_s, F&& f) const;
    /// The keys (by workspace, machine, pool) of run `run`'s row `e` and of its open waits.
    void index_row(int run, const Entry& e);
    void index_open(const OpenWait& o, int sign);
    /// Rebuilds the sums and wait groups from the runs (a run moved to another workspace or pool).
    void rebuild_index();
    /// The indexed rows of `by` (workspace, machine or pool) for every key, or for key `only`.
    void indexed_rows(By by, const Period& p, int only, std::map<int, Counts>& acc) const;
    /// A pass over the runs `runs`.
    template <class Runs>
    std::vector<Row> scan(By by, const Period& p, Runs&& runs) const;
    /// query_on_machine's pass over the runs `runs`: a row per run with entries on `machine`.
    template <class Runs>
    std::vector<Row> machine_scan(int machine, const Period& p, Runs&& runs) const;

    std::vector<RunRows> runs_;
    std::unordered_map<int, int> open_run_;  ///< worker -> run of each open wait
    Seconds counted_to_ = 0;
    /// The indexes (kept in step by set_run, add, open_wait, close_wait and prune):
    /// workspace -> its runs, ascending;
    std::map<int, std::vector<int>> ws_runs_;
    /// by (workspace, machine, pool; Run unused) -> key -> hour -> the sum of its rows;
    std::array<std::map<int, std::map<Seconds, Counts>>, 4> sums_;
    /// by (workspace, pool) -> key -> (start, category) -> (GPUs, waits) of its open waits.
    struct WaitGroup {
        GpuSeconds gpus = 0;
        int waits = 0;
    };
    std::array<std::map<int, std::map<std::pair<Seconds, Category>, WaitGroup>>, 4> waits_;
};

}  // namespace astraeus::goodput
