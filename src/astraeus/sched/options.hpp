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

/// What the default `astraea` changes in the published algorithm (docs/policies.md, "astraea and
/// astraea-paper"), each switchable for comparison. All off for astraea-paper, yarn-cs-emu and
/// compat mode (policies/registry.cpp).
struct AstraeaImprovements {
    /// Reservation: GPUs that free up are held for starving jobs (the longest-waiting first) and
    /// for the neediest tenant's head gang when it does not fit the free GPUs; another job may
    /// use held GPUs only with a lease that ends by the reserved start (backfill).
    bool reserve = true;
    /// Ties between tenants (the 20 % guarantee, the index) go to the lower long-term index,
    /// then the tenant name; never to the tenants file's order.
    bool history_ties = true;
    /// The scheduling index R_u = U_u / W_u from usage and entitlement decayed with this
    /// half-life (seconds; Slurm fair-share style), not the hard-edged window; 0: the window.
    Seconds index_half_life_s = 8 * 3600;
    /// Entitlement W_u accrues at C * s_u / sum(s) (exact), not at the rounded quota Q_u
    /// (rounded quotas stay the instantaneous caps and the 20 % guarantee's base).
    bool exact_entitlement = true;
    /// Phase 1 treats indexes closer than this as equal and serves the lower instantaneous
    /// share (GPUs held / Q_u) first: near-equal tenants split the free GPUs instead of the
    /// lower index taking them all (0: strict, as published).
    double index_tolerance = 0.05;
    /// A new job preempts a delay job of its tenant only if that job is over-served (F_j > 1);
    /// the published rule preempts the most over-served whatever its F_j.
    bool overserved_victims = true;
    /// Reservation (with `reserve`) also for the first starving gang (2+ GPUs) of a tenant
    /// over its share, when its own running jobs hold at least that gang: held after every other
    /// reservation, and tenants under their share (index < 1) may still start on those GPUs.
    /// Without it such a gang waits until its GPUs happen to be free at once, past T_starve.
    bool reserve_own = true;
    /// Fairness job order: rank by F_j * g_j^gang_weight, not F_j: among equally served jobs
    /// the smaller gang first (victims by the same, highest first). Non-clairvoyant (GPU counts
    /// only); 0: F_j as published; 1 (default): g_j * F_j. docs/evaluation.md has the
    /// measurements.
    double gang_weight = 1;
    /// Fairness job order: the jobs below their due (F_j < 1) go before those at or above it,
    /// each group ranked by F_j * g_j^gang_weight (victims: at or above their due first). Without
    /// it the gang weight lets a tenant's small jobs, re-selected at every lease end, keep its
    /// own gang waiting until T_starve (a 16-GPU gang needs F_j 4x lower than a 4-GPU job's).
    /// Off by default: on the busiest 14 days it costs tenant fairness (worst windowed F_u on
    /// 100x8 0.971 -> 0.835); measured in docs/policies.md.
    bool due_first = false;
    /// Reservation (with `reserve`): the head gang a round held GPUs for keeps the hold in the
    /// rounds that follow while it waits and its tenant stays under its share (RoundInput::
    /// reserved), as EASY backfilling keeps its reservation, instead of the hold moving to
    /// whichever job ranks first at the next lease end (then the held GPUs were idle for nothing).
    /// The hold gives way to the head of a tenant with a lower index (the one the reservation
    /// serves first without it). Off by default (the documented figures are without it);
    /// measured in docs/policies.md.
    bool keep_reservation = false;
    /// A new job's preemptions stand only if it then starts: when it does not fit its budget
    /// even with every victim gone, or its gang finds no GPUs, the victims keep running (the
    /// published rule left them preempted, their lease's work lost, for nothing). On by default
    /// since issue 21 (with free_before_victims, reclaim_within_quota and the scaled
    /// arrival_headroom; measured in docs/policies.md, "The default since issue 21").
    bool placed_victims_only = true;
    /// Runs re-selected at their lease end keep their own GPUs: when a round moved one (another
    /// start took its GPUs first), the round's starts are placed again, renewals on their own
    /// GPUs first, the others after (kept as decided when that does not place them all). Live
    /// GPUs are real devices: a moved run is stopped and restarted for nothing.
    bool keep_renewals = true;
    /// A new job over its tenant's budget whose gang fits the GPUs free at that point of the
    /// round starts on them without preempting (past the budget); only a job that needs a
    /// victim's GPUs preempts (the published rule preempted for the budget alone). On by
    /// default since issue 21 (docs/policies.md, "The default since issue 21").
    bool free_before_victims = true;
    /// Lease ends (docs/policies.md, "Two gangs"): a run whose lease ends keeps its GPUs (it is
    /// renewed before the round gives out any) unless a waiting tenant's long-term index R_u is
    /// behind the run's tenant's by more than this margin (R_run - R_waiting > margin), or a
    /// waiting job would reach T_starve within the next lease. Runs of the same tenant are not
    /// swapped (their tenant's index is the same). < 0: off (the swap is the round's, as
    /// published); 0: a swap needs any gap.
    double victim_margin = -1;
    /// Lease ends: a run expected to finish within this many seconds (its remaining run time:
    /// the trace's in the simulator) keeps its GPUs, unless a waiting job would reach T_starve
    /// within the next lease. 0: off.
    Seconds preempt_horizon_s = 0;
    /// Arrival headroom (docs/policies.md, "Arrival headroom"): phase 1 never grants the last
    /// this many free GPUs for a job waiting to resume (it has run and its lease did not end at
    /// this instant); new jobs and the runs whose lease ends now may take them (phase 2 then
    /// starts each tenant's jobs in its own order within its budget, as always). A job arriving
    /// at a full cluster then starts there instead of preempting a delay job of its tenant. Held
    /// only while some GPU is in use (a running job's lease end or completion brings the next
    /// round; with none, nothing is held). GPUs; 0: off; kScaledHeadroom (-1, the default):
    /// floor(arrival_headroom_fraction x the GPUs of the pool the round schedules), see
    /// headroom_gpus().
    static constexpr int kScaledHeadroom = -1;
    int arrival_headroom = kScaledHeadroom;
    /// The arrival headroom as a share of the pool's GPUs, used when arrival_headroom is
    /// kScaledHeadroom: 0.003 keeps 3 GPUs on 1,120, 2 on 800 and none below 334 GPUs (a small
    /// pool keeps all its GPUs busy). Dimensionless, in [0, 0.5]. Chosen by measurement on the
    /// busiest 14 days (docs/policies.md, "The default since issue 21").
    double arrival_headroom_fraction = 0.003;
    /// The headroom in GPUs for a pool of `pool_gpus` GPUs: arrival_headroom when >= 0, else
    /// floor(arrival_headroom_fraction x pool_gpus).
    int headroom_gpus(int pool_gpus) const;
    /// Reclaim for a tenant within its quota (docs/policies.md, "Arrival headroom"): the head
    /// job the reservation serves (the tenant phase 1 serves first, index < 1) that never ran,
    /// does not fit the free GPUs and keeps its tenant within its quota (used + g <= Q_u) may
    /// preempt delay jobs of other tenants that are over their quota and share (used > Q_u,
    /// index >= 1) and over-served themselves (F_j > 1), most over-served tenant first, each
    /// tenant's in its victim order, until the gang is placed; if it cannot be placed, nobody is
    /// preempted. Without it the job waits for lease ends to free its whole gang (a nearly idle
    /// tenant's 8-GPU job: 5 s to 55 s on the busiest 14 days). On by default since issue 21.
    bool reclaim_within_quota = true;
};

struct AstraeaOptions {
    /// The policy that runs the rounds (policies/registry.hpp): set by the name -> preset table.
    std::string policy = "astraea";
    Mode mode = Mode::Default;
    JobOrder job_order = JobOrder::Fairness;
    AstraeaImprovements improve;     ///< the default astraea's changes (see above)
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
