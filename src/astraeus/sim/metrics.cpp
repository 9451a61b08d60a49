#include "astraeus/sim/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace astraeus {

double percentile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return percentile_of_sorted(v, q);
}

double percentile_of_sorted(const std::vector<double>& v, double q) {
    if (v.empty()) return 0;
    const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double jain_index(const std::vector<double>& x) {
    double s = 0, s2 = 0;
    for (double v : x) {
        s += v;
        s2 += v * v;
    }
    return s2 == 0 ? 1.0 : s * s / (static_cast<double>(x.size()) * s2);
}

namespace {

Distribution distribution(const std::vector<double>& v) {
    Distribution d;
    if (v.empty()) return d;
    double sum = 0;
    for (double x : v) sum += x;
    d.mean = sum / static_cast<double>(v.size());
    std::vector<double> sorted = v;  // one sort for every percentile
    std::sort(sorted.begin(), sorted.end());
    d.p50 = percentile_of_sorted(sorted, 50);
    d.p95 = percentile_of_sorted(sorted, 95);
    d.p99 = percentile_of_sorted(sorted, 99);
    d.min = sorted.front();
    d.max = sorted.back();
    return d;
}

}  // namespace

Summary summarize(const Workload& w, const SimResult& r, int total_gpus) {
    Summary s;
    s.jobs_total = w.jobs.size();
    std::vector<double> jct, delay, longest, fj;
    Seconds first_submit = std::numeric_limits<Seconds>::max();
    std::vector<char> has_jobs(w.tenants.size(), 0);
    for (std::size_t j = 0; j < w.jobs.size(); ++j) {
        const RunState& run = r.runs[j];
        if (run.status == RunStatus::Dropped) {
            ++s.jobs_dropped;
            continue;
        }
        ++s.jobs_admitted;
        has_jobs[w.jobs[j].tenant] = 1;
        first_submit = std::min(first_submit, w.jobs[j].submit_s);
        s.preemptions += run.preemptions;
        s.lease_expiries += run.lease_expiries;
        s.checkpoints += run.checkpoints;
        s.resumes += run.resumes;
        if (run.status != RunStatus::Done) continue;
        ++s.jobs_done;
        jct.push_back(static_cast<double>(run.end_s - w.jobs[j].submit_s));
        delay.push_back(static_cast<double>(run.first_start_s - w.jobs[j].submit_s));
        longest.push_back(static_cast<double>(run.longest_wait_s));
        if (run.deserved_gpu_s > 0) {
            fj.push_back(run.fairness);
        } else {
            ++s.jobs_without_fairness;
        }
    }
    s.jct_s = distribution(jct);
    s.queueing_delay_s = distribution(delay);
    s.longest_wait_s = distribution(longest);
    if (s.jobs_admitted > 0) {
        s.makespan_s = r.end_s - first_submit;
        if (s.makespan_s > 0)
            s.gpu_utilization = static_cast<double>(r.busy_gpu_s) /
                                (static_cast<double>(total_gpus) * static_cast<double>(s.makespan_s));
    }
    if (!fj.empty()) {
        std::size_t fair = 0, loss = 0, benefit = 0;
        for (double f : fj) {
            if (f < 0.95) ++loss;
            else if (f > 1 / 0.95) ++benefit;
            else ++fair;
        }
        const double n = static_cast<double>(fj.size());
        s.share_fair = static_cast<double>(fair) / n;
        s.share_loss = static_cast<double>(loss) / n;
        s.share_benefit = static_cast<double>(benefit) / n;
        s.fj_min = *std::min_element(fj.begin(), fj.end());
        s.fj_max = *std::max_element(fj.begin(), fj.end());
        std::vector<double> sorted = fj;  // fj keeps its order for Jain's sums
        std::sort(sorted.begin(), sorted.end());
        s.fj_p5 = percentile_of_sorted(sorted, 5);
        s.fj_median = percentile_of_sorted(sorted, 50);
        s.fj_jain = jain_index(fj);
    }
    std::vector<double> fu;
    for (std::size_t u = 0; u < w.tenants.size(); ++u)
        if (has_jobs[u] && !std::isnan(r.tenant_fairness[u])) fu.push_back(r.tenant_fairness[u]);
    if (!fu.empty()) {
        double lo = fu[0], hi = fu[0];
        for (double f : fu) {
            s.fu_max_dev = std::max(s.fu_max_dev, std::abs(f - 1));
            lo = std::min(lo, f);
            hi = std::max(hi, f);
        }
        s.fu_max_over_min = lo > 0 ? hi / lo : std::numeric_limits<double>::infinity();
        s.fu_min = lo;
        s.fu_max_shortfall = std::max(0.0, 1.0 - lo);
        s.fu_jain = jain_index(fu);
        s.fu_worst_over_time = lo;
        for (const TenantSample& t : r.tenant_series)
            if (has_jobs[t.tenant]) s.fu_worst_over_time = std::min(s.fu_worst_over_time, t.fairness);
    }
    return s;
}

}  // namespace astraeus
