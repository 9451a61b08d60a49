#include "astraeus/service/config.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <type_traits>

#include "astraeus/service/config_check.hpp"
#include "astraeus/service/service.hpp"

namespace astraeus::service {
namespace {

using nlohmann::json;

Result<void> only_keys(const json& j, const std::set<std::string>& keys, const std::string& where) {
    if (!j.is_object()) return fail(where + ": expected an object");
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!keys.contains(it.key())) {
            std::string m = where + ": unknown key '" + it.key() + "' (valid:";
            for (const auto& k : keys) m += " " + k;
            return fail(m + ")");
        }
    return {};
}

// What a key of type T must hold, for the wrong-type message.
template <class T>
const char* expected_type() {
    if constexpr (std::is_same_v<T, std::string>) return "a string";
    else if constexpr (std::is_same_v<T, bool>) return "true or false";
    else if constexpr (std::is_integral_v<T>) return "an integer";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else return "another type";
}

template <class T>
Result<void> get(const json& j, const char* key, T& out, const std::string& where) {
    if (!j.contains(key)) return {};
    const json& v = j.at(key);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // An integer key: a number outside T's range (or a fraction) is an error, not a cast
        // (converting 8e80 to int is undefined behaviour; found by fuzz_service_config).
        const auto too_big = [&] {
            return fail(where + ": key '" + key + "' must be an integer in " +
                        std::to_string(std::numeric_limits<T>::min()) + ".." +
                        std::to_string(std::numeric_limits<T>::max()));
        };
        if (v.is_number_float()) {
            const double d = v.get<double>();
            if (!(d >= static_cast<double>(std::numeric_limits<T>::min()) &&
                  d <= static_cast<double>(std::numeric_limits<T>::max())) || d != std::trunc(d))
                return too_big();
            out = static_cast<T>(d);
            return {};
        }
        if (v.is_number_unsigned()) {
            if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return too_big();
        } else if (v.is_number_integer()) {
            const std::int64_t i = v.get<std::int64_t>();
            if (i < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
                (i > 0 && static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
                return too_big();
        }
    }
    try {
        out = v.get<T>();
    } catch (const std::exception&) {
        return fail(where + ": key '" + key + "' has the wrong type: expected " + expected_type<T>() +
                    ", got " + v.type_name());
    }
    return {};
}

#define TRY(x)                                                  \
    do {                                                        \
        if (auto ok_ = (x); !ok_) return std::unexpected(ok_.error()); \
    } while (0)

}  // namespace

Result<ServiceConfig> parse_config(const std::string& text, const std::string& where) {
    json j;
    try {
        j = json::parse(text);
    } catch (const std::exception& e) {
        return fail(where + ": not valid JSON: " + e.what());
    }
    ServiceConfig c;
    TRY(only_keys(j,
                  {"organization", "cluster", "pools", "policy", "placer", "scheduler", "lease_s", "lease_duration_s", "lease_renew_s", "follower_refresh_s",
                   "replica", "address",
                   "starvation_s", "stall_timeout_s", "busy_pct", "goodput_drop",
                   "threshold_alerts", "executor", "time_scale", "listen", "data_dir", "threads",
                   "max_failures", "local", "agents", "workspace_limits", "web_sessions", "store", "slurm"},
                  where));
    TRY(get(j, "max_failures", c.max_failures, where));
    if (c.max_failures < 1 || c.max_failures > 1000) return fail(where + ": max_failures must be in 1..1000");
    if (j.contains("local")) {
        const json& l = j["local"];
        const std::string w = where + ": local";
        TRY(only_keys(l, {"stop_signal", "grace_s", "log_cap_bytes", "user", "allow_root",
                          "utilization_period_s", "master_addr", "runs_dir", "sandbox"}, w));
        TRY(get(l, "runs_dir", c.local.runs_dir, w));
        if (l.contains("sandbox")) {
            const json& sb = l["sandbox"];
            const std::string ws = w + ".sandbox";
            if (!sb.is_object()) return fail(ws + ": must be an object");
            TRY(only_keys(sb, {"enabled", "require", "memory_bytes", "pids_max", "uid_base", "uid_count", "users", "hide"}, ws));
            exec::sandbox::SandboxConfig& x = c.local.sandbox;
            TRY(get(sb, "enabled", x.enabled, ws));
            if (sb.contains("require")) {
                bool req = false;
                TRY(get(sb, "require", req, ws));
                x.require_full = req;
            }
            TRY(get(sb, "memory_bytes", x.memory_bytes, ws));
            TRY(get(sb, "pids_max", x.pids_max, ws));
            TRY(get(sb, "uid_base", x.uid_base, ws));
            TRY(get(sb, "uid_count", x.uid_count, ws));
            if (x.memory_bytes != 0 && x.memory_bytes < (4u << 20)) return fail(ws + ": memory_bytes must be 0 (none) or at least 4194304");
            if (x.pids_max < 0) return fail(ws + ": pids_max must be 0 (none) or positive");
            if (x.uid_base < 1000 || x.uid_count < 1 || static_cast<std::uint64_t>(x.uid_base) + x.uid_count > 4294967294ull)
                return fail(ws + ": uid_base must be at least 1000 and uid_base + uid_count below 4294967294");
            if (sb.contains("users")) {
                if (!sb["users"].is_object()) return fail(ws + ": users must map workspace names to Unix users");
                for (const auto& [k, v] : sb["users"].items()) {
                    if (!v.is_string() || v.get<std::string>().empty()) return fail(ws + ": users: '" + k + "' must map to a user name");
                    x.users[k] = v.get<std::string>();
                }
            }
            if (sb.contains("hide")) {
                if (!sb["hide"].is_array()) return fail(ws + ": hide must be an array of absolute folders");
                for (const auto& v : sb["hide"]) {
                    if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>()[0] != '/')
                        return fail(ws + ": hide must be an array of absolute folders");
                    x.hide.push_back(v.get<std::string>());
                }
            }
        }
        std::string sig;
        TRY(get(l, "stop_signal", sig, w));
        if (!sig.empty()) {
            const int n = exec::signal_number(sig);
            if (n <= 0) return fail(w + ": stop_signal '" + sig + "' is not SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 or SIGUSR2");
            c.local.runner.stop_signal = n;
        }
        TRY(get(l, "grace_s", c.local.runner.grace_s, w));
        TRY(get(l, "log_cap_bytes", c.local.runner.log_cap_bytes, w));
        TRY(get(l, "user", c.local.runner.run_as_user, w));
        TRY(get(l, "allow_root", c.local.runner.allow_root, w));
        TRY(get(l, "utilization_period_s", c.local.utilization_period_s, w));
        TRY(get(l, "master_addr", c.local.master_addr, w));
        if (!(c.local.runner.grace_s >= 0 && c.local.runner.grace_s <= 86400)) return fail(w + ": grace_s must be in 0..86400");
        if (c.local.runner.log_cap_bytes < 1024) return fail(w + ": log_cap_bytes must be at least 1024");
        if (!(c.local.utilization_period_s >= 0.1)) return fail(w + ": utilization_period_s must be at least 0.1");
    }
    TRY(get(j, "organization", c.organization, where));
    TRY(get(j, "cluster", c.cluster, where));
    TRY(get(j, "policy", c.policy, where));
    TRY(get(j, "placer", c.placer, where));
    if (j.contains("scheduler")) {
        auto sw = parse_scheduler_switches(j["scheduler"], where + ": scheduler");
        if (!sw) return std::unexpected(sw.error());
        c.scheduler = *sw;
    }
    TRY(get(j, "lease_s", c.lease_s, where));
    TRY(get(j, "starvation_s", c.starvation_s, where));
    TRY(get(j, "stall_timeout_s", c.stall_timeout_s, where));
    TRY(get(j, "busy_pct", c.busy_pct, where));
    TRY(get(j, "time_scale", c.time_scale, where));
    TRY(get(j, "listen", c.listen, where));
    TRY(get(j, "data_dir", c.data_dir, where));
    TRY(get(j, "threads", c.threads, where));
    TRY(get(j, "lease_duration_s", c.lease_duration_s, where));
    TRY(get(j, "lease_renew_s", c.lease_renew_s, where));
    TRY(get(j, "follower_refresh_s", c.follower_refresh_s, where));
    if (!(c.follower_refresh_s >= 0.1 && c.follower_refresh_s <= 3600))
        return fail(where + ": follower_refresh_s must be in 0.1..3600 (seconds between a follower's reloads of its "
                            "read-only snapshot)");
    TRY(get(j, "replica", c.replica, where));
    TRY(get(j, "address", c.address, where));
    if (!(c.lease_duration_s >= 1 && c.lease_duration_s <= 3600))
        return fail(where + ": lease_duration_s must be in 1..3600 (seconds a leader's lease holds without renewal)");
    if (!(c.lease_renew_s > 0 && c.lease_renew_s * 2 <= c.lease_duration_s))
        return fail(where + ": lease_renew_s must be > 0 and at most half of lease_duration_s (" +
                    std::to_string(c.lease_duration_s) + ")");
    if (j.contains("store")) {  // SQLite (absent, {}) or PostgreSQL (docs/operations.md)
        const std::string w = where + ": store";
        TRY(only_keys(j["store"], {"postgresql"}, w));
        if (j["store"].contains("postgresql")) {
            TRY(get(j["store"], "postgresql", c.store_postgresql, w));
            if (c.store_postgresql.empty())
                return fail(w + ": 'postgresql' must be a libpq connection string, e.g. \"host=127.0.0.1 "
                                "port=5432 dbname=astraeus\" (omit 'store' for SQLite in data_dir)");
        }
    }
    if (j.contains("pools")) {
        if (!j["pools"].is_array() || j["pools"].empty())
            return fail(where + ": 'pools' must be a non-empty array");
        c.pools.clear();
        c.pools_given = true;
        for (const json& p : j["pools"]) {
            const std::string w = where + ": pools[" + std::to_string(c.pools.size()) + "]";
            TRY(only_keys(p, {"name", "machines"}, w));
            PoolConfig pc;
            TRY(get(p, "name", pc.name, w));
            if (pc.name.empty()) return fail(w + ": a pool needs a name");
            if (!valid_pool_name(pc.name)) {
                std::string shown = j["pools"][c.pools.size()]["name"].dump(-1, ' ', true,
                                                                           json::error_handler_t::replace);
                return fail(w + ": pool name " + shown +
                            " is not a valid name (1-63 bytes of UTF-8, no control characters, no space at either end)");
            }
            for (std::size_t i = 0; i < c.pools.size(); ++i)
                if (c.pools[i].name == pc.name)
                    return fail(w + ": duplicate pool name '" + pc.name + "' (also pools[" +
                                std::to_string(i) + "]): each pool needs its own name");
            if (!p.contains("machines") || !p["machines"].is_array())
                return fail(w + ": 'machines' must be an array of {\"count\", \"gpus\"}");
            for (const json& m : p["machines"]) {
                TRY(only_keys(m, {"count", "gpus"}, w + ".machines"));
                MachineGroup g;
                TRY(get(m, "count", g.count, w));
                TRY(get(m, "gpus", g.gpus, w));
                if (g.count < 1 || g.gpus < 1 || g.count > 100000 || g.gpus > 1024)
                    return fail(w + ": machines need count >= 1 and 1 <= gpus <= 1024");
                pc.machines.push_back(g);
            }
            c.pools.push_back(std::move(pc));
        }
    }
    if (j.contains("goodput_drop")) {
        const json& d = j["goodput_drop"];
        TRY(only_keys(d, {"below", "points", "min_held_gpu_hours"}, where + ": goodput_drop"));
        TRY(get(d, "below", c.drop_below, where));
        TRY(get(d, "points", c.drop_points, where));
        TRY(get(d, "min_held_gpu_hours", c.drop_min_held_gpu_hours, where));
    }
    if (j.contains("threshold_alerts")) {
        if (!j["threshold_alerts"].is_array()) return fail(where + ": 'threshold_alerts' must be an array");
        for (const json& a : j["threshold_alerts"]) {
            TRY(only_keys(a, {"metric", "scope", "op", "value", "for_s"}, where + ": threshold_alerts"));
            ThresholdConfig t;
            TRY(get(a, "metric", t.metric, where));
            TRY(get(a, "scope", t.scope, where));
            TRY(get(a, "op", t.op, where));
            TRY(get(a, "value", t.value, where));
            TRY(get(a, "for_s", t.for_s, where));
            c.thresholds.push_back(t);
        }
    }
    if (j.contains("executor")) {
        const json& e = j["executor"];
        TRY(only_keys(e, {"startup_s", "stop_s", "failure_hold_s", "utilization_pct",
                          "failures_per_hour", "machine_failures_per_day", "machine_repair_s", "seed"},
                      where + ": executor"));
        TRY(get(e, "startup_s", c.executor.startup_s, where));
        TRY(get(e, "stop_s", c.executor.stop_s, where));
        TRY(get(e, "failure_hold_s", c.executor.failure_hold_s, where));
        TRY(get(e, "utilization_pct", c.executor.utilization_pct, where));
        TRY(get(e, "failures_per_hour", c.executor.failures_per_hour, where));
        TRY(get(e, "seed", c.executor.seed, where));
        TRY(get(e, "machine_failures_per_day", c.executor.machine_failures_per_day, where));
        TRY(get(e, "machine_repair_s", c.executor.machine_repair_s, where));
    }
    if (j.contains("workspace_limits")) {  // per-workspace limits (docs/operations.md)
        const json& l = j["workspace_limits"];
        const std::string w = where + ": workspace_limits";
        TRY(only_keys(l, {"pending_runs", "submissions_per_minute", "log_bytes"}, w));
        TRY(get(l, "log_bytes", c.limits.log_bytes, w));
        TRY(get(l, "pending_runs", c.limits.pending_runs, w));
        TRY(get(l, "submissions_per_minute", c.limits.submissions_per_minute, w));
        if (c.limits.pending_runs < 1 || c.limits.pending_runs > 10'000'000)
            return fail(w + ": pending_runs must be in 1..10000000");
        if (c.limits.submissions_per_minute < 1 || c.limits.submissions_per_minute > 1'000'000)
            return fail(w + ": submissions_per_minute must be in 1..1000000");
        if (c.limits.log_bytes != 0 && c.limits.log_bytes < 1024)
            return fail(w + ": log_bytes must be 0 (no quota) or at least 1024");
    }
    if (j.contains("slurm")) {  // `serve --executor slurm` (docs/slurm.md, "Tenants")
        const json& l = j["slurm"];
        const std::string w = where + ": slurm";
        if (!l.is_object()) return fail(w + ": must be an object");
        TRY(only_keys(l, {"accounts", "partitions", "pending_bound_s"}, w));
        if (l.contains("partitions")) {
            const json& ps = l["partitions"];
            if (!ps.is_array()) return fail(w + ": partitions must be a list of Slurm partition names");
            c.slurm_partitions.clear();
            for (const auto& v : ps) {
                if (!v.is_string() || v.get<std::string>().empty())
                    return fail(w + ": partitions: each must be a partition name (a non-empty string)");
                c.slurm_partitions.push_back(v.get<std::string>());
            }
        }
        if (l.contains("pending_bound_s")) {
            TRY(get(l, "pending_bound_s", c.slurm_pending_bound_s, w));
            if (c.slurm_pending_bound_s < 1 || c.slurm_pending_bound_s > 3600)
                return fail(w + ": pending_bound_s must be in 1..3600 (seconds)");
        }
        if (l.contains("accounts")) {
            if (!l["accounts"].is_object()) return fail(w + ": accounts must map workspace names to Slurm accounts");
            for (const auto& [k, v] : l["accounts"].items()) {
                if (!v.is_string()) return fail(w + ": accounts: '" + k + "' must map to an account name (\"\": the user's default)");
                c.slurm_accounts[k] = v.get<std::string>();
            }
        }
    }
    if (j.contains("web_sessions")) {  // the web pages' sign-in sessions (docs/security.md)
        const json& l = j["web_sessions"];
        const std::string w = where + ": web_sessions";
        TRY(only_keys(l, {"lifetime_s", "max_per_token"}, w));
        TRY(get(l, "lifetime_s", c.web_sessions.lifetime_s, w));
        TRY(get(l, "max_per_token", c.web_sessions.max_per_token, w));
        if (c.web_sessions.lifetime_s < 1 || c.web_sessions.lifetime_s > 30 * 86400)
            return fail(w + ": lifetime_s must be in 1..2592000 (30 days)");
        if (c.web_sessions.max_per_token < 1 || c.web_sessions.max_per_token > 1000)
            return fail(w + ": max_per_token must be in 1..1000");
    }
    if (j.contains("agents")) {  // node agents (docs/agents.md)
        const json& a = j["agents"];
        TRY(only_keys(a, {"heartbeat_s", "lost_after_s", "max_wait_ms", "master_port_base"}, where + ": agents"));
        TRY(get(a, "heartbeat_s", c.agents.heartbeat_s, where));
        TRY(get(a, "lost_after_s", c.agents.lost_after_s, where));
        TRY(get(a, "max_wait_ms", c.agents.max_wait_ms, where));
        TRY(get(a, "master_port_base", c.agents.master_port_base, where));
        if (c.agents.heartbeat_s < 1 || c.agents.lost_after_s < 2 * c.agents.heartbeat_s)
            return fail(where + ": agents: heartbeat_s must be >= 1 and lost_after_s >= 2 x heartbeat_s");
        if (c.agents.max_wait_ms < 0 || c.agents.max_wait_ms > 60000)
            return fail(where + ": agents: max_wait_ms must be in 0..60000");
        if (c.agents.master_port_base < 1024 || c.agents.master_port_base > 65535 - c.agents.master_port_span)
            return fail(where + ": agents: master_port_base must be in 1024..63535");
    }
    if (!(c.time_scale > 0 && c.time_scale <= 100000)) return fail(where + ": time_scale must be in (0, 100000]");
    if (c.lease_s < 60) return fail(where + ": lease_s must be at least 60");
    if (c.stall_timeout_s < 60) return fail(where + ": stall_timeout_s must be at least 60");
    if (c.executor.failures_per_hour < 0 || c.executor.machine_failures_per_day < 0 ||
        c.executor.machine_repair_s < 1)
        return fail(where + ": executor failure rates must be >= 0 and machine_repair_s >= 1");
    if (c.executor.startup_s < 0 || c.executor.stop_s < 0 || c.executor.failure_hold_s < 0)
        return fail(where + ": executor times must be >= 0");
    if (c.threads < 1 || c.threads > 256) return fail(where + ": threads must be in 1..256");
    return c;
}

Result<ServiceConfig> load_config(const std::string& path) {
    std::ifstream in(path);
    if (!in) return fail("cannot read the config file " + path + ": " + std::strerror(errno));
    std::stringstream ss;
    ss << in.rdbuf();
    auto c = parse_config(ss.str(), path);
    if (!c) return c;
    if (auto ok = check_config_names(*c, path); !ok) return std::unexpected(ok.error());
    return c;
}

}  // namespace astraeus::service
