// Accuracy of the pending runs' forecast (service/forecast.hpp): a pool driven through the
// service's own round (service/round_adapter.hpp) by a workload, with a forecast of every pending
// run taken every --every seconds; each estimate is compared with the run's real next start.
// The runs end at their real run times; the forecast sees, by --limits:
//   exact  a time limit equal to the run time (an exact limit: the forecast's best case);
//   hour   the run time rounded up to a whole hour (a limit users set with a margin);
//   none   no limit (estimated: as long again as it ran so far, at least an hour).
// Workload: synthetic and seeded (--seed; four workspaces of weights 1, 1, 2, 1; Poisson
// arrivals at --load times the pool's capacity; gangs of 1-32 GPUs; run times exponential, mean
// 2 h, within [10 min, 24 h]) over --days, or --trace FILE (any format read_trace reads; its
// tenants, weight 1). Output: the estimates taken, the unknown ones (null), and over the known:
// median and p90 of |estimate - real start| in seconds and as a fraction of the real wait (real
// start - time of the forecast). Deterministic: same arguments, same output on stdout; the
// forecasts' wall time (in all, mean, max) goes to stderr. --budget: ForecastInput::work_budget.
// docs/evaluation.md, "Forecast accuracy".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "astraeus/policies/registry.hpp"
#include "astraeus/service/forecast.hpp"
#include "astraeus/service/round_adapter.hpp"
#include "astraeus/trace/read_trace.hpp"

using namespace astraeus;
using service::Decision;
using service::RoundAdapter;

namespace {

struct Args {
    int gpus = 64;
    double days = 14;
    double load = 1.2;
    Seconds lease = 900;
    Seconds every = 3600;
    std::string limits = "exact";
    std::string trace;
    unsigned seed = 1;
    long long budget = service::kForecastWorkBudget;
};

int usage() {
    std::fprintf(stderr,
                 "usage: astraeus_forecast_accuracy [--gpus N (multiple of 8, default 64)] [--days D (14)]\n"
                 "       [--load L (1.2)] [--lease S (900)] [--every S (3600)] [--limits exact|hour|none]\n"
                 "       [--seed N (1)] [--trace FILE] [--budget JOB_ROUNDS (4000000)]\n");
    return 2;
}

Workload synthetic(const Args& a) {
    Workload w;
    w.tenants = {{"ml", 1.0}, {"cv", 1.0}, {"nlp", 2.0}, {"rl", 1.0}};
    w.share_order = {0, 1, 2, 3};
    std::mt19937_64 rng(a.seed);
    auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0; };
    constexpr int kGangs[] = {1, 1, 2, 4, 4, 8, 8, 16, 32};
    const double mean_run = 7200, mean_gpus = 76.0 / 9.0;
    const double gap = mean_run * mean_gpus / (a.gpus * a.load);  // mean seconds between arrivals
    double t = 0;
    const double end = a.days * 86400;
    for (std::int64_t id = 0;; ++id) {
        t += -gap * std::log(uniform());
        if (t >= end) break;
        Job j;
        j.id = id;
        j.tenant = static_cast<int>(rng() % 4);
        j.gpus = std::min(a.gpus, kGangs[rng() % std::size(kGangs)]);
        j.submit_s = static_cast<Seconds>(t);
        j.duration_s = std::clamp<Seconds>(static_cast<Seconds>(-mean_run * std::log(uniform())), 600, 86400);
        w.jobs.push_back(j);
    }
    return w;
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t k = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
    return v[k];
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (i + 1 >= argc) return usage();
        const char* v = argv[++i];
        if (k == "--gpus") a.gpus = std::atoi(v);
        else if (k == "--days") a.days = std::atof(v);
        else if (k == "--load") a.load = std::atof(v);
        else if (k == "--lease") a.lease = std::atoll(v);
        else if (k == "--every") a.every = std::atoll(v);
        else if (k == "--limits") a.limits = v;
        else if (k == "--seed") a.seed = static_cast<unsigned>(std::atoi(v));
        else if (k == "--trace") a.trace = v;
        else if (k == "--budget") a.budget = std::atoll(v);
        else return usage();
    }
    if (a.gpus < 8 || a.gpus % 8 != 0 || a.every <= 0 || a.lease < 60 || a.budget < 0 ||
        (a.limits != "exact" && a.limits != "hour" && a.limits != "none"))
        return usage();
    Workload w;
    if (a.trace.empty()) {
        w = synthetic(a);
    } else {
        auto r = read_trace(a.trace, "auto");
        if (!r) {
            std::fprintf(stderr, "astraeus_forecast_accuracy: %s\n", r.error().message.c_str());
            return 1;
        }
        w = std::move(*r);
    }
    AstraeaOptions base;
    base.lease_s = a.lease;
    auto opt = policy_options("astraea", base);
    auto made = RoundAdapter::make(ClusterSpec::uniform(a.gpus / 8, 8), *opt, "consolidate");
    if (!made) return 1;
    RoundAdapter& ad = **made;
    ad.set_tenants(w.tenants);

    std::vector<Seconds> run_s, limit_s, lease_end;          // per adapter job
    std::set<std::pair<Seconds, int>> ends, leases;          // (time, job) of running jobs
    std::map<int, Seconds> end_of, lease_of;
    std::vector<std::vector<Seconds>> starts;                // per job: every start
    struct Estimate { int job; Seconds at, est; };
    std::vector<Estimate> estimates;
    auto untrack = [&](int j) {
        if (auto it = end_of.find(j); it != end_of.end()) { ends.erase({it->second, j}); end_of.erase(it); }
        if (auto it = lease_of.find(j); it != lease_of.end()) { leases.erase({it->second, j}); lease_of.erase(it); }
    };
    auto apply = [&](Seconds t) {
        for (const Decision& d : ad.round(t)) {
            untrack(d.job);
            if (d.kind != Decision::Kind::Start) continue;
            starts[d.job].push_back(t);
            const Seconds e = t + std::max<Seconds>(0, run_s[d.job] - ad.executed_s(d.job, t));
            ends.insert({e, d.job});
            end_of[d.job] = e;
            lease_end[d.job] = d.lease_end_s < kNoLeaseEnd ? d.lease_end_s : -1;
            if (lease_end[d.job] >= 0 && lease_end[d.job] < e) {
                leases.insert({lease_end[d.job], d.job});
                lease_of[d.job] = lease_end[d.job];
            }
        }
    };
    std::size_t forecasts = 0, forecast_max_jobs = 0;
    double forecast_s = 0, forecast_max_s = 0;
    std::size_t next_job = 0;
    Seconds t = w.jobs.empty() ? 0 : w.jobs.front().submit_s;
    Seconds next_forecast = t + a.every;
    const Seconds last_submit = w.jobs.empty() ? 0 : w.jobs.back().submit_s;
    for (;;) {
        Seconds next = kNoWake;
        if (next_job < w.jobs.size()) next = w.jobs[next_job].submit_s;
        if (!ends.empty()) next = std::min(next, ends.begin()->first);
        if (!leases.empty()) next = std::min(next, leases.begin()->first);
        if (const Seconds wk = ad.next_wake_s(); wk != kNoWake) next = std::min(next, wk);
        if (next_forecast <= last_submit) next = std::min(next, next_forecast);
        if (next == kNoWake) break;
        t = std::max(t, next);
        while (!ends.empty() && ends.begin()->first <= t) {
            const int j = ends.begin()->second;
            untrack(j);
            ad.remove(j, t);
        }
        while (!leases.empty() && leases.begin()->first <= t) {
            const int j = leases.begin()->second;
            untrack(j);
            ad.lease_end(j, t);
        }
        while (next_job < w.jobs.size() && w.jobs[next_job].submit_s <= t) {
            const Job& job = w.jobs[next_job++];
            auto j = ad.submit(job.tenant, std::min(job.gpus, a.gpus), job.submit_s, 0);
            if (!j) continue;
            const auto n = static_cast<std::size_t>(*j) + 1;
            run_s.resize(n, 0);
            limit_s.resize(n, 0);
            lease_end.resize(n, -1);
            starts.resize(n);
            run_s[*j] = job.duration_s;
            limit_s[*j] = a.limits == "exact" ? job.duration_s
                          : a.limits == "hour" ? (job.duration_s + 3599) / 3600 * 3600 : 0;
        }
        apply(t);
        if (t >= next_forecast) {
            service::ForecastInput in;
            in.now = t;
            in.work_s = [&](int j) { return limit_s[j]; };
            in.lease_end_s = [&](int j) { return lease_end[j]; };
            in.work_budget = a.budget;
            const auto t0 = std::chrono::steady_clock::now();
            const auto fc = service::forecast_pool(ad, in);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            forecasts += 1;
            forecast_s += s;
            if (s > forecast_max_s) {
                forecast_max_s = s;
                forecast_max_jobs = ad.pending_jobs().size() + ad.running_jobs().size();
            }
            for (const auto& f : fc) estimates.push_back({f.job, t, f.start_s});
            while (next_forecast <= t) next_forecast += a.every;
        }
    }
    std::vector<double> err, rel;
    std::size_t unknown = 0, never = 0;
    for (const Estimate& e : estimates) {
        const auto& s = starts[e.job];
        auto it = std::lower_bound(s.begin(), s.end(), e.at);
        if (it == s.end()) { ++never; continue; }
        if (e.est < 0) { ++unknown; continue; }
        const double d = std::fabs(static_cast<double>(e.est - *it));
        err.push_back(d);
        if (*it > e.at) rel.push_back(d / static_cast<double>(*it - e.at));
    }
    std::printf("jobs %zu, gpus %d, lease %lld s, forecast every %lld s, limits %s\n", w.jobs.size(), a.gpus,
                static_cast<long long>(a.lease), static_cast<long long>(a.every), a.limits.c_str());
    std::printf("estimates %zu: known %zu, unknown %zu, never started by the end %zu\n", estimates.size(),
                err.size(), unknown, never);
    std::printf("|estimate - start| s: median %.0f, p90 %.0f\n", quantile(err, 0.5), quantile(err, 0.9));
    std::printf("|estimate - start| / wait: median %.3f, p90 %.3f (%zu with a wait > 0)\n", quantile(rel, 0.5),
                quantile(rel, 0.9), rel.size());
    // Wall time: the one figure that varies from run to run (stderr keeps stdout deterministic).
    std::fprintf(stderr, "forecasts %zu (budget %lld job-rounds): wall %.3f s in all, mean %.4f s, max %.4f s (at %zu pending + running)\n",
                 forecasts, a.budget, forecast_s, forecasts ? forecast_s / static_cast<double>(forecasts) : 0.0,
                 forecast_max_s, forecast_max_jobs);
    return 0;
}
