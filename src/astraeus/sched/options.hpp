// Options of the ASTRAEA scheduler and its job orders (spec/astraea.md sections 3, 4 and 6).
// Names map to values through one explicit table each; an unknown name is an error listing the
// valid ones. Thread safety: plain values.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"

namespace astraeus {

/// compat reproduces the reference simulator, quirks included; default is the product.
enum class Mode { Compat, Default };

/// Job order inside a tenant (spec section 4).
enum class JobOrder { Fairness, DiscFairness, JobReward, Themis, Fifo, SmallestFirst, Las, Srtf, Random };

/// fair: phase-1 water filling decides each tenant's budget; static: budget = quota.
enum class QuotaMode { Fair, Static };

struct AstraeaOptions {
    Mode mode = Mode::Default;
    JobOrder job_order = JobOrder::Fairness;
    QuotaMode quota_mode = QuotaMode::Fair;
    Seconds lease_s = 1800;          ///< L, lease term
    Seconds starvation_s = 4 * 3600; ///< T_starve
    Seconds delay_s = 300;           ///< T_delay: a restart younger than this is a "delay job"
    bool block_scheduling = true;    ///< head-of-line block inside a tenant on a failure
    Seconds tick_s = 10;             ///< compat: round interval (reference: 10 s)
    int window_buckets = 24;         ///< tenant LTGF window, in buckets
    Seconds bucket_s = 3600;         ///< tenant LTGF bucket length
    Seconds checkpoint_s = 5;        ///< default mode: cost charged when a lease ends
    Seconds restore_s = 20;          ///< default mode: cost charged when a job resumes
    std::uint64_t seed = 1;          ///< for the random job order
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
