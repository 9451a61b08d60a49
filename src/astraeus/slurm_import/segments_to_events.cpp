#include "astraeus/slurm_import/segments_to_events.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "astraeus/goodput_io/rfc3339.hpp"

namespace astraeus::slurm {
namespace {

using nlohmann::json;

struct Line {
    Seconds t;
    std::string text;
};

bool failed_state(const std::string& s) {
    return s == "NODE_FAIL" || s == "FAILED" || s == "BOOT_FAIL" || s == "OUT_OF_MEMORY";
}

std::string at(Seconds t) { return goodput::format_rfc3339(t); }

// The allocation's GPUs by node: as even as possible, the first nodes take the remainder.
json parts_of(const Segment& s) {
    json parts = json::array();
    const auto n = static_cast<std::int64_t>(s.nodes.size());
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t g = s.gpus / n + (i < s.gpus % n ? 1 : 0);
        if (g > 0) parts.push_back({{"machine", s.nodes[static_cast<std::size_t>(i)]}, {"gpus", g}});
    }
    return parts;
}

}  // namespace

Result<ImportedLog> segments_to_events(std::vector<Segment> segments) {
    ImportedLog out;
    // Jobs in order of first appearance; each job's segments in record order.
    std::vector<std::string> order;
    std::map<std::string, std::vector<Segment>> by_job;
    for (auto& s : segments) {
        auto [it, fresh] = by_job.try_emplace(s.job);
        if (fresh) order.push_back(s.job);
        it->second.push_back(std::move(s));
    }
    // Canonical order (so that --json and --parsable2 of the same jobs give the same output):
    // by first Submit, then by job id (numerically when both are numbers, else as text).
    std::map<std::string, Seconds> first_submit;
    for (const auto& [job, segs] : by_job) {
        Seconds t = segs.front().submit_s;
        for (const auto& s : segs) t = std::min(t, s.submit_s);
        first_submit[job] = t;
    }
    std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
        if (first_submit[a] != first_submit[b]) return first_submit[a] < first_submit[b];
        if (a.size() != b.size() && a.find_first_not_of("0123456789") == std::string::npos &&
            b.find_first_not_of("0123456789") == std::string::npos)
            return a.size() < b.size();
        return a < b;
    });
    std::vector<Line> lines;
    auto emit = [&](Seconds t, json j) {
        j["t"] = t;
        lines.push_back({t, j.dump()});
    };
    for (const std::string& job : order) {
        auto& segs = by_job[job];
        std::stable_sort(segs.begin(), segs.end(), [](const Segment& a, const Segment& b) {
            if (a.start_s.has_value() != b.start_s.has_value()) return a.start_s.has_value();
            if (a.start_s && *a.start_s != *b.start_s) return *a.start_s < *b.start_s;
            return a.submit_s < b.submit_s;
        });
        for (const auto& s : segs) {
            for (const std::optional<Seconds>& t : {std::optional<Seconds>(s.submit_s), s.start_s, s.end_s})
                if (t) out.last_s = std::max(out.last_s.value_or(*t), *t);
        }
        std::int64_t run_gpus = 0;
        for (const auto& s : segs)
            if (run_gpus == 0 && s.gpus > 0) run_gpus = s.gpus;
        for (const auto& s : segs)
            if (run_gpus == 0 && s.requested_gpus > 0) run_gpus = s.requested_gpus;
        if (run_gpus == 0) {
            ++out.jobs_without_gpus;
            continue;
        }
        auto& held = out.held[job];
        ++out.jobs;
        out.segments += static_cast<int>(segs.size());
        const Segment& first = segs.front();
        auto err = [&](const Segment& s, const std::string& m) {
            return fail(s.where + ": job " + job + ": " + m);
        };
        if (first.account.empty()) return err(first, "no account (the workspace)");
        if (first.partition.empty()) return err(first, "no partition (the pool)");
        emit(first.submit_s, {{"event", "submit"}, {"run", job}, {"workspace", first.account},
                              {"pool", first.partition}, {"workers", 1}, {"gpus", run_gpus}});
        Seconds prev = first.submit_s;
        bool uneven_noted = false;
        bool ended = false;
        for (std::size_t k = 0; k < segs.size(); ++k) {
            const Segment& s = segs[k];
            const bool last = k + 1 == segs.size();
            // Slurm records Start = End and no nodes for a job cancelled while pending: it never ran.
            if (!s.start_s || s.gpus == 0 || s.nodes.empty()) {
                if (s.start_s && !s.nodes.empty())
                    out.notes.push_back("job " + job + ": a segment started at " + at(*s.start_s) +
                                        " without GPUs in its allocated TRES: counted as waiting");
                if (last && s.end_s) {
                    if (*s.end_s < prev)
                        return err(s, "End " + at(*s.end_s) + " is before the previous event " + at(prev));
                    emit(*s.end_s, {{"event", "end"}, {"run", job}});
                    ended = true;
                }
                continue;
            }
            if (*s.start_s < prev)
                return err(s, "Start " + at(*s.start_s) + " is before " +
                                  (k == 0 ? "its Submit " : "the previous segment's End ") + at(prev));
            if (s.end_s && *s.end_s < *s.start_s)
                return err(s, "End " + at(*s.end_s) + " is before Start " + at(*s.start_s));
            if (s.gpus % static_cast<std::int64_t>(s.nodes.size()) != 0 && !uneven_noted)
                out.notes.push_back("job " + job + ": " + std::to_string(s.gpus) + " GPUs on " +
                                    std::to_string(s.nodes.size()) +
                                    " nodes, split as evenly as possible by machine (sacct gives "
                                    "the total, not each node's share)");
            uneven_noted = uneven_noted || s.gpus % static_cast<std::int64_t>(s.nodes.size()) != 0;
            emit(*s.start_s, {{"event", "place"}, {"run", job}, {"parts", parts_of(s)}});
            held.push_back({s.gpus, *s.start_s, s.end_s});
            emit(*s.start_s, {{"event", "start"}, {"run", job}});
            prev = *s.start_s;
            if (!s.end_s) {
                if (!last) return err(s, "a segment without End is followed by another segment");
                break;  // still running: counted up to the end of the records
            }
            prev = *s.end_s;
            if (last) {
                emit(*s.end_s, {{"event", "end"}, {"run", job}});
                ended = true;
            } else if (failed_state(s.state)) {
                emit(*s.end_s, {{"event", "fail"}, {"run", job}});
                emit(*s.end_s, {{"event", "release"}, {"run", job}});
            } else {
                emit(*s.end_s, {{"event", "stop"}, {"run", job}, {"reason", "preemption"}});
                emit(*s.end_s, {{"event", "release"}, {"run", job}});
            }
        }
        if (!ended) ++out.jobs_still_going;
    }
    std::stable_sort(lines.begin(), lines.end(),
                     [](const Line& a, const Line& b) { return a.t < b.t; });
    for (const auto& l : lines) out.events += l.text + "\n";
    return out;
}

GpuSeconds slurm_allocated_gpu_seconds(const std::vector<ImportedLog::Held>& held, Seconds end_s) {
    GpuSeconds sum = 0;
    for (const auto& h : held) {
        const Seconds to = std::min(h.end_s.value_or(end_s), end_s);
        if (to > h.start_s) sum += h.gpus * (to - h.start_s);
    }
    return sum;
}

}  // namespace astraeus::slurm
