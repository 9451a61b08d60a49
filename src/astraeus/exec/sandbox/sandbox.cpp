#include "astraeus/exec/sandbox/sandbox.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

namespace astraeus::exec::sandbox {

#define TRY(x)                                                         \
    do {                                                               \
        if (auto ok_ = (x); !ok_) return std::unexpected(ok_.error()); \
    } while (0)

namespace {

bool write_file(const std::string& path, const std::string& text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool exists(const std::string& p) { return ::access(p.c_str(), F_OK) == 0; }

struct Mount {
    std::string dir, type, options;
};

std::vector<Mount> cgroup_mounts() {
    std::vector<Mount> out;
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string id, parent, dev, root, dir, opts, tok;
        f >> id >> parent >> dev >> root >> dir >> opts;
        while (f >> tok && tok != "-") {
        }
        std::string type, source, super;
        f >> type >> source >> super;
        if (type == "cgroup" || type == "cgroup2") out.push_back({dir, type, super});
    }
    return out;
}

/// "controller" -> own path from /proc/self/cgroup ("" key: the v2 path).
std::map<std::string, std::string> own_cgroups() {
    std::map<std::string, std::string> out;
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        const auto a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        std::string ctrls = line.substr(a + 1, b - a - 1);
        const std::string path = line.substr(b + 1);
        std::istringstream cs(ctrls);
        std::string c;
        if (ctrls.empty()) out[""] = path;
        while (std::getline(cs, c, ',')) out[c] = path;
    }
    return out;
}

bool has_option(const std::string& opts, const std::string& name) {
    std::istringstream s(opts);
    std::string o;
    while (std::getline(s, o, ','))
        if (o == name) return true;
    return false;
}

std::string join(const std::string& a, const std::string& b) {
    if (b.empty() || b == "/") return a;
    return a + (b.front() == '/' ? "" : "/") + b;
}

/// The first candidate folder in which a test child can be made and `test` (file, text)
/// written; "" when none.
std::string usable_parent(const std::vector<std::string>& candidates, const std::string& file, const std::string& text) {
    const std::string probe_name = "probe-" + std::to_string(::getpid());
    for (const std::string& c : candidates) {
        if (::mkdir(c.c_str(), 0755) != 0 && errno != EEXIST) continue;
        const std::string t = c + "/" + probe_name;
        if (::mkdir(t.c_str(), 0755) != 0 && errno != EEXIST) continue;
        const bool ok = file.empty() || write_file(t + "/" + file, text);
        ::rmdir(t.c_str());
        if (ok) return c;
    }
    return "";
}

bool try_namespaces() {
    const pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) ::_exit(::unshare(CLONE_NEWNS | CLONE_NEWPID) == 0 ? 0 : 1);
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

std::vector<pid_t> list_procs(const std::string& dir) {
    std::vector<pid_t> out;
    std::ifstream in(dir + "/cgroup.procs");
    long p = 0;
    while (in >> p) out.push_back(static_cast<pid_t>(p));
    return out;
}

void kill_dir(const std::string& dir, bool v2_kill) {
    if (v2_kill && write_file(dir + "/cgroup.kill", "1")) return;
    for (int round = 0; round < 20; ++round) {
        const auto procs = list_procs(dir);
        if (procs.empty()) return;
        for (pid_t p : procs) ::kill(p, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

}  // namespace

bool Probe::full() const {
    return std::all_of(protections.begin(), protections.end(), [](const Protection& p) { return p.on; });
}

std::string Probe::missing() const {
    std::string out;
    for (const Protection& p : protections)
        if (!p.on) out += (out.empty() ? "" : "; ") + p.name + " (" + p.why + ")";
    return out;
}

Probe probe(const SandboxConfig& cfg, const std::string& instance) {
    Probe p;
    p.root = ::geteuid() == 0;
    auto add = [&](const std::string& name, bool on, const std::string& why) { p.protections.push_back({name, on, why}); };
    if (!cfg.enabled) {
        for (const char* n : {"identity", "cgroup", "pids_limit", "memory_limit", "gpu_devices", "pid_namespace",
                              "mount_namespace"})
            add(n, false, "disabled by the configuration (sandbox.enabled false)");
        return p;
    }
    const std::string leaf = "astraeus-" + instance;
    const auto own = own_cgroups();
    const auto mounts = cgroup_mounts();
    if (p.root) {
        for (const Mount& m : mounts) {
            if (m.type == "cgroup2" && p.v2_parent.empty()) {
                const std::string own_path = own.contains("") ? own.at("") : "";
                // Pure v2 (the only hierarchy): children get pids and memory when enabled on the way.
                for (const std::string& dir : {m.dir, join(m.dir, own_path)})
                    (void)write_file(dir + "/cgroup.subtree_control", "+pids +memory");
                p.v2_parent = usable_parent({m.dir + "/" + leaf, join(m.dir, own_path) + "/" + leaf}, "", "");
                if (!p.v2_parent.empty()) {
                    (void)write_file(p.v2_parent + "/cgroup.subtree_control", "+pids +memory");
                    const std::string t = p.v2_parent + "/probe-" + std::to_string(::getpid());
                    if (::mkdir(t.c_str(), 0755) == 0) {
                        p.v2_kill = exists(t + "/cgroup.kill");
                        p.v2_pids = exists(t + "/pids.max");
                        p.v2_memory = exists(t + "/memory.max");
                        ::rmdir(t.c_str());
                    }
                }
            }
        }
        auto v1 = [&](const std::string& ctrl, const std::string& file, const std::string& text) -> std::string {
            for (const Mount& m : mounts) {
                if (m.type != "cgroup" || !has_option(m.options, ctrl)) continue;
                const std::string own_path = own.contains(ctrl) ? own.at(ctrl) : "";
                return usable_parent({m.dir + "/" + leaf, join(m.dir, own_path) + "/" + leaf}, file, text);
            }
            return "";
        };
        p.v1_pids = v1("pids", "pids.max", "100");
        p.v1_memory = v1("memory", "memory.limit_in_bytes", "100000000");
        p.v1_devices = v1("devices", "devices.deny", "c 195:* rwm");
        p.namespaces = try_namespaces();
    }
    const std::string not_root = "the service is not root (it needs root to create cgroups and namespaces)";
    if (p.root) add("identity", true, "each workspace its own uid (from " + std::to_string(cfg.uid_base) + ", or sandbox.users)");
    else add("identity", false, "the service is not root: workers run as its own user");
    const bool cg_kill = p.v2_kill || !p.v1_pids.empty();
    if (!p.root) add("cgroup", false, not_root);
    else if (cg_kill)
        add("cgroup", true, p.v2_kill ? "cgroup v2 at " + p.v2_parent + " (cgroup.kill)" : "cgroup v1 pids at " + p.v1_pids);
    else add("cgroup", false, "no writable cgroup v2 with cgroup.kill nor cgroup v1 pids controller");
    if (p.v2_pids || !p.v1_pids.empty()) add("pids_limit", true, p.v2_pids ? "v2 pids.max" : "v1 pids.max");
    else add("pids_limit", false, p.root ? "no pids controller (v1 or v2) writable" : not_root);
    if (p.v2_memory || !p.v1_memory.empty()) add("memory_limit", true, p.v2_memory ? "v2 memory.max" : "v1 memory.limit_in_bytes");
    else add("memory_limit", false, p.root ? "no memory controller (v1 or v2) writable" : not_root);
    if (!p.v1_devices.empty()) add("gpu_devices", true, "v1 devices: NVIDIA major 195 denied but the assigned GPUs");
    else add("gpu_devices", false, p.root ? "no cgroup v1 devices controller (cgroup v2 device filters are not done)" : not_root);
    add("pid_namespace", p.namespaces, p.namespaces ? "one per worker" : (p.root ? "unshare(CLONE_NEWPID) failed" : not_root));
    add("mount_namespace", p.namespaces,
        p.namespaces ? "data folders covered, private /tmp, /dev/shm, /var/tmp and /run/lock" : (p.root ? "unshare(CLONE_NEWNS) failed" : not_root));
    return p;
}

int sweep(const Probe& p) {
    int n = 0;
    for (const std::string& parent : {p.v2_parent, p.v1_pids, p.v1_memory, p.v1_devices}) {
        if (parent.empty()) continue;
        DIR* d = ::opendir(parent.c_str());
        if (!d) continue;
        std::vector<std::string> kids;
        while (dirent* e = ::readdir(d))
            if (e->d_type == DT_DIR && e->d_name[0] != '.') kids.push_back(parent + "/" + e->d_name);
        ::closedir(d);
        for (const std::string& k : kids) {
            kill_dir(k, parent == p.v2_parent && p.v2_kill);
            for (int i = 0; i < 100 && ::rmdir(k.c_str()) != 0 && errno == EBUSY; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            ++n;
        }
    }
    return n;
}

Result<Identity> identity_for(const SandboxConfig& cfg, bool allow_root, const std::string& run_as_user,
                              const std::string& workspace, std::int64_t workspace_id) {
    Identity id;
    if (::geteuid() != 0) return id;  // the service's own user: nothing else is possible
    std::string user;
    if (auto it = cfg.users.find(workspace); it != cfg.users.end()) user = it->second;
    else if (!run_as_user.empty()) user = run_as_user;
    if (!user.empty()) {
        std::vector<char> buf(16384);
        struct passwd pw {};
        struct passwd* res = nullptr;
        if (::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &res) != 0 || !res)
            return fail("no Unix user named '" + user + "' (the workers' user of workspace '" + workspace + "')");
        id.uid = pw.pw_uid;
        id.gid = pw.pw_gid;
        int n = 64;
        id.groups.resize(64);
        if (::getgrouplist(pw.pw_name, id.gid, id.groups.data(), &n) < 0) {
            id.groups.resize(static_cast<std::size_t>(n));
            (void)::getgrouplist(pw.pw_name, id.gid, id.groups.data(), &n);
        }
        id.groups.resize(static_cast<std::size_t>(std::max(n, 0)));
        id.user = user;
        id.home = pw.pw_dir ? pw.pw_dir : "/";
        id.drop = id.uid != 0;
        if (id.uid == 0 && !allow_root)
            return fail("workspace '" + workspace + "' maps to user '" + user + "', which is root: set allow_root to allow it");
        return id;
    }
    if (allow_root) return id;  // explicitly configured: root
    if (!cfg.enabled)
        return fail("refusing to run workers as root: the sandbox is disabled and neither a user nor allow_root is configured");
    if (workspace_id < 0 || workspace_id >= static_cast<std::int64_t>(cfg.uid_count))
        return fail("workspace '" + workspace + "' (id " + std::to_string(workspace_id) + ") is outside the uid range of " +
                    std::to_string(cfg.uid_count) + " (sandbox.uid_count)");
    id.uid = static_cast<uid_t>(cfg.uid_base + static_cast<std::uint32_t>(workspace_id));
    id.gid = static_cast<gid_t>(id.uid);
    id.groups = {id.gid};
    id.user = "astraeus-" + std::to_string(id.uid);
    id.drop = true;
    return id;
}

// --- Cgroup --------------------------------------------------------------------------------------

Cgroup::Cgroup(Cgroup&& o) noexcept { *this = std::move(o); }

Cgroup& Cgroup::operator=(Cgroup&& o) noexcept {
    if (this != &o) {
        close_join_fds();
        dirs_ = std::move(o.dirs_);
        procs_dir_ = std::move(o.procs_dir_);
        v2_kill_ = o.v2_kill_;
        memory_dir_ = std::move(o.memory_dir_);
        memory_v2_ = o.memory_v2_;
        join_fds_ = std::move(o.join_fds_);
        memory_join_fd_ = std::exchange(o.memory_join_fd_, -1);
        o.dirs_.clear();
        o.join_fds_.clear();
    }
    return *this;
}

Cgroup::~Cgroup() { close_join_fds(); }

void Cgroup::close_join_fds() {
    for (int fd : join_fds_) ::close(fd);
    join_fds_.clear();
    memory_join_fd_ = -1;
}

Result<Cgroup> Cgroup::create(const Probe& p, const std::string& name, const Limits& l) {
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
                            std::string::npos || name.front() == '.')
        return fail("bad cgroup name '" + name + "'");
    Cgroup g;
    auto make = [&](const std::string& parent) -> Result<std::string> {
        const std::string d = parent + "/" + name;
        if (::mkdir(d.c_str(), 0755) != 0) {
            if (errno != EEXIST) return fail("cannot make cgroup " + d + ": " + std::strerror(errno));
            kill_dir(d, parent == p.v2_parent && p.v2_kill);  // a stale one of the same name
        }
        g.dirs_.push_back(d);
        return d;
    };
    auto set = [&](const std::string& file, const std::string& text) -> Result<void> {
        if (!write_file(file, text)) return fail("cannot write '" + text + "' to " + file + ": " + std::strerror(errno));
        return {};
    };
    if (!p.v2_parent.empty()) {
        auto d = make(p.v2_parent);
        if (!d) return std::unexpected(d.error());
        g.procs_dir_ = *d;
        g.v2_kill_ = p.v2_kill;
        if (p.v2_pids && l.pids_max > 0) TRY(set(*d + "/pids.max", std::to_string(l.pids_max)));
        if (p.v2_memory && l.memory_bytes > 0) {
            TRY(set(*d + "/memory.max", std::to_string(l.memory_bytes)));
            (void)write_file(*d + "/memory.swap.max", "0");
            g.memory_dir_ = *d;
            g.memory_v2_ = true;
        }
    }
    if (!p.v1_pids.empty()) {
        auto d = make(p.v1_pids);
        if (!d) return std::unexpected(d.error());
        if (g.procs_dir_.empty()) g.procs_dir_ = *d;
        if (!p.v2_pids && l.pids_max > 0) TRY(set(*d + "/pids.max", std::to_string(l.pids_max)));
    }
    if (!p.v1_memory.empty() && !p.v2_memory) {
        auto d = make(p.v1_memory);
        if (!d) return std::unexpected(d.error());
        if (g.procs_dir_.empty()) g.procs_dir_ = *d;
        if (l.memory_bytes > 0) {
            TRY(set(*d + "/memory.limit_in_bytes", std::to_string(l.memory_bytes)));
            (void)write_file(*d + "/memory.memsw.limit_in_bytes", std::to_string(l.memory_bytes));
            g.memory_dir_ = *d;
        }
    }
    if (!p.v1_devices.empty()) {
        auto d = make(p.v1_devices);
        if (!d) return std::unexpected(d.error());
        if (l.gpus) {
            TRY(set(*d + "/devices.deny", "c 195:* rwm"));
            TRY(set(*d + "/devices.allow", "c 195:255 rwm"));  // nvidiactl
            TRY(set(*d + "/devices.allow", "c 195:254 rwm"));  // nvidia-modeset
            for (int gpu : *l.gpus)
                if (gpu >= 0 && gpu < 254) TRY(set(*d + "/devices.allow", "c 195:" + std::to_string(gpu) + " rwm"));
        }
    }
    for (const std::string& d : g.dirs_) {
        const int fd = ::open((d + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) return fail("cannot open " + d + "/cgroup.procs: " + std::strerror(errno));
        g.join_fds_.push_back(fd);
        if (!g.memory_v2_ && d == g.memory_dir_) g.memory_join_fd_ = fd;
    }
    return g;
}

void Cgroup::kill() const {
    if (dirs_.empty()) return;
    if (v2_kill_) {
        kill_dir(dirs_.front(), true);
        return;
    }
    for (const std::string& d : dirs_) {
        kill_dir(d, false);
        if (list_procs(d).empty()) return;
    }
}

bool Cgroup::empty() const {
    if (procs_dir_.empty()) return true;
    std::ifstream in(procs_dir_ + "/cgroup.procs");
    if (!in) return true;
    long p = 0;
    return !(in >> p);
}

void Cgroup::remove() {
    close_join_fds();
    for (const std::string& d : dirs_) ::rmdir(d.c_str());
    dirs_.clear();
    procs_dir_.clear();
}

std::int64_t Cgroup::oom_kills() const {
    if (memory_dir_.empty()) return 0;
    const std::string text = read_file(memory_dir_ + (memory_v2_ ? "/memory.events" : "/memory.oom_control"));
    const auto at = text.find("oom_kill ");
    if (at == std::string::npos) return 0;
    return std::atoll(text.c_str() + at + 9);
}

// --- the child's side ----------------------------------------------------------------------------

Result<void> plan_binds(ChildPlan& plan, const std::vector<std::string>& keep) {
    for (const std::string& k : keep) {
        // The outermost hidden folder above it.
        const std::string* root = nullptr;
        for (const std::string& h : plan.hide)
            if (k.size() > h.size() && k.compare(0, h.size(), h) == 0 && k[h.size()] == '/' &&
                (!root || h.size() < root->size()))
                root = &h;
        if (!root) continue;  // visible anyway
        if (plan.binds.size() >= ChildPlan::kMaxBinds) return fail("too many folders to bind back (" + k + ")");
        ChildPlan::Bind b;
        const int fd = ::open(k.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) return fail("cannot open the run's folder " + k + ": " + std::strerror(errno));
        ::close(fd);
        b.target = k;
        for (std::size_t at = root->size() + 1; at <= k.size(); ++at)
            if (at == k.size() || k[at] == '/') b.mkdirs.push_back(k.substr(0, at));
        plan.binds.push_back(std::move(b));
    }
    return {};
}

void close_plan(ChildPlan& plan) { (void)plan; }

int enter(const ChildPlan& plan) {
    if (const int e = enter_setup(plan); e != 0) return e;
    return drop_identity(plan);
}

int enter_setup(const ChildPlan& plan) {
    for (int fd : plan.join_fds)
        if (::write(fd, "0", 1) != 1) return errno;
    if (plan.mounts) {
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
        // The folders to bind back, opened in this namespace before they are covered (a mount
        // of the parent's namespace cannot be bound here).
        int src[ChildPlan::kMaxBinds];
        std::size_t n = 0;
        for (const auto& b : plan.binds) {
            src[n] = ::open(b.target.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (src[n] < 0) return errno;
            ++n;
        }
        for (const std::string& h : plan.hide) {
            // A folder inside one hidden already is gone from view: nothing to do.
            if (::access(h.c_str(), F_OK) != 0) continue;
            bool shared_tmp = false;
            for (const char* t : kPrivateTmpDirs) shared_tmp = shared_tmp || h == t;
            if (::mount("tmpfs", h.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                        shared_tmp ? "mode=1777,size=50%" : "mode=0755,size=1m") != 0)
                return errno;
        }
        for (std::size_t i = 0; i < n; ++i) {
            const auto& b = plan.binds[i];
            for (const std::string& d : b.mkdirs)
                if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) return errno;
            char path[32] = "/proc/self/fd/";  // + the descriptor's number, no allocation
            char digits[12];
            int k = 0;
            for (int v = src[i]; k == 0 || v > 0; v /= 10) digits[k++] = static_cast<char>('0' + v % 10);
            std::size_t at = 14;
            while (k > 0) path[at++] = digits[--k];
            path[at] = '\0';
            if (::mount(path, b.target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
            ::close(src[i]);
        }
        if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) return errno;
    }
    return 0;
}

int set_identity(uid_t uid, gid_t gid, const gid_t* groups, std::size_t n) {
    // Not glibc's setgroups/setgid/setuid: in a process cloned from a multi-threaded one they
    // signal the threads glibc still lists (the parent's) and wait for each (nptl_setxid.c);
    // one that was being created at the clone is waited for forever. The system calls change
    // the calling thread's credentials, here the whole (single-threaded) process's.
    if (::syscall(SYS_setgroups, n, groups) != 0) return errno;
    if (::syscall(SYS_setgid, gid) != 0) return errno;
    if (::syscall(SYS_setuid, uid) != 0) return errno;
    return 0;
}

int drop_identity(const ChildPlan& plan) {
    if (plan.id.drop) {
        if (const int e = set_identity(plan.id.uid, plan.id.gid, plan.id.groups.data(), plan.id.groups.size()); e != 0)
            return e;
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    }
    return 0;
}

int set_oom_score_adj(const char* value) {
    const int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    const std::size_t n = std::strlen(value);
    const int e = ::write(fd, value, n) == static_cast<ssize_t>(n) ? 0 : errno;
    ::close(fd);
    return e;
}

}  // namespace astraeus::exec::sandbox
