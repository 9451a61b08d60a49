#include "astraeus/goodput/ledger.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <ranges>
#include <string>

namespace astraeus::goodput {

namespace {
constexpr std::array<std::string_view, 4> kByNames{"workspace", "run", "machine", "pool"};
}

Result<By> parse_by(std::string_view name) {
    for (std::size_t i = 0; i < kByNames.size(); ++i)
        if (kByNames[i] == name) return static_cast<By>(i);
    return fail("bad 'by': '" + std::string(name) +
                "' (expected workspace, run, machine or pool)");
}

std::string_view to_string(By by) { return kByNames[static_cast<int>(by)]; }

Result<Period> make_period(Seconds start_s, Seconds end_s) {
    if (start_s > end_s) return fail("the period's start is after its end");
    if (end_s - start_s > kRetention)
        return fail("the period is " + std::to_string((end_s - start_s + kDay - 1) / kDay) +
                    " days long; a period is at most 400 days");
    return Period{start_s, end_s};
}

void GoodputLedger::set_run(int run, int workspace, int pool) {
    if (run >= runs()) runs_.resize(static_cast<std::size_t>(run) + 1);
    RunRows& rr = runs_[run];
    if (rr.workspace == workspace && rr.pool == pool) return;
    const bool counted = !rr.rows.empty() || !rr.open.empty();
    if (rr.workspace != workspace) {
        if (rr.workspace >= 0) {
            auto& old = ws_runs_[rr.workspace];
            old.erase(std::lower_bound(old.begin(), old.end(), run));
            if (old.empty()) ws_runs_.erase(rr.workspace);
        }
        if (workspace >= 0) {
            auto& now = ws_runs_[workspace];
            now.insert(std::lower_bound(now.begin(), now.end(), run), run);
        }
    }
    rr.workspace = workspace;
    rr.pool = pool;
    if (counted) rebuild_index();  // (declared after its first count: not in the service)
}

const std::vector<int>& GoodputLedger::runs_of(int workspace) const {
    static const std::vector<int> none;
    const auto it = ws_runs_.find(workspace);
    return it == ws_runs_.end() ? none : it->second;
}

void GoodputLedger::index_row(int run, const Entry& e) {
    for (const By by : {By::Workspace, By::Machine, By::Pool}) {
        const int id = key(by, run, e);
        if (id >= 0) sums_[static_cast<int>(by)][id][e.hour].add(e.category, e.held, e.gpu_s);
    }
}

void GoodputLedger::index_open(const OpenWait& o, int sign) {
    for (const By by : {By::Workspace, By::Pool}) {
        const int id = by == By::Workspace ? runs_[o.run].workspace : runs_[o.run].pool;
        if (id < 0) continue;
        auto& groups = waits_[static_cast<int>(by)];
        auto& of_key = groups[id];
        WaitGroup& g = of_key[{o.from_s, o.category}];
        g.gpus += sign * GpuSeconds{o.gpus};
        g.waits += sign;
        if (g.waits == 0) of_key.erase({o.from_s, o.category});
        if (of_key.empty()) groups.erase(id);
    }
}

void GoodputLedger::rebuild_index() {
    for (auto& m : sums_) m.clear();
    for (auto& m : waits_) m.clear();
    for (int r = 0; r < runs(); ++r) {
        for (const Entry& e : runs_[r].rows) index_row(r, e);
        for (const OpenWait& o : runs_[r].open) index_open(o, +1);
    }
}

void GoodputLedger::add(const Delta& d) {
    if (d.run >= runs()) runs_.resize(static_cast<std::size_t>(d.run) + 1);
    auto& rows = runs_[d.run].rows;
    // Counts arrive in time order per run: the matching row is among the last few.
    const std::size_t look = std::min<std::size_t>(rows.size(), 8);
    for (std::size_t i = rows.size() - look; i < rows.size(); ++i) {
        Entry& e = rows[i];
        if (e.hour == d.hour && e.machine == d.machine && e.category == d.category &&
            e.held == d.held) {
            e.gpu_s += d.gpu_s;
            index_row(d.run, {d.hour, d.machine, d.category, d.held, d.gpu_s});
            return;
        }
    }
    rows.push_back({d.hour, d.machine, d.category, d.held, d.gpu_s});
    index_row(d.run, rows.back());
}

void GoodputLedger::open_wait(const OpenWait& o) {
    close_wait(o.worker);
    if (o.run >= runs()) runs_.resize(static_cast<std::size_t>(o.run) + 1);
    runs_[o.run].open.push_back(o);
    open_run_[o.worker] = o.run;
    index_open(o, +1);
}

void GoodputLedger::close_wait(int worker) {
    const auto it = open_run_.find(worker);
    if (it == open_run_.end()) return;
    for (const OpenWait& o : runs_[it->second].open)
        if (o.worker == worker) index_open(o, -1);
    std::erase_if(runs_[it->second].open, [&](const OpenWait& o) { return o.worker == worker; });
    open_run_.erase(it);
}

template <class F>
void GoodputLedger::each(int r, F&& f) const {
    const RunRows& rr = runs_[r];
    for (const Entry& e : rr.rows) f(e);
    for (const OpenWait& o : rr.open)
        for (Seconds h = hour_start(o.from_s); h < counted_to_; h += kHour) {
            const Seconds secs = std::min(counted_to_, h + kHour) - std::max(o.from_s, h);
            if (secs > 0) f(Entry{h, -1, o.category, false, GpuSeconds{o.gpus} * secs});
        }
}

template <class F>
void GoodputLedger::each_open_hour(Seconds from_s, GpuSeconds gpus, Seconds from_hour, Seconds end_s,
                                   F&& f) const {
    // As each(): the hours of [hour_start(from_s), counted_to_), those in [from_hour, end_s).
    for (Seconds h = std::max(hour_start(from_s), from_hour); h < counted_to_ && h < end_s; h += kHour) {
        const Seconds secs = std::min(counted_to_, h + kHour) - std::max(from_s, h);
        if (secs > 0) f(h, gpus * secs);
    }
}

int GoodputLedger::key(By by, int run, const Entry& e) const {
    switch (by) {
        case By::Workspace: return runs_[run].workspace;
        case By::Run: return run;
        case By::Machine: return e.held ? e.machine : -1;
        case By::Pool: return runs_[run].pool;
    }
    return -1;
}

void GoodputLedger::indexed_rows(By by, const Period& p, int only, std::map<int, Counts>& acc) const {
    const Seconds from = hour_start(p.start_s);
    const auto sum_key = [&](int id, const std::map<Seconds, Counts>& hours) {
        for (auto it = hours.lower_bound(from); it != hours.end() && it->first < p.end_s; ++it)
            acc[id] += it->second;
    };
    const auto& sums = sums_[static_cast<int>(by)];
    if (only < 0) {
        for (const auto& [id, hours] : sums) sum_key(id, hours);
    } else if (const auto it = sums.find(only); it != sums.end()) {
        sum_key(only, it->second);
    }
    const auto wait_key = [&](int id, const std::map<std::pair<Seconds, Category>, WaitGroup>& groups) {
        for (const auto& [start, g] : groups)
            each_open_hour(start.first, g.gpus, from, p.end_s,
                           [&](Seconds, GpuSeconds gpu_s) { acc[id].add(start.second, false, gpu_s); });
    };
    const auto& waits = waits_[static_cast<int>(by)];  // (empty by machine: waits hold none)
    if (only < 0) {
        for (const auto& [id, groups] : waits) wait_key(id, groups);
    } else if (const auto it = waits.find(only); it != waits.end()) {
        wait_key(only, it->second);
    }
}

template <class Runs>
std::vector<Row> GoodputLedger::scan(By by, const Period& p, Runs&& runs) const {
    std::map<int, Counts> acc;
    const Seconds from = hour_start(p.start_s);
    for (const int r : runs)
        each(r, [&](const Entry& e) {
            if (e.hour < from || e.hour >= p.end_s) return;
            const int id = key(by, r, e);
            if (id < 0) return;
            acc[id].add(e.category, e.held, e.gpu_s);
        });
    std::vector<Row> out;
    out.reserve(acc.size());
    for (auto& [id, c] : acc) out.push_back({id, c});
    return out;
}

std::vector<Row> GoodputLedger::query(By by, const Period& p, int workspace) const {
    if (by != By::Run && (workspace == kAllWorkspaces || by == By::Workspace)) {
        std::map<int, Counts> acc;
        indexed_rows(by, p, workspace, acc);
        std::vector<Row> out;
        out.reserve(acc.size());
        for (auto& [id, c] : acc) out.push_back({id, c});
        return out;
    }
    if (workspace == kAllWorkspaces) return scan(by, p, std::views::iota(0, runs()));
    return scan(by, p, runs_of(workspace));
}

std::vector<Row> GoodputLedger::query(By by, const Period& p, const RunFilter& visible) const {
    if (!visible) return query(by, p, kAllWorkspaces);
    return scan(by, p, std::views::iota(0, runs()) | std::views::filter([&](int r) { return visible(r); }));
}

template <class Runs>
std::vector<Row> GoodputLedger::machine_scan(int machine, const Period& p, Runs&& runs) const {
    std::vector<Row> out;
    const Seconds from = hour_start(p.start_s);
    for (const int r : runs) {
        Counts c;
        bool any = false;
        each(r, [&](const Entry& e) {
            if (e.machine != machine || e.hour < from || e.hour >= p.end_s) return;
            c.add(e.category, e.held, e.gpu_s);
            any = true;
        });
        if (any) out.push_back({r, c});
    }
    return out;
}

std::vector<Row> GoodputLedger::query_on_machine(int machine, const Period& p, int workspace) const {
    if (workspace == kAllWorkspaces) return machine_scan(machine, p, std::views::iota(0, runs()));
    return machine_scan(machine, p, runs_of(workspace));
}

std::vector<Row> GoodputLedger::query_on_machine(int machine, const Period& p,
                                                 const RunFilter& visible) const {
    if (!visible) return machine_scan(machine, p, std::views::iota(0, runs()));
    return machine_scan(machine, p,
                        std::views::iota(0, runs()) | std::views::filter([&](int r) { return visible(r); }));
}

namespace {

/// The last `weeks` complete ISO weeks plus the current one, oldest first, each week's rows from
/// `rows_of(period)`. Errors: weeks outside 0..56.
template <class F>
Result<std::vector<WeekRows>> weeks_back(Seconds now_s, int weeks, F&& rows_of) {
    if (weeks < 0 || weeks > 56)
        return fail("weeks must be 0..56 (the last N complete weeks and the current one stay "
                    "within 400 days), got " + std::to_string(weeks));
    std::vector<WeekRows> out;
    const Seconds current = week_start(now_s);
    for (int k = weeks; k >= 0; --k) {
        const Seconds ws = current - k * kWeek;
        out.push_back({ws, rows_of(Period{ws, ws + kWeek})});
    }
    return out;
}

}  // namespace

Result<std::vector<WeekRows>> GoodputLedger::weekly(By by, Seconds now_s, int weeks,
                                                    const RunFilter& visible) const {
    return weeks_back(now_s, weeks, [&](const Period& p) { return query(by, p, visible); });
}

Result<std::vector<WeekRows>> GoodputLedger::weekly(By by, Seconds now_s, int weeks, int workspace) const {
    return weeks_back(now_s, weeks, [&](const Period& p) { return query(by, p, workspace); });
}

Counts GoodputLedger::run_total(int run) const {
    Counts c;
    if (run < 0 || run >= runs()) return c;
    each(run, [&](const Entry& e) { c.add(e.category, e.held, e.gpu_s); });
    return c;
}

Counts GoodputLedger::total() const {
    Counts c;
    for (int r = 0; r < runs(); ++r) c += run_total(r);
    return c;
}

void GoodputLedger::prune(Seconds now_s) {
    const Seconds keep_from = hour_start(now_s - kRetention);
    for (auto& r : runs_)
        std::erase_if(r.rows, [&](const Entry& e) { return e.hour < keep_from; });
    for (auto& sums : sums_)
        for (auto it = sums.begin(); it != sums.end();) {
            it->second.erase(it->second.begin(), it->second.lower_bound(keep_from));
            it = it->second.empty() ? sums.erase(it) : std::next(it);
        }
}

std::size_t GoodputLedger::row_count() const {
    std::size_t n = 0;
    for (const auto& r : runs_) n += r.rows.size();
    return n;
}

}  // namespace astraeus::goodput
