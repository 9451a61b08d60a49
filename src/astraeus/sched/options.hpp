// Options of the scheduler: ASTRAEA's and its job orders (spec/astraea.md sections 3, 4 and 6), the
// policy that runs the rounds and the baselines' parameters (docs/policies.md).
// Names map to values through one explicit table each; an unknown name is an error listing the
// valid ones. Thread safety: plain values.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"

namespace astraeus {

/// compat reproduces the reference simulator, quirks included; default is the product.
enum class Mode { Compat, Default };

/// Job order inside a tenant (spec section 4).
enum class JobOrder { Fairness, DiscFairness, JobReward, Themis, Fifo, SmallestFirst, Las, Srtf, Random };

/// fair: phase-1 water filling decides each tenant's budget; static: budget = quota.
enum class QuotaMode { Fair, Static };

/// Parameters of the baseline policies (docs/policies.md; spec/astraea.md section 8). Each
/// policy reads only its own; the defaults are the ones the docs give.
struct PolicyParams {
    /// tiresias: queue thresholds on attained service g * E, GPU-seconds, ascending (NSDI'19
    /// simulator default: one threshold, two queues).
    std::vector<GpuSeconds> tiresias_thresholds_gpu_s{3250};
    /// tiresias: a job that has waited >= P x its last run time ranks in the top queue
    /// (starvation knob; 0 = off, as in the authors' simulator).
    double tiresias_promote_knob = 0;
    /// themis: fairness knob f; the (1 - f) share of pending jobs with the worst rho bid first.
    double themis_fairness_knob = 0.2;
    /// themis: its lease term, seconds (the spec's simplified form: 300 s).
    Seconds themis_lease_s = 300;
    /// gandiva-fair: the time quantum (= its lease term), seconds; 0 = the common lease term.
    Seconds gandiva_quantum_s = 0;
    /// yarn-cs-elastic: the most a tenant may hold, as a share of the cluster (max capacity).
    double yarn_max_share = 1.0;
};

struct AstraeaOptions {
    /// The policy that runs the rounds (policies/registry.hpp): set by the name -> preset table.
    std::string policy = "astraea";
    Mode mode = Mode::Default;
    JobOrder job_order = JobOrder::Fairness;
    QuotaMode quota_mode = QuotaMode::Fair;
    Seconds lease_s = 1800;          ///< L, lease term
    Seconds starvation_s = 4 * 3600; ///< T_starve
    Seconds delay_s = 300;           ///< T_delay: a restart younger than this is a "delay job"
    bool block_scheduling = true;    ///< head-of-line block inside a tenant on a failure
    bool backfill = false;           ///< default mode: give idle GPUs to jobs behind blocked
                                     ///< heads when every head's gang still fits
    Seconds tick_s = 10;             ///< compat: round interval (reference: 10 s)
    int window_buckets = 24;         ///< tenant LTGF window, in buckets
    Seconds bucket_s = 3600;         ///< tenant LTGF bucket length
    Seconds checkpoint_s = 5;        ///< default mode: cost charged when a lease ends
    Seconds restore_s = 20;          ///< default mode: cost charged when a job resumes
    std::uint64_t seed = 1;          ///< for the random job order
    PolicyParams params;             ///< baseline policies' parameters
};

Result<Mode> parse_mode(std::string_view name);
Result<JobOrder> parse_job_order(std::string_view name);
Result<QuotaMode> parse_quota_mode(std::string_view name);
std::string_view to_string(Mode m);
std::string_view to_string(JobOrder o);
std::string_view to_string(QuotaMode q);
/// Comma-separated valid names, for --help and error messages.
std::string job_order_names();

}  // namespace astraeus
