#include "astraeus/exec/agent_node.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "astraeus/exec/agent_gpu.hpp"
#include "astraeus/exec/local_executor.hpp"
#include "astraeus/exec/sandbox/safe_fs.hpp"
#include "astraeus/service/log.hpp"

namespace astraeus::exec {

using nlohmann::json;
using service::log;
using service::LogLevel;
namespace fs = std::filesystem;

namespace {

std::string random_session() {
    std::random_device rd;
    std::ostringstream s;
    s << std::hex << rd() << rd();
    return s.str();
}

/// Whether some process of group `pgid` runs a worker of Astraeus (ASTRAEUS_RUN in its
/// environment): a group id from a state file is killed only then (never a reused id).
bool group_is_ours(pid_t pgid) {
    std::error_code ec;
    for (const auto& d : fs::directory_iterator("/proc", ec)) {
        const std::string pid = d.path().filename().string();
        if (pid.empty() || pid[0] < '0' || pid[0] > '9') continue;
        std::ifstream st(d.path() / "stat");
        std::string line;
        if (!std::getline(st, line)) continue;
        const auto close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        std::string state;
        long ppid = 0, pgrp = 0;
        rest >> state >> ppid >> pgrp;
        if (pgrp != pgid) continue;
        std::ifstream env(d.path() / "environ", std::ios::binary);
        std::string all((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
        if (all.find("ASTRAEUS_RUN=") != std::string::npos) return true;
    }
    return false;
}

/// A JSON string field, "" when absent or not a string.
std::string str_field(const json& j, const char* key) {
    if (!j.is_object()) return "";
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

/// An origin as compared: without a trailing "/" or "/v1".
std::string origin_of(std::string u) {
    while (!u.empty() && u.back() == '/') u.pop_back();
    if (u.ends_with("/v1")) u.resize(u.size() - 3);
    while (!u.empty() && u.back() == '/') u.pop_back();
    return u;
}

std::string safe(const std::string& s) {
    std::string out;
    for (char ch : s) out += (ch == '/' || ch == '\0') ? '_' : ch;
    return out.empty() || out == "." || out == ".." ? "_" : out;
}

}  // namespace

std::int64_t reply_generation(const json& reply) {
    if (!reply.is_object()) return 0;
    auto it = reply.find("generation");
    return it != reply.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

NodeAgent::NodeAgent(NodeAgentConfig c, AgentPost post)
    : NodeAgent(std::move(c), {""},
                [post = std::move(post)](const std::string&, const std::string& path, const json& body) {
                    return post(path, body);
                }) {}

NodeAgent::NodeAgent(NodeAgentConfig c, std::vector<std::string> services, AgentPostTo post)
    : c_(std::move(c)), services_(services.empty() ? std::vector<std::string>{""} : std::move(services)),
      post_to_(std::move(post)),
      post_([this](const std::string& path, const json& body) { return post_to_(services_[current_], path, body); }),
      session_(random_session()),
      sampler_(c_.gpu_source, c_.utilization_period_s),
      shipper_(LogShipperConfig{c_.name, c_.log_chunk_bytes, 0.25, c_.retry_s,
                                c_.work_dir + "/agent-" + safe(c_.name) + ".logs"},
               post_, [this](const json& reply) { return fenced_ok(reply, "logs"); }) {}

// The runners' destructors kill and reap what is left (the workers die with their agent anyway:
// the runner gives them PR_SET_PDEATHSIG); the service sees the new session, or the silence.
NodeAgent::~NodeAgent() = default;

std::string NodeAgent::state_path() const { return c_.work_dir + "/agent-" + safe(c_.name) + ".state"; }

Result<void> NodeAgent::start() {
    std::error_code ec;
    fs::create_directories(c_.work_dir, ec);
    if (ec) return fail("--work-dir " + c_.work_dir + ": " + ec.message());
    // Checkpoints, logs and progress of every workspace: the agent's own (each run's folders
    // below are its identity's, reached by its workers through their mount namespace).
    if (::chmod(c_.work_dir.c_str(), 0700) != 0) return fail("--work-dir " + c_.work_dir + ": chmod 0700: " + std::strerror(errno));
    // Workers of a previous life of this agent: not our children any more, their attempts were
    // (or will be) failed by the service; kill what is left of their process groups.
    std::ifstream in(state_path());
    std::string line;
    int killed = 0;
    while (std::getline(in, line)) {
        if (line.starts_with("generation ")) {  // the highest lease generation seen
            try {
                generation_ = std::max<std::int64_t>(generation_, std::stoll(line.substr(11)));
            } catch (const std::exception&) {
            }
            continue;
        }
        std::istringstream f(line);
        long pgid = 0;
        std::string what;
        if (!(f >> pgid) || pgid <= 1) continue;
        std::getline(f, what);
        if (::kill(static_cast<pid_t>(-pgid), 0) != 0 || !group_is_ours(static_cast<pid_t>(pgid))) continue;
        ::kill(static_cast<pid_t>(-pgid), SIGKILL);
        ++killed;
        log(LogLevel::Warn, "agent.orphan_killed", {{"pgid", std::to_string(pgid)}, {"worker", what}});
    }
    in.close();
    save_state();
    shipper_.load();  // the rest of the logs of that life
    log(LogLevel::Info, "agent.started",
        {{"name", c_.name}, {"pool", c_.pool}, {"gpus", std::to_string(c_.gpus)}, {"work_dir", c_.work_dir},
         {"orphans_killed", std::to_string(killed)}, {"generation", std::to_string(generation_)},
         {"services", std::to_string(services_.size())}});
    return {};
}

void NodeAgent::save_state() const {
    const std::string tmp = state_path() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (generation_ > 0) out << "generation " << generation_ << "\n";
        for (const auto& [k, l] : live_)
            if (l.pid > 0)
                out << l.pid << " run " << std::get<0>(k) << " attempt " << std::get<1>(k) << " worker "
                    << std::get<2>(k) << "\n";
    }
    std::error_code ec;
    fs::rename(tmp, state_path(), ec);
}

WorkerRunner* NodeAgent::runner_for(const std::string& user) {
    auto it = runners_.find(user);
    if (it != runners_.end()) return it->second.get();
    RunnerConfig rc = c_.runner;
    if (!user.empty()) rc.run_as_user = user;
    return runners_.emplace(user, std::make_unique<WorkerRunner>(rc)).first->second.get();
}

json NodeAgent::events_json() const {
    json a = json::array();
    for (const json& e : events_) a.push_back(e);
    return a;
}

void NodeAgent::event(json e) {
    e["seq"] = next_event_++;
    events_.push_back(std::move(e));
}

// --- the protocol ------------------------------------------------------------------------------

void NodeAgent::move_to(std::size_t index, const std::string& why) {
    log(LogLevel::Warn, "agent.service_moved", {{"from", services_[current_]}, {"to", services_[index]}, {"why", why}});
    current_ = index;
    registered_ = false;  // register there, as after a restart of the service
}

bool NodeAgent::follow(const Result<std::pair<int, json>>& r) {
    if (services_.size() < 2) return false;
    const std::size_t next = (current_ + 1) % services_.size();
    if (!r) {
        move_to(next, "no answer: " + r.error().message);
        return true;
    }
    if (r->first != 503 || str_field(r->second, "status") != "follower") return false;
    const std::string leader = str_field(r->second, "leader_address");
    if (!leader.empty())
        for (std::size_t i = 0; i < services_.size(); ++i)
            if (i != current_ && origin_of(services_[i]) == origin_of(leader)) {
                move_to(i, "a follower; it names the leader " + leader);
                return true;
            }
    move_to(next, leader.empty() ? std::string("a follower; the leader is not known yet")
                                 : "a follower; its leader " + leader + " is not one of this agent's addresses");
    return true;
}

bool NodeAgent::fenced_ok(const json& reply, const char* what) {
    const std::int64_t g = reply_generation(reply);
    if (!generation_obeyed(g, generation_)) {
        std::size_t n = 0;
        if (auto cs = reply.find("commands"); cs != reply.end() && cs->is_array()) n = cs->size();
        log(LogLevel::Warn, "agent.stale_generation",
            {{"reply", what}, {"generation", std::to_string(g)}, {"highest_seen", std::to_string(generation_)},
             {"service", services_[current_]}, {"commands_refused", std::to_string(n)},
             {"note", "a reply with lease generation " + std::to_string(g) + " below the highest seen, " +
                          std::to_string(generation_) +
                          ": a deposed leader's; nothing applied (if the service's database was recreated, "
                          "stop the agent and delete the generation line of " + state_path() + ")"}});
        if (services_.size() > 1) move_to((current_ + 1) % services_.size(), "a stale lease generation");
        return false;
    }
    if (g > generation_) {
        log(LogLevel::Info, "agent.generation",
            {{"generation", std::to_string(g)}, {"previous", std::to_string(generation_)}, {"service", services_[current_]}});
        generation_ = g;
        save_state();
    }
    return true;
}

bool NodeAgent::do_register() {
    for (json& e : shipper_.release_all()) event(std::move(e));  // every exit, logs shipped or not
    json body;
    body["name"] = c_.name;
    body["pool"] = c_.pool;
    body["gpus"] = c_.gpus;
    if (!c_.addr.empty()) body["addr"] = c_.addr;
    body["session"] = session_;
    json workers = json::array();
    for (const auto& [k, l] : live_)
        if (!l.exited)
            workers.push_back({{"run", std::get<0>(k)}, {"attempt", std::get<1>(k)}, {"worker", std::get<2>(k)},
                               {"pid", l.pid}, {"gpus", l.gpus}});
    body["workers"] = std::move(workers);
    body["events"] = events_json();
    auto r = post_("/v1/agent/register", body);
    if (!r) {
        log(LogLevel::Warn, "agent.register_failed", {{"error", r.error().message}, {"service", services_[current_]}});
        follow(r);
        return false;
    }
    if (r->first != 200) {
        const std::string why = r->second.value("error", r->second.dump());
        // A follower's 503 names the leader: expected during a failover, not an error.
        if (follow(r)) {
            log(LogLevel::Info, "agent.register_redirected", {{"status", std::to_string(r->first)}, {"error", why}});
            return false;
        }
        log(r->first >= 500 || r->first == 429 ? LogLevel::Warn : LogLevel::Error, "agent.register_refused",
            {{"status", std::to_string(r->first)}, {"error", why}});
        // The token (401, 403) or this machine's registration itself (400: a bad name or pool,
        // 409: another GPU count or pool than the name's, or not an agents service, 422):
        // retrying cannot help. Anything else (no answer, 5xx, 507, 429) is retried, and so is a
        // refusal that says when to retry (409 with retry_after_s: the machine's previous agent,
        // killed a moment ago, is not yet counted as silent).
        const bool retry_later = r->second.is_object() && r->second.value("retry_after_s", 0) > 0;
        if (!retry_later &&
            (r->first == 401 || r->first == 403 || r->first == 400 || r->first == 409 || r->first == 422)) {
            refused_ = "the service refused the registration (HTTP " + std::to_string(r->first) + "): " + why;
            refused_status_ = r->first;
        }
        return false;
    }
    const json& a = r->second;
    if (!fenced_ok(a, "registration")) return false;
    heartbeat_s_ = std::max(0.05, a.value("heartbeat_s", 2.0));
    const std::int64_t acked = a.value("events_acked", std::int64_t{0});
    while (!events_.empty() && events_.front().value("seq", std::int64_t{0}) <= acked) events_.pop_front();
    last_cmd_ = 0;
    registered_ = true;
    log(LogLevel::Info, "agent.registered",
        {{"machine", std::to_string(a.value("machine", 0))}, {"service", services_[current_]},
         {"generation", std::to_string(generation_)}, {"adopted", std::to_string(a.value("adopted", json::array()).size())},
         {"killed", std::to_string(a.value("killed", json::array()).size())}});
    return true;
}

bool NodeAgent::do_heartbeat(const char* path) {
    json body;
    body["name"] = c_.name;
    body["session"] = session_;
    body["commands_acked"] = last_cmd_;
    body["events"] = events_json();
    body["live"] = live_.size();
    if (!gpu_samples_.empty()) body["gpu_util"] = gpu_samples_json(gpu_samples_);
    auto r = post_(path, body);
    if (!r) {
        log(LogLevel::Warn, "agent.heartbeat_failed", {{"error", r.error().message}, {"service", services_[current_]}});
        follow(r);
        return false;
    }
    if (r->first != 200) {
        log(LogLevel::Warn, "agent.heartbeat_refused",
            {{"status", std::to_string(r->first)}, {"error", r->second.value("error", r->second.dump())}});
        if (follow(r)) return false;
        // 401/403: the token was revoked or is bound elsewhere; registering again says which.
        if (r->first == 404 || r->first == 409 || r->first == 401 || r->first == 403) registered_ = false;
        return false;
    }
    const json& a = r->second;
    if (!fenced_ok(a, "heartbeat")) {  // a deposed leader's: its commands and acks are not taken
        registered_ = false;
        return false;
    }
    if (a.value("register", false)) {
        registered_ = false;
        return true;
    }
    gpu_samples_.clear();  // taken
    heartbeat_s_ = std::max(0.05, a.value("heartbeat_s", heartbeat_s_));
    const std::int64_t acked = a.value("events_acked", std::int64_t{0});
    while (!events_.empty() && events_.front().value("seq", std::int64_t{0}) <= acked) events_.pop_front();
    if (auto cs = a.find("commands"); cs != a.end() && cs->is_array())
        for (const json& c : *cs) {
            const std::int64_t seq = c.value("seq", std::int64_t{0});
            if (seq <= last_cmd_) continue;  // already applied (a re-send)
            apply(c);
            last_cmd_ = seq;
        }
    return true;
}

void NodeAgent::apply(const json& cmd) {
    const std::string op = cmd.value("op", "");
    const Key key{cmd.value("run", std::int64_t{0}), cmd.value("attempt", 0), cmd.value("worker", -1)};
    if (op == "launch") return launch(cmd);
    auto it = live_.find(key);
    if (it == live_.end()) return;
    WorkerRunner* r = runner_for(it->second.user);
    if (op == "stop") {
        it->second.signalled = true;
        r->stop(it->second.h);
    } else if (op == "kill") {
        it->second.signalled = true;
        r->kill(it->second.h);
    }
    log(LogLevel::Info, "agent.signal",
        {{"op", op}, {"run", std::to_string(std::get<0>(key))}, {"attempt", std::to_string(std::get<1>(key))},
         {"worker", std::to_string(std::get<2>(key))}});
}

void NodeAgent::launch(const json& cmd) {
    const Key key{cmd.value("run", std::int64_t{0}), cmd.value("attempt", 0), cmd.value("worker", -1)};
    if (live_.contains(key)) return;  // a re-sent launch
    WorkerIdentity id;
    id.run = cmd.value("run_name", "");
    id.workspace = cmd.value("workspace", "");
    id.worker = std::get<2>(key);
    id.workers = cmd.value("workers", 1);
    id.attempt = std::get<1>(key);
    id.gpus = cmd.value("gpus", std::vector<int>{});
    id.master_addr = cmd.value("master_addr", "127.0.0.1");
    id.master_port = cmd.value("master_port", 29500);
    id.local_rank = cmd.value("local_rank", 0);
    const std::string run_dir = safe(id.workspace) + "/" + safe(id.run);
    const std::string wk = "attempt-" + std::to_string(id.attempt) + "/worker-" + std::to_string(id.worker);
    id.checkpoint_dir = c_.work_dir + "/checkpoints/" + run_dir;
    id.progress_file = c_.work_dir + "/progress/" + run_dir + "/" + wk;
    const bool boxed = c_.runner.sandbox != nullptr;
    // Who runs it: with the sandbox the workspace's own uid; its folders are its own (0700),
    // made without following links; the work dir stays root's (0700).
    Result<sandbox::Identity> ident = sandbox::Identity{};
    if (boxed) ident = sandbox::identity_for(c_.sandbox, c_.runner.allow_root, "", id.workspace, cmd.value("workspace_id", std::int64_t{0}));
    std::string setup_error = ident ? "" : ident.error().message;
    auto own_dirs = [&](const std::string& top, const std::string& rest) {
        std::string p = c_.work_dir + "/" + top;
        auto root_fd = sandbox::ensure_dir(p, 0, 0, 0711);
        if (!root_fd) return setup_error = root_fd.error().message, false;
        ::close(*root_fd);
        std::size_t at = 0;
        while (setup_error.empty() && at <= rest.size()) {
            const std::size_t slash = std::min(rest.find('/', at), rest.size());
            p += '/';
            p.append(rest, at, slash - at);
            auto fd = sandbox::ensure_dir(p, ident ? ident->uid : 0, ident ? ident->gid : 0, 0700);
            if (!fd) setup_error = fd.error().message;
            else ::close(*fd);
            at = slash + 1;
        }
        return setup_error.empty();
    };
    std::error_code ec;
    WorkerSpec spec;
    spec.argv = cmd.value("argv", std::vector<std::string>{});
    spec.env = worker_env(id, cmd.value("env", std::map<std::string, std::string>{}), current_env());
    spec.workdir = cmd.value("workdir", "");
    if (boxed) {
        (void)(own_dirs("checkpoints", run_dir) && own_dirs("progress", run_dir + "/attempt-" + std::to_string(id.attempt)) &&
               (!spec.workdir.empty() || own_dirs("runs", run_dir)));
    } else {
        fs::create_directories(id.checkpoint_dir, ec);
        fs::create_directories(fs::path(id.progress_file).parent_path(), ec);
    }
    if (spec.workdir.empty()) {
        spec.workdir = c_.work_dir + "/runs/" + run_dir;
        if (!boxed) fs::create_directories(spec.workdir, ec);
    }
    spec.log_path = c_.work_dir + "/logs/" + run_dir + "/" + wk + ".log";
    spec.progress_path = id.progress_file;
    std::string user;
    if (!boxed)
        if (auto u = c_.unix_users.find(id.workspace); u != c_.unix_users.end()) user = u->second;
    if (boxed && ident) {
        spec.sandbox.on = true;
        spec.sandbox.id = *ident;
        spec.sandbox.cgroup = LocalExecutor::cgroup_name(std::get<0>(key), id.attempt, id.worker);
        spec.sandbox.limits.memory_bytes = c_.sandbox.memory_bytes;
        spec.sandbox.limits.pids_max = c_.sandbox.pids_max;
        spec.sandbox.limits.gpus = id.gpus;
        spec.sandbox.keep = {id.checkpoint_dir, fs::path(id.progress_file).parent_path().string()};
        if (spec.workdir.starts_with(c_.work_dir + "/")) spec.sandbox.keep.push_back(spec.workdir);
    }
    Live l;
    l.user = user;
    l.gpus = id.gpus;
    auto h = setup_error.empty() ? runner_for(user)->launch(spec) : Result<WorkerRunner::Handle>(fail(setup_error));
    json base{{"run", std::get<0>(key)}, {"attempt", std::get<1>(key)}, {"worker", std::get<2>(key)}};
    if (!h) {
        log(LogLevel::Error, "agent.launch_failed", {{"run", id.run}, {"error", h.error().message}});
        json e = base;
        e["kind"] = "exited";
        e["exit_code"] = 127;
        e["signal"] = 0;
        e["error"] = h.error().message;
        event(std::move(e));
        return;
    }
    l.h = *h;
    l.pid = runner_for(user)->pid(*h);
    live_[key] = l;
    save_state();
    shipper_.add(key, spec.log_path);
    json e = base;
    e["kind"] = "started";
    e["pid"] = l.pid;
    event(std::move(e));
    log(LogLevel::Info, "agent.launched",
        {{"run", id.run}, {"attempt", std::to_string(id.attempt)}, {"worker", std::to_string(id.worker)},
         {"pid", std::to_string(l.pid)}});
}

void NodeAgent::poll(int timeout_ms) {
    if (runners_.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
        return;
    }
    const int each = std::max(1, timeout_ms / static_cast<int>(runners_.size()));
    bool changed = false;
    for (auto& [user, runner] : runners_) {
        for (const WorkerRunner::Report& rep : runner->poll(each)) {
            auto it = live_.begin();
            for (; it != live_.end(); ++it)
                if (it->second.user == user && it->second.h == rep.worker) break;
            if (it == live_.end()) continue;
            const Key key = it->first;
            Live& l = it->second;
            json base{{"run", std::get<0>(key)}, {"attempt", std::get<1>(key)}, {"worker", std::get<2>(key)}};
            switch (rep.kind) {
                case WorkerRunner::Report::Kind::Progress: {
                    json e = base;
                    e["kind"] = "progress";
                    e["step"] = rep.step;
                    event(std::move(e));
                    break;
                }
                case WorkerRunner::Report::Kind::Exited:
                    l.exited = true;
                    l.exit_code = rep.exit_code;
                    l.signal = rep.signal;
                    l.signalled = l.signalled || rep.we_signalled;
                    break;
                case WorkerRunner::Report::Kind::Gone: {
                    json e = base;
                    e["kind"] = "exited";
                    e["exit_code"] = l.exit_code;
                    e["signal"] = l.signal;
                    e["we_signalled"] = l.signalled;
                    shipper_.finish(key, std::move(e));  // reported once its log is at the service
                    log(LogLevel::Info, "agent.worker_gone",
                        {{"run", std::to_string(std::get<0>(key))}, {"worker", std::to_string(std::get<2>(key))},
                         {"exit_code", std::to_string(l.exit_code)}, {"signal", std::to_string(l.signal)}});
                    runner->forget(l.h);
                    live_.erase(it);
                    changed = true;
                    break;
                }
            }
        }
    }
    if (changed) save_state();
}

Result<void> NodeAgent::run() {
    using clock = std::chrono::steady_clock;
    while (!stop_) {
        if (!registered_) {
            if (!do_register()) {
                if (!refused_.empty()) {
                    save_state();
                    log(LogLevel::Error, "agent.stopped", {{"live", std::to_string(live_.size())}, {"reason", refused_}});
                    return fail(refused_);
                }
                poll(static_cast<int>(c_.retry_s * 1000));
                continue;
            }
            next_hb_ = clock::now();
        }
        poll(50);
        shipper_.tick();
        for (json& e : shipper_.take_released()) event(std::move(e));
        const auto now = clock::now();
        if (sampler_.due(now)) {  // sent at once, with the next heartbeat
            gpu_samples_.push_back(sampler_.sample(now));
            while (gpu_samples_.size() > kMaxGpuSamples) gpu_samples_.pop_front();
        }
        if (!events_.empty() || !gpu_samples_.empty() || now >= next_hb_) {
            const bool ok = do_heartbeat(events_.empty() ? "/v1/agent/heartbeat" : "/v1/agent/events");
            next_hb_ = clock::now() + std::chrono::milliseconds(static_cast<int>(
                                          (ok ? heartbeat_s_ : std::max(heartbeat_s_, c_.retry_s)) * 1000));
            if (!ok) poll(static_cast<int>(c_.retry_s * 1000));
        }
    }
    save_state();
    log(LogLevel::Info, "agent.stopped", {{"live", std::to_string(live_.size())}});
    return {};
}

}  // namespace astraeus::exec
