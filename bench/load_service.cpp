// A bounded load client for a live `astraeus serve` (loopback only): submits runs at a steady
// rate, then issues goodput queries at a steady rate, and prints p50/p99 latencies per kind.
// Open loop: request i is due at t0 + i / rate, and its latency is measured from when it was
// due (so a slow server is not hidden by a client that waits for it). Requests go through the
// `astra` client's transport (client/http_transport.hpp: one connection per request).
// Driven by bench/load_service.sh, which starts the server on a 1,000-GPU simulated cluster.
// `--flood N`: instead, the first workspace submits N runs as fast as `--threads` clients can
// (closed loop) while the second workspace's calls go on at `--query-rate`; prints both sides'
// latencies (issue 18: another workspace's p99 under a flood of pending runs).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "astraeus/client/api_client.hpp"
#include "astraeus/client/http_transport.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using astraeus::client::HttpRequest;

struct Sample {
    std::string kind;
    double ms = 0;
    bool ok = false;
};

struct Request {
    std::string kind, method, target, body;
    int expect = 200;
};

// Sends `reqs` at `rate` per second from `threads` threads; latencies from the due time.
std::vector<Sample> run_open_loop(const std::vector<Request>& reqs, double rate, int threads,
                                  const std::string& origin, const std::string& token) {
    std::vector<Sample> out(reqs.size());
    std::atomic<std::size_t> next{0};
    const auto t0 = Clock::now() + std::chrono::milliseconds(50);
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
        pool.emplace_back([&] {
            for (std::size_t i = next++; i < reqs.size(); i = next++) {
                const auto due = t0 + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(static_cast<double>(i) / rate));
                std::this_thread::sleep_until(due);
                HttpRequest h;
                h.method = reqs[i].method;
                h.origin = origin;
                h.target = reqs[i].target;
                h.bearer_token = token;
                h.body = reqs[i].body;
                const auto res = astraeus::client::http_send(h);
                const double ms =
                    std::chrono::duration<double, std::milli>(Clock::now() - due).count();
                out[i] = {reqs[i].kind, ms, res && res->status == reqs[i].expect};
            }
        });
    for (auto& t : pool) t.join();
    return out;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto idx = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(idx, v.size() - 1)];
}

void report(const std::vector<Sample>& samples, const std::vector<std::string>& kinds,
            double rate, double wall_s) {
    for (const auto& kind : kinds) {
        std::vector<double> ms;
        int errors = 0;
        for (const auto& s : samples) {
            if (s.kind != kind) continue;
            if (s.ok) ms.push_back(s.ms);
            else ++errors;
        }
        fmt::print("{:<28} {:>6} {:>6} {:>9.2f} {:>9.2f} {:>9.2f}\n", kind, ms.size(), errors,
                   percentile(ms, 0.50), percentile(ms, 0.99),
                   ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()));
    }
    fmt::print("  ({} requests at {:g}/s offered, {:.1f} s wall)\n", samples.size(), rate, wall_s);
}

}  // namespace

// The flood: `runs` submissions of workspace `flooder` back to back from `threads` threads,
// while one thread sends `other`'s calls at `rate` until the flood ends. Returns the errors.
int flood(const astraeus::client::ApiLocation& loc, const std::string& token,
          const std::string& flooder, const std::string& other, int runs, int threads,
          double rate) {
    const std::string b = loc.base_path;
    std::vector<Sample> sub(static_cast<std::size_t>(runs));
    std::atomic<int> next{0};
    std::atomic<bool> done{false};
    std::vector<Sample> calls;
    const std::vector<Request> kinds{
        {"other: GET /whoami", "GET", b + "/whoami", "", 200},
        {"other: GET /runs limit=100", "GET", b + "/runs?limit=100&workspace=" + other, "", 200},
        {"other: GET /goodput by=workspace", "GET", b + "/goodput?by=workspace&days=7", "", 200},
        {"other: POST /runs", "POST", b + "/runs", "", 201},
    };
    const auto send = [&](const Request& r) {
        HttpRequest h;
        h.method = r.method;
        h.origin = loc.origin;
        h.target = r.target;
        h.bearer_token = token;
        h.body = r.body;
        return astraeus::client::http_send(h);
    };
    const auto t0 = Clock::now();
    std::thread caller([&] {
        for (int i = 0; !done; ++i) {
            const auto due = t0 + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(i / rate));
            std::this_thread::sleep_until(due);
            Request r = kinds[static_cast<std::size_t>(i) % kinds.size()];
            if (r.method == "POST")
                r.body = nlohmann::json{{"name", fmt::format("other-{:05}", i)},
                                        {"workspace", other},
                                        {"sim_duration_s", 600}}
                             .dump();
            const auto res = send(r);
            calls.push_back({r.kind,
                             std::chrono::duration<double, std::milli>(Clock::now() - due).count(),
                             res && res->status == r.expect});
        }
    });
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
        pool.emplace_back([&] {
            for (int i = next++; i < runs; i = next++) {
                Request r{"flood: POST /runs", "POST", b + "/runs",
                          nlohmann::json{{"name", fmt::format("flood-{:06}", i)},
                                         {"workspace", flooder},
                                         {"workers", 1 + i % 2},
                                         {"gpus_per_worker", 8},
                                         {"sim_duration_s", 3600}}
                              .dump(),
                          201};
                const auto at = Clock::now();
                const auto res = send(r);
                sub[static_cast<std::size_t>(i)] = {
                    r.kind, std::chrono::duration<double, std::milli>(Clock::now() - at).count(),
                    res && res->status == 201};
            }
        });
    for (auto& t : pool) t.join();
    done = true;
    caller.join();
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    fmt::print("{:<28} {:>6} {:>6} {:>9} {:>9} {:>9}\n", "request", "ok", "errors", "p50 ms",
               "p99 ms", "max ms");
    report(sub, {"flood: POST /runs"}, runs / wall, wall);
    std::vector<std::string> names;
    for (const auto& k : kinds) names.push_back(k.kind);
    report(calls, names, rate, wall);
    int errors = 0;
    for (const auto& s : sub) errors += !s.ok;
    for (const auto& s : calls) errors += !s.ok;
    return errors;
}

int main(int argc, char** argv) {
    CLI::App app{"Load client for a live astraeus serve (loopback): steady-rate submissions, "
                 "then steady-rate goodput queries; p50/p99 latencies per kind."};
    std::string api, token;
    std::vector<std::string> workspaces{"ml"};
    int runs = 1000, threads = 8, query_seconds = 20, seed = 1;
    double submit_rate = 100, query_rate = 50;
    app.add_option("--api", api, "the API base URL, http://127.0.0.1:PORT/v1")->required();
    app.add_option("--token", token, "an org-admin token")->required();
    app.add_option("--workspaces", workspaces, "workspaces to spread the runs over")->delimiter(',');
    app.add_option("--runs", runs, "runs to submit (default 1000)");
    app.add_option("--submit-rate", submit_rate, "submissions per second (default 100)");
    app.add_option("--query-rate", query_rate, "goodput queries per second (default 50)");
    app.add_option("--query-seconds", query_seconds, "how long to query (default 20 s)");
    app.add_option("--threads", threads, "client threads (default 8)");
    app.add_option("--seed", seed, "seed of the run shapes (default 1)");
    int flood_runs = 0;
    app.add_option("--flood", flood_runs,
                   "instead: the first workspace submits this many runs back to back while the "
                   "second's calls go on at --query-rate (needs two workspaces)");
    CLI11_PARSE(app, argc, argv);
    auto loc = astraeus::client::parse_api_url(api);
    if (!loc) {
        fmt::print(stderr, "{}\n", loc.error().message);
        return 2;
    }
    if (loc->origin.find("://127.0.0.1:") == std::string::npos &&
        loc->origin.find("://localhost:") == std::string::npos) {
        fmt::print(stderr, "load_service: loopback servers only (127.0.0.1 or localhost)\n");
        return 2;
    }
    if (flood_runs > 0) {
        if (workspaces.size() < 2) {
            fmt::print(stderr, "load_service: --flood needs two workspaces (--workspaces a,b)\n");
            return 2;
        }
        return flood(*loc, token, workspaces[0], workspaces[1], flood_runs, threads, query_rate) == 0
                   ? 0
                   : 1;
    }

    // Runs: gangs of 1-4 workers x 1-8 GPUs, 10 min - 2 h of simulated work; many more GPUs are
    // asked for than the cluster has, so the scheduler keeps a queue.
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    const int shapes[][2] = {{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 8}, {4, 8}, {2, 4}, {4, 4}};
    std::vector<Request> submits;
    long long gpus_asked = 0;
    for (int i = 0; i < runs; ++i) {
        const auto& sh = shapes[rng() % std::size(shapes)];
        gpus_asked += sh[0] * sh[1];
        nlohmann::json body{{"name", fmt::format("load-{:04}", i)},
                            {"workspace", workspaces[static_cast<std::size_t>(i) % workspaces.size()]},
                            {"workers", sh[0]},
                            {"gpus_per_worker", sh[1]},
                            {"sim_duration_s", 600 + static_cast<int>(rng() % 6600)}};
        submits.push_back({"POST /runs", "POST", loc->base_path + "/runs", body.dump(), 201});
    }
    fmt::print("{:<28} {:>6} {:>6} {:>9} {:>9} {:>9}\n", "request", "ok", "errors", "p50 ms",
               "p99 ms", "max ms");
    auto t = Clock::now();
    const auto sub = run_open_loop(submits, submit_rate, threads, loc->origin, token);
    report(sub, {"POST /runs"}, submit_rate,
           std::chrono::duration<double>(Clock::now() - t).count());
    fmt::print("  ({} GPUs asked for in all)\n", gpus_asked);

    // Goodput queries, in a fixed rotation.
    const std::string b = loc->base_path;
    const std::vector<Request> kinds{
        {"GET /goodput?by=run", "GET", b + "/goodput?by=run&days=7", "", 200},
        {"GET /goodput?by=machine", "GET", b + "/goodput?by=machine&days=7", "", 200},
        {"GET /goodput/weekly by=pool", "GET", b + "/goodput/weekly?weeks=8&by=pool", "", 200},
        {"GET /runs/{run}/goodput", "GET", "", "", 200},
        {"GET /goodput/metrics", "GET", b + "/goodput/metrics", "", 200},
    };
    std::vector<Request> queries;
    const int n = static_cast<int>(query_rate * query_seconds);
    for (int i = 0; i < n; ++i) {
        Request r = kinds[static_cast<std::size_t>(i) % kinds.size()];
        if (r.target.empty())
            r.target = fmt::format("{}/runs/load-{:04}/goodput?workspace={}", b,
                                   (i * 7919) % runs,
                                   workspaces[static_cast<std::size_t>((i * 7919) % runs) %
                                              workspaces.size()]);
        queries.push_back(std::move(r));
    }
    t = Clock::now();
    const auto q = run_open_loop(queries, query_rate, threads, loc->origin, token);
    std::vector<std::string> names;
    for (const auto& k : kinds) names.push_back(k.kind);
    report(q, names, query_rate, std::chrono::duration<double>(Clock::now() - t).count());
    int errors = 0;
    for (const auto& s : sub) errors += !s.ok;
    for (const auto& s : q) errors += !s.ok;
    return errors == 0 ? 0 : 1;
}
