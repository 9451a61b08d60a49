// The service's configuration (`astraeus serve --config FILE`, JSON; every key optional):
//   {"organization": "default", "cluster": "default",
//    "pools": [{"name": "default", "machines": [{"count": 4, "gpus": 8}]}],
//    "policy": "astraea", "placer": "consolidate", "lease_s": 1800, "starvation_s": 14400,
//    "scheduler": {"arrival_headroom": -1, "free_before_victims": true, ...},
//    "stall_timeout_s": 600, "busy_pct": 5,
//    "goodput_drop": {"below": 0.5, "points": 0.2, "min_held_gpu_hours": 1},
//    "threshold_alerts": [{"metric": "pool_goodput_hour", "scope": "default", "op": "<",
//                          "value": 0.6, "for_s": 600}],
//    "executor": {"startup_s": 60, "stop_s": 30, "failure_hold_s": 60, "utilization_pct": 90,
//                 "failures_per_hour": 0, "machine_failures_per_day": 0, "machine_repair_s": 3600,
//                 "seed": 1},
//    "max_failures": 3,
//    "workspace_limits": {"pending_runs": 5000, "submissions_per_minute": 600,
//                         "log_bytes": 17179869184},
//    "web_sessions": {"lifetime_s": 43200, "max_per_token": 16},
//    "local": {"stop_signal": "SIGTERM", "grace_s": 30, "log_cap_bytes": 67108864, "user": "",
//              "allow_root": false, "utilization_period_s": 10, "master_addr": "127.0.0.1",
//              "runs_dir": "<data_dir>-runs",
//              "sandbox": {"enabled": true, "require": <true as root>, "memory_bytes": 0,
//                          "pids_max": 4096, "uid_base": 3000000, "uid_count": 1000000,
//                          "users": {"WORKSPACE": "USER"}, "hide": ["/etc/astraeus"]}},
//    "slurm": {"accounts": {"WORKSPACE": "ACCOUNT"}},
//    "time_scale": 1, "listen": "127.0.0.1:8080", "data_dir": "astraeus-data", "threads": 8,
//    "store": {"postgresql": "host=127.0.0.1 port=5432 dbname=astraeus"}}
// `store`: where the service keeps its state: absent or {} = SQLite in data_dir/astraeus.db;
// {"postgresql": CONNINFO} = a PostgreSQL database (a libpq connection string or URI;
// store/pg_store.hpp, docs/operations.md "PostgreSQL"). data_dir still holds logs and the lock.
// Machines are named <pool>-<k> (k from 1). `executor` configures the simulated executor, `local`
// the local one (exec/local_executor.hpp; grace_s in real seconds). max_failures: a run ends
// `failed` at its max_failures-th failed attempt; preemptions never count. time_scale > 1 makes the service's clock run that
// many times faster than the real one (tests). Thread safety: plain values.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"
#include "astraeus/exec/agent_hub.hpp"
#include "astraeus/exec/local_executor.hpp"
#include "astraeus/service/scheduler_switches.hpp"
#include "astraeus/service/sim_executor.hpp"

namespace astraeus::service {

struct MachineGroup {
    int count = 1;
    int gpus = 8;
};
struct PoolConfig {
    std::string name;
    std::vector<MachineGroup> machines;
};
struct ThresholdConfig {
    std::string metric;
    std::string scope;  ///< a workspace, pool or machine name; empty: the cluster
    std::string op = "<";
    double value = 0;
    Seconds for_s = 0;
};

/// Per-workspace limits of one cluster (config key "workspace_limits"; docs/operations.md):
/// what one workspace may ask of the service, whatever its clients do.
struct WorkspaceLimits {
    /// Runs waiting for a placement (all pools); a submission beyond it is a 429.
    int pending_runs = 5000;
    /// Submissions per minute (a token bucket of this many, refilled evenly over a minute of
    /// real time); beyond it a 429 with Retry-After.
    int submissions_per_minute = 600;
    /// Bytes of worker logs the service keeps for one workspace (service/log_quota.hpp): the
    /// oldest logs of ended attempts are removed first; 0: no quota.
    std::uint64_t log_bytes = 16ull << 30;
};

/// The web pages' sign-in sessions (config key "web_sessions"; docs/security.md "Web sessions").
struct WebSessionConfig {
    /// Real seconds a session lasts from its sign-in (the cookie's Max-Age); 1..2592000 (30
    /// days). No sliding renewal: the page asks for the token again after it.
    Seconds lifetime_s = 12 * 3600;
    /// Sessions one token holds at once (1..1000): a new sign-in beyond it ends the oldest.
    int max_per_token = 16;
};

struct ServiceConfig {
    std::string organization = "default";
    std::string cluster = "default";
    std::vector<PoolConfig> pools{{"default", {{4, 8}}}};
    /// True when the configuration named its pools: they are then the cluster's inventory
    /// (reconciled with the store at start; service.hpp). False: the store's pools are kept
    /// and `pools` (the default) is used only for an empty store.
    bool pools_given = false;
    std::string policy = "astraea";
    std::string placer = "consolidate";
    /// "scheduler": the astraea policy's opt-in rules (service/scheduler_switches.hpp).
    SchedulerSwitches scheduler;
    Seconds lease_s = 1800;
    Seconds starvation_s = 4 * 3600;
    Seconds stall_timeout_s = 600;
    double busy_pct = 5.0;
    double drop_below = 0.5;
    double drop_points = 0.2;
    double drop_min_held_gpu_hours = 1.0;
    std::vector<ThresholdConfig> thresholds;
    SimExecutorConfig executor;
    exec::AgentHubConfig agents;  ///< "agents": {"heartbeat_s", "lost_after_s", "max_wait_ms", "master_port_base"}
    exec::LocalExecutorConfig local;
    /// "slurm": {"accounts": {"WORKSPACE": "ACCOUNT"}}: the Slurm account of each workspace's
    /// jobs (`serve --executor slurm`); unmapped: the workspace's name; "": the user's default.
    std::map<std::string, std::string> slurm_accounts;
    /// "slurm": {"partitions": ["astraeus"]}: the partitions Astraeus owns, the only ones that
    /// become pools (docs/slurm.md, "Two setups"); empty: every partition with GPU nodes, which
    /// needs SchedulerType=sched/builtin cluster-wide.
    std::vector<std::string> slurm_partitions;
    /// "slurm": {"pending_bound_s": 5}: a job released on the nodes Astraeus chose that Slurm
    /// has not started this many seconds later is taken back and the run placed again
    /// (docs/slurm.md, "Sharing the nodes with jobs outside Astraeus").
    Seconds slurm_pending_bound_s = 5;
    int max_failures = 3;
    WorkspaceLimits limits;
    WebSessionConfig web_sessions;
    /// Set by `serve --executor local` (not a config key): the cluster is the first machine of
    /// the first pool with this many GPUs (this machine); other machines are not scheduled.
    int local_gpus = 0;
    double time_scale = 1.0;
    std::string listen = "127.0.0.1:8080";
    std::string data_dir = "astraeus-data";
    int threads = 8;
    /// "store": {"postgresql": CONNINFO}: the PostgreSQL store; empty = SQLite in data_dir.
    std::string store_postgresql;
    /// Replicas on PostgreSQL (service/leadership.hpp, docs/operations.md "Replicas"): the leader
    /// lease's duration and renewal period in wall-clock seconds (0 < renew < duration), this
    /// replica's id (empty: HOSTNAME:ABSOLUTE_DATA_DIR) and its advertised URL (told by followers).
    double lease_duration_s = 6;
    double lease_renew_s = 2;
    /// Seconds between a follower's reloads of the state it serves reads from (its data is at
    /// most about this old, plus one load's time; docs/operations.md "Replicas").
    double follower_refresh_s = 2;
    std::string replica;
    std::string address;
};

/// The configuration in JSON file `path`, over the defaults; an error naming the file and the
/// key otherwise (unknown keys are errors).
Result<ServiceConfig> load_config(const std::string& path);
/// The same from JSON text (`where` names it in errors).
Result<ServiceConfig> parse_config(const std::string& text, const std::string& where);

}  // namespace astraeus::service
