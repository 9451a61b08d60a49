// Runs every scenario file in tests/scenarios/: a small cluster, a few jobs and the expected
// timeline, worked out by hand (each file explains its arithmetic). Format:
//   cluster 2x8                      (or a preset; see --cluster)
//   placement consolidate            (optional)
//   policy NAME                      (optional, default astraea: a name of policies/registry.hpp;
//                                     its preset is applied after the options)
//   option mode=compat lease=900 ... (mode lease starvation delay block backfill order quota
//                                     checkpoint restore window bucket; baselines: thresholds
//                                     (comma-separated) promote themis_f themis_lease quantum
//                                     max_share, docs/policies.md; lease ends: victim_margin
//                                     preempt_horizon; preemptions: arrival_headroom
//                                     (GPUs; -1: arrival_headroom_fraction of the cluster's)
//                                     free_before_victims placed_victims_only
//                                     reclaim_within_quota (on by default); gangs in a
//                                     tenant: due_first
//                                     keep_reservation)
//   tenant NAME WEIGHT               (tenant order = file order)
//   job NAME TENANT gpus=G submit=S duration=D
//   expect JOB key=value ...         (start end jct preemptions lease_expiries checkpoints
//                                     resumes status fairness longest_wait)
//   expect-tenant NAME time=T fairness=F index=R used=G   (the hourly sample at T)
//   expect-run key=value ...         (overhead_gpu_s busy_gpu_s)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "astraeus/config/cluster_config.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/sim/engine.hpp"

namespace astraeus {
namespace {

struct Expectation {
    int line;
    std::string subject;  // job or tenant name, or "" for the run
    char kind;            // 'j' job, 't' tenant, 'r' run
    std::map<std::string, std::string> values;
};

struct Scenario {
    SimConfig config;
    Workload workload;
    std::map<std::string, int> job_index;
    std::vector<Expectation> expectations;
};

std::map<std::string, std::string> key_values(std::istringstream& in) {
    std::map<std::string, std::string> kv;
    std::string token;
    while (in >> token) {
        auto eq = token.find('=');
        if (eq == std::string::npos) throw std::runtime_error("expected key=value, got " + token);
        kv[token.substr(0, eq)] = token.substr(eq + 1);
    }
    return kv;
}

Scenario parse(const std::filesystem::path& path) {
    Scenario s;
    std::ifstream file(path);
    std::string line;
    int number = 0;
    std::map<std::string, int> tenant_index;
    std::string policy = "astraea";
    while (std::getline(file, line)) {
        ++number;
        if (line.empty() || line[0] == '#') continue;
        std::istringstream in(line);
        std::string word;
        in >> word;
        auto where = [&] { return path.filename().string() + ":" + std::to_string(number); };
        if (word == "cluster") {
            std::string v;
            in >> v;
            auto c = resolve_cluster(v);
            if (!c) throw std::runtime_error(where() + ": " + c.error().message);
            s.config.cluster = *c;
        } else if (word == "placement") {
            in >> s.config.placement;
        } else if (word == "policy") {
            in >> policy;
        } else if (word == "option") {
            AstraeaOptions& o = s.config.options;
            for (auto& [k, v] : key_values(in)) {
                if (k == "mode") o.mode = *parse_mode(v);
                else if (k == "order") o.job_order = *parse_job_order(v);
                else if (k == "quota") o.quota_mode = *parse_quota_mode(v);
                else if (k == "lease") o.lease_s = std::stoll(v);
                else if (k == "starvation") o.starvation_s = std::stoll(v);
                else if (k == "delay") o.delay_s = std::stoll(v);
                else if (k == "block") o.block_scheduling = v == "1";
                else if (k == "backfill") o.backfill = v == "1";
                else if (k == "checkpoint") o.checkpoint_s = std::stoll(v);
                else if (k == "restore") o.restore_s = std::stoll(v);
                else if (k == "window") o.window_buckets = std::stoi(v);
                else if (k == "bucket") o.bucket_s = std::stoll(v);
                else if (k == "thresholds") {
                    o.params.tiresias_thresholds_gpu_s.clear();
                    std::stringstream list(v);
                    for (std::string item; std::getline(list, item, ',');)
                        o.params.tiresias_thresholds_gpu_s.push_back(std::stoll(item));
                }
                else if (k == "promote") o.params.tiresias_promote_knob = std::stod(v);
                else if (k == "themis_f") o.params.themis_fairness_knob = std::stod(v);
                else if (k == "themis_lease") o.params.themis_lease_s = std::stoll(v);
                else if (k == "quantum") o.params.gandiva_quantum_s = std::stoll(v);
                else if (k == "max_share") o.params.yarn_max_share = std::stod(v);
                else if (k == "victim_margin") o.improve.victim_margin = std::stod(v);
                else if (k == "preempt_horizon") o.improve.preempt_horizon_s = std::stoll(v);
                else if (k == "arrival_headroom") o.improve.arrival_headroom = std::stoi(v);
                else if (k == "arrival_headroom_fraction")
                    o.improve.arrival_headroom_fraction = std::stod(v);
                else if (k == "free_before_victims") o.improve.free_before_victims = v == "1";
                else if (k == "placed_victims_only") o.improve.placed_victims_only = v == "1";
                else if (k == "due_first") o.improve.due_first = v == "1";
                else if (k == "keep_reservation") o.improve.keep_reservation = v == "1";
                else if (k == "reclaim_within_quota") o.improve.reclaim_within_quota = v == "1";
                else throw std::runtime_error(where() + ": unknown option " + k);
            }
            if (o.mode == Mode::Compat) o.checkpoint_s = o.restore_s = 0;
        } else if (word == "tenant") {
            std::string name;
            double weight;
            in >> name >> weight;
            tenant_index[name] = static_cast<int>(s.workload.tenants.size());
            s.workload.share_order.push_back(static_cast<int>(s.workload.tenants.size()));
            s.workload.tenants.push_back({name, weight});
        } else if (word == "job") {
            std::string name, tenant;
            in >> name >> tenant;
            auto kv = key_values(in);
            Job j;
            j.id = static_cast<std::int64_t>(s.workload.jobs.size()) + 1;
            j.tenant = tenant_index.at(tenant);
            j.gpus = std::stoi(kv.at("gpus"));
            j.submit_s = std::stoll(kv.at("submit"));
            j.duration_s = std::stoll(kv.at("duration"));
            s.job_index[name] = static_cast<int>(s.workload.jobs.size());
            s.workload.jobs.push_back(j);
        } else if (word == "expect" || word == "expect-tenant") {
            Expectation e{number, "", word == "expect" ? 'j' : 't', {}};
            in >> e.subject;
            e.values = key_values(in);
            s.expectations.push_back(std::move(e));
        } else if (word == "expect-run") {
            s.expectations.push_back({number, "", 'r', key_values(in)});
        } else {
            throw std::runtime_error(where() + ": unknown directive " + word);
        }
    }
    auto options = policy_options(policy, s.config.options);
    if (!options) throw std::runtime_error(path.filename().string() + ": " + options.error().message);
    s.config.options = *options;
    // Jobs must be in submit order (stable), as a trace reader leaves them.
    std::vector<std::pair<std::string, int>> names(s.job_index.begin(), s.job_index.end());
    std::vector<Job> jobs = s.workload.jobs;
    std::vector<int> order(jobs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return jobs[a].submit_s < jobs[b].submit_s; });
    for (std::size_t i = 0; i < order.size(); ++i) s.workload.jobs[i] = jobs[order[i]];
    for (auto& [name, idx] : s.job_index)
        idx = static_cast<int>(std::find(order.begin(), order.end(), idx) - order.begin());
    return s;
}

class ScenarioTest : public testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, TimelineMatchesHandWorkedValues) {
    const std::filesystem::path path = GetParam();
    Scenario s = parse(path);
    auto result = simulate(s.workload, s.config);
    ASSERT_TRUE(result.has_value()) << result.error().message;
    for (const Expectation& e : s.expectations) {
        SCOPED_TRACE(path.filename().string() + ":" + std::to_string(e.line));
        if (e.kind == 'r') {
            for (auto& [k, v] : e.values) {
                if (k == "overhead_gpu_s") EXPECT_EQ(result->overhead_gpu_s, std::stoll(v));
                else if (k == "busy_gpu_s") EXPECT_EQ(result->busy_gpu_s, std::stoll(v));
                else ADD_FAILURE() << "unknown run key " << k;
            }
            continue;
        }
        if (e.kind == 't') {
            int u = -1;
            for (std::size_t i = 0; i < s.workload.tenants.size(); ++i)
                if (s.workload.tenants[i].name == e.subject) u = static_cast<int>(i);
            ASSERT_GE(u, 0) << "unknown tenant " << e.subject;
            const Seconds t = std::stoll(e.values.at("time"));
            const TenantSample* sample = nullptr;
            for (const auto& ts : result->tenant_series)
                if (ts.tenant == u && ts.time_s == t) sample = &ts;
            ASSERT_NE(sample, nullptr) << "no sample of " << e.subject << " at " << t;
            for (auto& [k, v] : e.values) {
                if (k == "time") continue;
                if (k == "fairness") EXPECT_NEAR(sample->fairness, std::stod(v), 1e-6);
                else if (k == "index") EXPECT_NEAR(sample->index, std::stod(v), 1e-6);
                else if (k == "used") EXPECT_EQ(sample->used_gpus, std::stoi(v));
                else ADD_FAILURE() << "unknown tenant key " << k;
            }
            continue;
        }
        ASSERT_TRUE(s.job_index.contains(e.subject)) << "unknown job " << e.subject;
        const int j = s.job_index.at(e.subject);
        const RunState& r = result->runs[j];
        for (auto& [k, v] : e.values) {
            SCOPED_TRACE("job " + e.subject + " " + k);
            if (k == "start") EXPECT_EQ(r.first_start_s, std::stoll(v));
            else if (k == "end") EXPECT_EQ(r.end_s, std::stoll(v));
            else if (k == "jct") EXPECT_EQ(r.end_s - s.workload.jobs[j].submit_s, std::stoll(v));
            else if (k == "preemptions") EXPECT_EQ(r.preemptions, std::stoi(v));
            else if (k == "lease_expiries") EXPECT_EQ(r.lease_expiries, std::stoi(v));
            else if (k == "checkpoints") EXPECT_EQ(r.checkpoints, std::stoi(v));
            else if (k == "resumes") EXPECT_EQ(r.resumes, std::stoi(v));
            else if (k == "fairness") EXPECT_NEAR(r.fairness, std::stod(v), 1e-4);
            else if (k == "longest_wait") EXPECT_EQ(r.longest_wait_s, std::stoll(v));
            else if (k == "status")
                EXPECT_EQ(v, r.status == RunStatus::Done      ? "done"
                             : r.status == RunStatus::Dropped ? "dropped"
                                                              : "other");
            else ADD_FAILURE() << "unknown job key " << k;
        }
    }
}

std::vector<std::string> scenario_files() {
    std::vector<std::string> files;
    for (auto& entry : std::filesystem::directory_iterator(ASTRAEUS_TESTS_DIR "/scenarios"))
        if (entry.path().extension() == ".scn") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

INSTANTIATE_TEST_SUITE_P(Files, ScenarioTest, testing::ValuesIn(scenario_files()),
                         [](const testing::TestParamInfo<std::string>& param) {
                             std::string n = std::filesystem::path(param.param).stem().string();
                             for (char& c : n)
                                 if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                             return n;
                         });

}  // namespace
}  // namespace astraeus
