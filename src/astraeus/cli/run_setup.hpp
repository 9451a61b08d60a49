// What `astraeus simulate` and `astraeus compare` share: the options that describe a run
// (trace, tenants, cluster, scheduler options) and turning them into a workload and a
// configuration, with every bad value reported as a clear error.
#pragma once
#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/sim/engine.hpp"
#include "astraeus/sim/report.hpp"

namespace astraeus::cli {

struct RunArgs {
    std::string trace, format = "auto", tenants, names, cluster = "40x8";
    std::string mode = "default", job_order = "fairness", quota = "fair";
    std::string placement = "consolidate", unknown_tenant = "error";
    Seconds lease_s = 1800, starvation_s = 4 * 3600, delay_s = 300;
    Seconds checkpoint_s = 5, restore_s = 20, bucket_s = 3600;
    int window = 24;
    bool no_block = false, backfill = false, quiet = false;
    std::uint64_t seed = 1;
    // The default astraea's changes to the published algorithm, each switchable (docs/policies.md).
    bool no_reservation = false, config_order_ties = false, rounded_entitlement = false;
    Seconds index_half_life_s = 8 * 3600;
    double index_tolerance = 0.05;
    bool any_victim = false;
    bool no_own_hold = false;
    bool due_first = false;         ///< --due-first
    bool keep_reservation = false;  ///< --keep-reservation
    // The defaults of the rules the default astraea turns on are AstraeaImprovements' own.
    bool placed_victims_only = AstraeaImprovements{}.placed_victims_only, move_renewals = false,
         free_before_victims = AstraeaImprovements{}.free_before_victims;
    double gang_weight = 1;
    double victim_margin = -1;       ///< --victim-margin (< 0: off)
    Seconds preempt_horizon_s = 0;   ///< --preempt-horizon (0: off)
    int arrival_headroom = AstraeaImprovements{}.arrival_headroom;  ///< --arrival-headroom, GPUs (0: off; -1: scaled)
    /// --arrival-headroom-fraction, of the pool's GPUs
    double arrival_headroom_fraction = AstraeaImprovements{}.arrival_headroom_fraction;
    bool reclaim_within_quota = AstraeaImprovements{}.reclaim_within_quota;  ///< --[no-]reclaim-within-quota
    // Baseline policies' parameters (docs/policies.md).
    std::string tiresias_thresholds = "3250";
    double tiresias_promote = 0, themis_f = 0.2, yarn_max_share = 1.0;
    Seconds themis_lease_s = 300, gandiva_quantum_s = 0;
};

/// A scheduler option that `compare` can sweep (`--lease 300,900,1800` runs each value).
struct SweepOption {
    std::string flag;                 ///< "--lease"
    std::string key;                  ///< "lease_s": the option's name in the manifest and table
    Seconds RunArgs::*arg;            ///< where a single value goes
    Seconds AstraeaOptions::*option;  ///< where each swept value goes
};
/// --lease, --starvation, --delay, --checkpoint-cost, --restore-cost, in that order.
const std::vector<SweepOption>& sweep_options();

/// What `compare` was given for each sweepable flag, as typed ("300,900,1800"); empty: not given.
using SweepLists = std::map<std::string, std::string>;

/// Registers the run options on `sub`. Without `sweeps`, the sweepable options take one integer
/// and a comma-separated list is an error that says lists are for compare; with `sweeps`, they
/// take a list, stored as typed in (*sweeps)[flag] for parse_sweep.
void add_run_options(CLI::App* sub, RunArgs& a, SweepLists* sweeps = nullptr);

/// "300,900,1800" -> {300, 900, 1800}: integers >= 0, at least one, none repeated; an error names
/// `flag` and the bad item.
Result<std::vector<Seconds>> parse_sweep(const std::string& flag, const std::string& list);

struct PreparedRun {
    Workload workload;
    SimConfig config;
    std::vector<InputFile> inputs;
    std::string skipped;  ///< what the trace reader left out, e.g. "12 (no attempts: 12)"
};

/// Reads the trace and tenants and builds the configuration.
Result<PreparedRun> prepare_run(const RunArgs& a);

/// A progress printer for stderr (after 2 s of wall time), or none when quiet.
ProgressFn progress_printer(bool quiet, const std::string& label);

/// Prints "astraeus CMD: error: MESSAGE" on stderr and returns 2.
int usage_error(const std::string& command, const Error& e);

}  // namespace astraeus::cli
