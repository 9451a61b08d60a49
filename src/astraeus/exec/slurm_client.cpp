#include "astraeus/exec/slurm_client.hpp"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <sys/wait.h>
#include <mutex>
#include <string_view>

#include "astraeus/slurm_import/hostlist.hpp"

// libslurm's name of a state reason (exported, not declared in slurm.h).
extern "C" char* slurm_job_reason_string(enum job_state_reason inx);

namespace astraeus::exec::slurm {
namespace {

std::unexpected<Error> slurm_fail(const std::string& what) {
    const int e = slurm_get_errno();
    return fail(what + ": " + slurm_strerror(e) + " (Slurm error " + std::to_string(e) + ")");
}

// libslurm wants char*; the strings outlive the call.
char* mut(const std::string& s) { return const_cast<char*>(s.c_str()); }

std::string str(const char* s) { return s ? std::string(s) : std::string(); }

}  // namespace

const char* to_string(JobState s) {
    static const char* const names[] = {"PENDING",   "RUNNING",  "SUSPENDED", "COMPLETED",
                                        "CANCELLED", "FAILED",   "TIMEOUT",   "NODE_FAIL",
                                        "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY",
                                        "UNKNOWN"};
    return names[static_cast<int>(s)];
}

int gres_gpus(const std::string& gres) { return gres_gpu_count(gres); }

std::int64_t generation_in(const std::string& admin_comment) {
    static constexpr std::string_view key = "astraeus-generation=";
    const std::size_t at = admin_comment.find(key);
    if (at == std::string::npos) return 0;
    std::int64_t g = 0;
    std::size_t i = at + key.size(), digits = 0;
    for (; i < admin_comment.size() && admin_comment[i] >= '0' && admin_comment[i] <= '9' && digits < 18; ++i, ++digits)
        g = g * 10 + (admin_comment[i] - '0');
    return digits == 0 ? 0 : g;
}

std::string SlurmClient::fence_comment() const {
    return generation_ > 0 ? "astraeus-generation=" + std::to_string(generation_) : std::string();
}

std::unexpected<Error> SlurmClient::update_fail(std::uint32_t job, const std::string& what) const {
    const int e = slurm_get_errno();
    std::int64_t stamped = 0;
    job_info_msg_t* msg = nullptr;
    if (generation_ > 0 && slurm_load_job(&msg, job, SHOW_ALL) == SLURM_SUCCESS) {
        if (msg->record_count > 0) stamped = generation_in(str(msg->job_array[0].admin_comment));
        slurm_free_job_info_msg(msg);
    }
    if (stamped > generation_)
        return fail("job " + std::to_string(job) + ": " + what + ": refused by Slurm: the job is stamped with lease "
                    "generation " + std::to_string(stamped) + ", this leader's is " + std::to_string(generation_) +
                    " (a newer leader commands it; docs/slurm.md \"Several service replicas\")");
    slurm_seterrno(e);
    return slurm_fail("job " + std::to_string(job) + ": " + what);
}

Result<void> SlurmClient::stamp(std::uint32_t job) const {
    if (generation_ <= 0) return {};
    const std::string fence = fence_comment();
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = job;
    d.admin_comment = mut(fence);
    if (slurm_update_job(&d) != SLURM_SUCCESS)
        return update_fail(job, "stamping " + fence);
    return {};
}

Result<SlurmClient> SlurmClient::open(const std::string& slurm_conf) {
    // libslurm exits the process (fatal) on a missing config: check it first.
    std::string path = slurm_conf;
    if (path.empty() && std::getenv("SLURM_CONF")) path = std::getenv("SLURM_CONF");
    if (path.empty()) path = "/etc/slurm/slurm.conf";
    if (access(path.c_str(), R_OK) != 0)
        return fail("cannot read the Slurm configuration '" + path +
                    "' (give --slurm-conf or set SLURM_CONF)");
    if (!slurm_conf.empty()) setenv("SLURM_CONF", slurm_conf.c_str(), 1);
    static std::once_flag once;
    std::call_once(once, [&] { slurm_init(slurm_conf.empty() ? nullptr : slurm_conf.c_str()); });
    SlurmClient c;
    if (auto n = c.partitions(); !n)
        return fail("slurmctld does not answer (" + n.error().message + ")");
    return c;
}

Result<std::uint32_t> SlurmClient::submit_held(const JobSpec& spec) const {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.name = mut(spec.name);
    if (!spec.comment.empty()) d.comment = mut(spec.comment);
    // Command= shows argv[0] of a batch job (sbatch passes the script's path there).
    char* argv[2] = {spec.command.empty() ? nullptr : mut(spec.command), nullptr};
    if (argv[0] != nullptr) {
        d.argc = 1;
        d.argv = argv;
    }
    if (!spec.partition.empty()) d.partition = mut(spec.partition);
    if (!spec.account.empty()) d.account = mut(spec.account);
    d.min_nodes = d.max_nodes = static_cast<std::uint32_t>(spec.nodes);
    d.ntasks_per_node = 1;
    d.num_tasks = static_cast<std::uint32_t>(spec.nodes);
    const std::string gres = "gres:gpu:" + std::to_string(spec.gpus_per_node);
    if (spec.gpus_per_node > 0) d.tres_per_node = mut(gres);
    d.script = mut(spec.script);
    d.priority = 0;  // held
    d.requeue = 1;
    d.user_id = spec.uid.value_or(getuid());
    d.group_id = spec.gid.value_or(getgid());
    d.work_dir = mut(spec.workdir);
    d.std_out = mut(spec.output);
    d.std_err = mut(spec.output);
    d.open_mode = OPEN_MODE_APPEND;
    const std::string fence = fence_comment();
    if (!fence.empty()) d.admin_comment = mut(fence);
    std::vector<char*> env;
    for (const auto& e : spec.env) env.push_back(mut(e));
    env.push_back(nullptr);
    d.environment = env.data();
    d.env_size = static_cast<std::uint32_t>(spec.env.size());
    submit_response_msg_t* r = nullptr;
    if (slurm_submit_batch_job(&d, &r) != SLURM_SUCCESS) {
        // A held submit may answer with the job id and "held" as the error: not a failure.
        if (r && r->job_id != 0 && r->job_id != NO_VAL) {
            const std::uint32_t id = r->job_id;
            slurm_free_submit_response_response_msg(r);
            return id;
        }
        return slurm_fail("submitting job '" + spec.name + "'");
    }
    const std::uint32_t id = r->job_id;
    slurm_free_submit_response_response_msg(r);
    return id;
}

Result<void> SlurmClient::set_comment(std::uint32_t job, const std::string& comment) const {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = job;
    d.comment = mut(comment);
    const std::string fence = fence_comment();
    if (!fence.empty()) d.admin_comment = mut(fence);
    if (slurm_update_job(&d) != SLURM_SUCCESS) return update_fail(job, "setting the comment");
    return {};
}

Result<void> SlurmClient::release_on(std::uint32_t job, const std::string& nodes,
                                     std::int64_t rank, Seconds now_s, const std::string& comment) const {
    const std::string fence = fence_comment();
    {
        job_desc_msg_t d;
        slurm_init_job_desc_msg(&d);
        d.job_id = job;
        if (!comment.empty()) d.comment = mut(comment);
        if (!fence.empty()) d.admin_comment = mut(fence);
        if (!nodes.empty()) d.req_nodes = mut(nodes);
        d.site_factor = static_cast<std::uint32_t>(0x80000000LL + rank);  // NICE_OFFSET + rank
        d.begin_time = static_cast<time_t>(now_s + 1);
        if (slurm_update_job(&d) != SLURM_SUCCESS)
            return update_fail(job, "setting nodes '" + nodes + "' and rank");
    }
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = job;
    d.priority = INFINITE;  // what `scontrol release` sends
    if (!fence.empty()) d.admin_comment = mut(fence);
    if (slurm_update_job(&d) != SLURM_SUCCESS)
        return update_fail(job, "release");
    return {};
}

Result<void> SlurmClient::signal(std::uint32_t job, int sig, bool steps_only) const {
    const std::uint16_t flags = steps_only ? 0 : KILL_FULL_JOB;
    if (slurm_kill_job(job, static_cast<std::uint16_t>(sig), flags) != SLURM_SUCCESS)
        return slurm_fail("job " + std::to_string(job) + ": signal " + std::to_string(sig));
    return {};
}

Result<void> SlurmClient::signal_batch(std::uint32_t job, int sig) const {
    if (slurm_kill_job(job, static_cast<std::uint16_t>(sig), KILL_JOB_BATCH) != SLURM_SUCCESS)
        return slurm_fail("job " + std::to_string(job) + ": signal " + std::to_string(sig) + " to the batch shell");
    return {};
}

Result<void> SlurmClient::requeue_hold(std::uint32_t job) const {
    if (slurm_requeue(job, JOB_REQUEUE_HOLD) != SLURM_SUCCESS)
        return slurm_fail("job " + std::to_string(job) + ": requeue held");
    return {};
}

Result<void> SlurmClient::hold(std::uint32_t job) const {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = job;
    d.priority = 0;
    d.alloc_sid = ALLOC_SID_USER_HOLD;  // what `scontrol uhold` sends: JobHeldUser
    const std::string fence = fence_comment();
    if (!fence.empty()) d.admin_comment = mut(fence);
    if (slurm_update_job(&d) != SLURM_SUCCESS)
        return update_fail(job, "hold");
    return {};
}

Result<void> SlurmClient::set_begin(std::uint32_t job, Seconds at_s) const {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = job;
    d.begin_time = static_cast<time_t>(at_s);
    const std::string fence = fence_comment();
    if (!fence.empty()) d.admin_comment = mut(fence);
    if (slurm_update_job(&d) != SLURM_SUCCESS)
        return update_fail(job, "setting StartTime");
    return {};
}

std::optional<std::uint32_t> SlurmClient::cancelled_by(std::uint32_t job) const {
    std::uint16_t flags = 0;
    void* db = slurmdb_connection_get(&flags);
    if (db == nullptr) return std::nullopt;
    slurmdb_job_cond_t cond{};
    cond.flags = JOBCOND_FLAG_NO_STEP;
    cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
    cond.step_list = slurm_list_create(nullptr);
    slurm_selected_step_t step{};
    step.array_task_id = NO_VAL;
    step.het_job_offset = NO_VAL;
    step.step_id.job_id = job;
    step.step_id.step_id = NO_VAL;
    step.step_id.step_het_comp = NO_VAL;
    slurm_list_append(cond.step_list, &step);
    std::optional<std::uint32_t> uid;
    if (List recs = slurmdb_jobs_get(db, &cond)) {
        ListIterator it = slurm_list_iterator_create(recs);
        while (auto* j = static_cast<slurmdb_job_rec_t*>(slurm_list_next(it)))
            if (j->jobid == job && (j->state & JOB_STATE_BASE) == JOB_CANCELLED &&
                j->requid != NO_VAL && j->requid != static_cast<std::uint32_t>(-1))
                uid = j->requid;
        slurm_list_iterator_destroy(it);
        slurm_list_destroy(recs);
    }
    slurm_list_destroy(cond.step_list);
    slurmdb_connection_close(&db);
    return uid;
}

std::optional<std::vector<std::string>> SlurmClient::accounts() const {
    std::uint16_t flags = 0;
    void* db = slurmdb_connection_get(&flags);
    if (db == nullptr) return std::nullopt;
    slurmdb_account_cond_t cond{};
    std::optional<std::vector<std::string>> out;
    if (List recs = slurmdb_accounts_get(db, &cond)) {
        out.emplace();
        ListIterator it = slurm_list_iterator_create(recs);
        while (auto* a = static_cast<slurmdb_account_rec_t*>(slurm_list_next(it)))
            if (a->name) out->push_back(a->name);
        slurm_list_iterator_destroy(it);
        slurm_list_destroy(recs);
    }
    slurmdb_connection_close(&db);
    return out;
}

Result<void> SlurmClient::cancel(std::uint32_t job) const {
    if (slurm_kill_job(job, SIGKILL, 0) != SLURM_SUCCESS) {
        const int e = slurm_get_errno();
        if (e == ESLURM_ALREADY_DONE || e == ESLURM_INVALID_JOB_ID) return {};
        return slurm_fail("job " + std::to_string(job) + ": cancel");
    }
    return {};
}

Result<std::vector<JobInfo>> SlurmClient::jobs() const {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS) return slurm_fail("loading jobs");
    std::vector<JobInfo> out;
    out.reserve(msg->record_count);
    for (std::uint32_t i = 0; i < msg->record_count; ++i) {
        const slurm_job_info_t& j = msg->job_array[i];
        JobInfo o;
        o.id = j.job_id;
        o.name = str(j.name);
        o.work_dir = str(j.work_dir);
        const std::uint32_t base = j.job_state & JOB_STATE_BASE;
        o.state = base < static_cast<std::uint32_t>(JobState::Unknown) ? static_cast<JobState>(base)
                                                                       : JobState::Unknown;
        o.completing = (j.job_state & JOB_COMPLETING) != 0;
        o.priority = j.priority;
        o.held = j.priority == 0;
        if (o.state == JobState::Pending)
            o.reason = str(slurm_job_reason_string(static_cast<enum job_state_reason>(j.state_reason)));
        o.admin_held = o.held && o.state == JobState::Pending && j.state_reason == WAIT_HELD;
        o.restarts = j.restart_cnt;
        o.generation = generation_in(str(j.admin_comment));
        o.nodes = str(j.nodes);
        o.start_s = j.start_time;
        o.end_s = j.end_time;
        if (j.exit_code != NO_VAL) {
            if (WIFEXITED(j.exit_code)) o.exit_code = WEXITSTATUS(j.exit_code);
            if (WIFSIGNALED(j.exit_code)) o.exit_signal = WTERMSIG(j.exit_code);
        }
        out.push_back(std::move(o));
    }
    slurm_free_job_info_msg(msg);
    return out;
}

Result<std::vector<JobAlloc>> SlurmClient::allocations() const {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_jobs(0, &msg, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) return slurm_fail("loading jobs");
    std::vector<JobAlloc> out;
    for (std::uint32_t i = 0; i < msg->record_count; ++i) {
        const slurm_job_info_t& j = msg->job_array[i];
        const std::uint32_t base = j.job_state & JOB_STATE_BASE;
        const bool holding = base == JOB_RUNNING || base == JOB_SUSPENDED || (j.job_state & JOB_COMPLETING) != 0;
        if (!holding || !j.nodes || !*j.nodes) continue;
        JobAlloc a;
        a.id = j.job_id;
        a.name = str(j.name);
        a.work_dir = str(j.work_dir);
        a.nodes = j.nodes;
        for (std::uint32_t k = 0; k < j.gres_detail_cnt; ++k) a.gres_detail.push_back(str(j.gres_detail_str[k]));
        out.push_back(std::move(a));
    }
    slurm_free_job_info_msg(msg);
    return out;
}

Result<std::vector<NodeInfo>> SlurmClient::nodes() const {
    node_info_msg_t* msg = nullptr;
    if (slurm_load_node(0, &msg, SHOW_ALL) != SLURM_SUCCESS) return slurm_fail("loading nodes");
    std::vector<NodeInfo> out;
    for (std::uint32_t i = 0; i < msg->record_count; ++i) {
        const node_info_t& n = msg->node_array[i];
        if (!n.name) continue;
        NodeInfo o;
        o.name = n.name;
        o.addr = str(n.node_addr);
        o.gpus = gres_gpus(str(n.gres));
        const std::uint32_t base = n.node_state & NODE_STATE_BASE;
        o.down = base == NODE_STATE_DOWN || (n.node_state & NODE_STATE_FAIL) != 0;
        o.drain = (n.node_state & NODE_STATE_DRAIN) != 0;
        const std::string parts = str(n.partitions);
        for (std::size_t from = 0; from < parts.size();) {
            std::size_t comma = parts.find(',', from);
            if (comma == std::string::npos) comma = parts.size();
            o.partitions.push_back(parts.substr(from, comma - from));
            from = comma + 1;
        }
        out.push_back(std::move(o));
    }
    slurm_free_node_info_msg(msg);
    return out;
}

Result<std::vector<PartitionInfo>> SlurmClient::partitions() const {
    partition_info_msg_t* msg = nullptr;
    if (slurm_load_partitions(0, &msg, SHOW_ALL) != SLURM_SUCCESS)
        return slurm_fail("loading partitions");
    std::vector<PartitionInfo> out;
    for (std::uint32_t i = 0; i < msg->record_count; ++i) {
        const partition_info_t& p = msg->partition_array[i];
        PartitionInfo o;
        o.name = str(p.name);
        auto nodes = astraeus::slurm::expand_hostlist(str(p.nodes));
        if (!nodes) {
            slurm_free_partition_info_msg(msg);
            return fail("partition '" + o.name + "': " + nodes.error().message);
        }
        o.nodes = std::move(*nodes);
        out.push_back(std::move(o));
    }
    slurm_free_partition_info_msg(msg);
    return out;
}

Result<std::string> SlurmClient::scheduler_type() const {
    slurm_conf_t* conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS) return slurm_fail("loading the controller's configuration");
    std::string out = str(conf->schedtype);
    slurm_free_ctl_conf(conf);
    return out;
}

}  // namespace astraeus::exec::slurm
