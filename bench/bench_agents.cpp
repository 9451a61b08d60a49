// Simulated node agents against a live `astraeus serve --executor agents` (bench/agents_bench.sh
// starts it): --agents N machines register (sim-00001 ...), then each heartbeats every
// --period-s seconds, spread evenly over the period, for --duration-s seconds, through a bounded
// pool of --threads client threads on loopback (a new connection per request, as the agent
// does). Prints the heartbeat latency p50/p99/max, the heartbeats sent and failed, and, with
// --server-pid, the service's CPU time over the heartbeat phase (from /proc/PID/stat).
// Not a test: figures for docs/performance.md.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

#include "astraeus/client/http_transport.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double cpu_seconds(int pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(f, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream rest(line.substr(close + 2));
    std::string tok;
    long utime = 0, stime = 0;
    for (int field = 3; field <= 15 && rest >> tok; ++field) {
        if (field == 14) utime = std::stol(tok);
        if (field == 15) stime = std::stol(tok);
    }
    return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"simulated node agents heartbeating a live service"};
    std::string origin, token, token_file;
    int agents = 1000, threads = 8, server_pid = 0;
    double period_s = 10, duration_s = 60;
    app.add_option("--origin", origin, "http://127.0.0.1:PORT")->required();
    app.add_option("--token", token, "an agent token (one machine only: use --token-file for many)");
    app.add_option("--token-file", token_file, "agent tokens, one a line: agent i uses line i (a token binds one machine)");
    app.add_option("--agents", agents, "simulated agents (machines)");
    app.add_option("--period-s", period_s, "each agent's heartbeat period");
    app.add_option("--duration-s", duration_s, "length of the heartbeat phase");
    app.add_option("--threads", threads, "client threads (the bound on requests in flight)");
    app.add_option("--server-pid", server_pid, "the service's pid, for its CPU time");
    CLI11_PARSE(app, argc, argv);
    std::vector<std::string> tokens;
    if (!token_file.empty()) {
        std::ifstream in(token_file);
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) tokens.push_back(line);
    }
    if (tokens.empty() && !token.empty()) tokens.push_back(token);
    if (tokens.empty()) {
        std::fprintf(stderr, "give --token TOKEN or --token-file FILE\n");
        return 2;
    }

    auto post = [&](const std::string& path, const nlohmann::json& body, int agent) {
        astraeus::client::HttpRequest rq;
        rq.method = "POST";
        rq.origin = origin;
        rq.target = path;
        rq.bearer_token = tokens[static_cast<std::size_t>(agent) % tokens.size()];
        rq.body = body.dump();
        return astraeus::client::http_send(rq);
    };
    auto name = [](int i) {
        char b[32];
        std::snprintf(b, sizeof b, "sim-%05d", i);
        return std::string(b);
    };
    // Registration, in parallel.
    std::atomic<int> next{0}, reg_failed{0};
    {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&] {
                for (int i; (i = next++) < agents;) {
                    auto r = post("/v1/agent/register", {{"name", name(i)}, {"pool", "default"}, {"gpus", 8},
                                                        {"session", "bench-" + std::to_string(i)},
                                                        {"workers", nlohmann::json::array()}},
                                  i);
                    if (!r || r->status != 200) ++reg_failed;
                }
            });
        for (auto& th : pool) th.join();
    }
    std::printf("registered %d agents (%d failed)\n", agents - reg_failed.load(), reg_failed.load());

    // Heartbeats: agent i at start + (i / agents + k) * period, k = 0, 1, ...
    const auto start = clock_type::now() + std::chrono::milliseconds(200);
    const auto end = start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(duration_s));
    struct Due {
        clock_type::time_point at;
        int agent;
    };
    std::vector<Due> plan;
    for (int k = 0;; ++k) {
        bool any = false;
        for (int i = 0; i < agents; ++i) {
            const auto at = start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(
                                        (static_cast<double>(i) / agents + k) * period_s));
            if (at >= end) continue;
            plan.push_back({at, i});
            any = true;
        }
        if (!any) break;
    }
    std::sort(plan.begin(), plan.end(), [](const Due& a, const Due& b) { return a.at < b.at; });
    std::mutex mu;
    std::vector<double> lat_ms;
    std::atomic<std::size_t> cursor{0};
    std::atomic<int> failed{0};
    const double cpu0 = server_pid > 0 ? cpu_seconds(server_pid) : -1;
    const auto wall0 = clock_type::now();
    {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&] {
                for (std::size_t j; (j = cursor++) < plan.size();) {
                    std::this_thread::sleep_until(plan[j].at);
                    const auto t0 = clock_type::now();
                    auto r = post("/v1/agent/heartbeat", {{"name", name(plan[j].agent)},
                                                          {"session", "bench-" + std::to_string(plan[j].agent)},
                                                          {"commands_acked", 0},
                                                          {"events", nlohmann::json::array()}},
                                  plan[j].agent);
                    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
                    if (!r || r->status != 200 || r->body.find("\"register\"") != std::string::npos) ++failed;
                    std::lock_guard lk(mu);
                    lat_ms.push_back(ms);
                }
            });
        for (auto& th : pool) th.join();
    }
    const double wall = std::chrono::duration<double>(clock_type::now() - wall0).count();
    const double cpu1 = server_pid > 0 ? cpu_seconds(server_pid) : -1;
    std::sort(lat_ms.begin(), lat_ms.end());
    auto pct = [&](double p) {
        if (lat_ms.empty()) return 0.0;
        return lat_ms[std::min(lat_ms.size() - 1, static_cast<std::size_t>(p * static_cast<double>(lat_ms.size())))];
    };
    std::printf("heartbeats: %zu in %.1f s (%.1f/s), failed %d\n", lat_ms.size(), wall,
                static_cast<double>(lat_ms.size()) / wall, failed.load());
    std::printf("heartbeat latency: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", pct(0.50), pct(0.99),
                lat_ms.empty() ? 0.0 : lat_ms.back());
    if (server_pid > 0)
        std::printf("service CPU: %.2f s over %.1f s = %.1f %% of one core\n", cpu1 - cpu0, wall,
                    100.0 * (cpu1 - cpu0) / wall);
    return failed.load() == 0 && reg_failed.load() == 0 ? 0 : 1;
}
