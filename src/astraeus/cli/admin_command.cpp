// `astraeus admin`: bootstrap organisations, clusters, workspaces and API tokens. Works on the
// store directly (offline, or beside a running server: SQLite serialises the writers, PostgreSQL
// runs each in its transaction): the data directory's SQLite, or the PostgreSQL database of
// `--config FILE`'s "store".
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "astraeus/base/count_text.hpp"
#include "astraeus/base/terminal_text.hpp"
#include "astraeus/cli/commands.hpp"
#include "astraeus/goodput_io/rfc3339.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/service/service.hpp"
#include "astraeus/service/store_open.hpp"
#include "astraeus/service/token.hpp"
#include "astraeus/store/store.hpp"

namespace astraeus::cli {
namespace {

struct AdminOptions {
    std::string data_dir = "astraeus-data";
    std::string config;
    std::string org, cluster;
    std::string workspace;
    double weight = 1.0;
    std::string token_workspace;
    bool org_admin = false;
    bool operator_ = false;
    bool agent = false;
    std::string token_name;
    std::int64_t token_id = 0;
};

int error(const std::string& m, int rc = 2) {
    std::cerr << "astraeus admin: " << m << "\n";
    return rc;
}

struct Opened {
    std::unique_ptr<store::Store> st;
    store::OrgRec org;
    store::ClusterRec cluster;
};

/// The configuration of --config (its "store"), or the defaults with --data-dir.
Result<service::ServiceConfig> admin_config(const AdminOptions& o) {
    service::ServiceConfig cfg;
    if (!o.config.empty()) {
        auto c = service::load_config(o.config);
        if (!c) return c;
        cfg = *c;
    }
    cfg.data_dir = o.data_dir;
    return cfg;
}

Result<Opened> open_initialised(const AdminOptions& o) {
    auto cfg = admin_config(o);
    if (!cfg) return std::unexpected(cfg.error());
    const std::string& dir = o.data_dir;
    // Never create a store here: a mistyped --data-dir would leave an empty one behind.
    if (!service::uses_postgresql(*cfg) && !std::filesystem::exists(std::filesystem::path(dir) / "astraeus.db"))
        return fail("no Astraeus data in " + dir + " (no astraeus.db): run `astraeus admin init --data-dir " +
                    dir + "` first, or check --data-dir");
    auto st = service::open_configured_store(*cfg, o.config);
    if (!st) return std::unexpected(st.error());
    const std::string where = service::uses_postgresql(*cfg) ? "the PostgreSQL database of " + o.config : "the data directory " + dir;
    auto orgs = (*st)->orgs();
    if (!orgs) return std::unexpected(orgs.error());
    if (orgs->empty()) return fail(where + " is not initialised: run `astraeus admin init` first");
    auto cl = (*st)->clusters();
    if (!cl) return std::unexpected(cl.error());
    if (cl->empty()) return fail(where + " has no cluster");
    return Opened{std::move(*st), orgs->front(), cl->front()};
}

int do_init(const AdminOptions& o) {
    auto c = admin_config(o);
    if (!c) return error(c.error().message);
    const service::ServiceConfig& cfg = *c;
    const std::string& org = o.org;  // both flags are required (the config's names are not used)
    const std::string& cluster = o.cluster;
    // The names go into URLs, metric labels and every table: the pool names' rule (no control
    // characters, which a terminal would obey; not blank: '' used to become "default").
    for (const auto& [what, name] : {std::pair{"organisation", &o.org}, std::pair{"cluster", &o.cluster}})
        if (!service::valid_pool_name(*name))
            return error(std::string("bad ") + what + " name '" + terminal_safe(*name) +
                         "': 1 to 63 bytes of UTF-8 without control characters or a space at "
                         "either end");
    auto st = service::open_configured_store(cfg, o.config);
    if (!st) return error(st.error().message, 1);
    // Initialised before (the README's walk-through run twice): name the folder and what it holds
    // (the store's own refusal said only "the data directory is already initialised").
    if (auto orgs = (*st)->orgs(); orgs && !orgs->empty()) {
        const bool pg = service::uses_postgresql(cfg);
        return error((pg ? "the PostgreSQL database of " + o.config : o.data_dir) +
                     " is already initialised (organisation " + terminal_safe(orgs->front().name) +
                     ")" + (pg ? "" : ": use it as it is, or give another --data-dir"));
    }
    auto ids = (*st)->init(org, cluster);
    if (!ids) return error(ids.error().message);
    int machines = 0, gpus = 0;
    for (const auto& pc : cfg.pools) {
        auto pid = (*st)->add_pool(ids->second, pc.name);
        if (!pid) return error(pid.error().message, 1);
        int k = 0;
        for (const auto& g : pc.machines)
            for (int i = 0; i < g.count; ++i) {
                auto mid = (*st)->add_machine(*pid, pc.name + "-" + std::to_string(++k), g.gpus);
                if (!mid) return error(mid.error().message, 1);
                ++machines;
                gpus += g.gpus;
            }
    }
    std::cout << "initialised " << (service::uses_postgresql(cfg) ? "the PostgreSQL database of " + o.config : o.data_dir)
              << ": organisation " << org << ", cluster " << cluster
              << ", " << count_text(std::ssize(cfg.pools), "pool") << ", " << count_text(machines, "machine")
              << ", " << count_text(gpus, "GPU") << " (" << (o.config.empty() ? "the default configuration" : o.config)
              << ")\n"
              << "these machines are what `astraeus serve --executor sim` schedules on; `serve --executor local` (the "
                 "default) uses this machine alone, with its GPUs (from NVML, or --gpus N), and --executor agents "
                 "or slurm the machines they report\n";
    return 0;
}

int do_workspace_add(const AdminOptions& o) {
    if (!(o.weight >= 0 && o.weight <= 1e6)) return error("--weight must be in 0..1e6");
    if (!service::valid_name(o.workspace))
        return error("bad workspace name '" + o.workspace +
                     "': 1 to 63 of A-Z a-z 0-9 . _ - (starting with a letter or digit)");
    auto op = open_initialised(o);
    if (!op) return error(op.error().message);
    auto before = op->st->workspaces(op->org.id, op->cluster.id);
    if (!before) return error(before.error().message, 1);
    std::optional<double> old_weight;
    for (const auto& w : *before)
        if (w.name == o.workspace) old_weight = w.weight;
    auto id = op->st->set_workspace(op->org.id, op->cluster.id, o.workspace, o.weight);
    if (!id) return error(id.error().message, 1);
    std::cout << "workspace " << o.workspace << " (id " << *id << "), weight " << o.weight << " on cluster "
              << op->cluster.name;
    // An existing workspace: its weight is set (said, so a typo of a new name is not silent).
    if (old_weight) std::cout << " (it existed; weight was " << *old_weight << ")";
    std::cout << "\n";
    return 0;
}

int do_workspace_list(const AdminOptions& o) {
    auto op = open_initialised(o);
    if (!op) return error(op.error().message);
    auto ws = op->st->workspaces(op->org.id, op->cluster.id);
    if (!ws) return error(ws.error().message, 1);
    std::printf("%-5s %-32s %s\n", "ID", "WORKSPACE", "WEIGHT");
    for (const auto& w : *ws)
        std::printf("%-5lld %-32s %g\n", static_cast<long long>(w.id), w.name.c_str(), w.weight);
    return 0;
}

int do_token_create(const AdminOptions& o) {
    const int kinds = (o.token_workspace.empty() ? 0 : 1) + (o.org_admin ? 1 : 0) + (o.operator_ ? 1 : 0) +
                      (o.agent ? 1 : 0);
    if (kinds != 1) return error("give exactly one of --workspace W, --org-admin, --operator, --agent");
    auto op = open_initialised(o);
    if (!op) return error(op.error().message);
    store::TokenRec t;
    t.org_id = op->org.id;
    if (!o.token_workspace.empty()) {
        auto ws = op->st->workspaces(op->org.id, op->cluster.id);
        if (!ws) return error(ws.error().message, 1);
        for (const auto& w : *ws)
            if (w.name == o.token_workspace) t.workspace_id = w.id;
        if (t.workspace_id == 0)
            return error("no workspace named '" + o.token_workspace + "' (add it with `astraeus admin workspace add`)");
        t.scope = store::Scope::Workspace;
    } else if (o.org_admin) {
        t.scope = store::Scope::OrgAdmin;
    } else if (o.agent) {
        t.scope = store::Scope::Agent;  // the agent endpoints of this cluster only
        t.cluster_id = op->cluster.id;
    } else {
        t.scope = store::Scope::Operator;
        t.cluster_id = op->cluster.id;
    }
    auto token = service::new_token();
    if (!token) return error(token.error().message, 1);
    t.hash = service::sha256_hex(*token);
    t.name = o.token_name.empty() ? (o.token_workspace.empty() ? std::string(store::to_string(t.scope)) : o.token_workspace)
                                  : o.token_name;
    t.created_s = service::Clock::real_now();
    auto id = op->st->add_token(t);
    if (!id) return error(id.error().message, 1);
    std::cerr << "token " << *id << " (" << store::to_string(t.scope) << ", " << t.name
              << "): shown once, keep it safe\n";
    std::cout << *token << "\n";
    return 0;
}

int do_token_list(const AdminOptions& o) {
    auto op = open_initialised(o);
    if (!op) return error(op.error().message);
    auto ts = op->st->tokens();
    if (!ts) return error(ts.error().message, 1);
    auto ws = op->st->workspaces(op->org.id, op->cluster.id);
    if (!ws) return error(ws.error().message, 1);
    std::printf("%-5s %-20s %-10s %-16s %-21s %s\n", "ID", "NAME", "SCOPE", "WORKSPACE", "CREATED", "REVOKED");
    for (const auto& t : *ts) {
        std::string wname = "-";
        for (const auto& w : *ws)
            if (w.id == t.workspace_id) wname = w.name;
        std::printf("%-5lld %-20s %-10s %-16s %-21s %s\n", static_cast<long long>(t.id), t.name.c_str(),
                    store::to_string(t.scope), wname.c_str(), goodput::format_rfc3339(t.created_s).c_str(),
                    t.revoked ? "yes" : "no");
    }
    return 0;
}

int do_token_revoke(const AdminOptions& o) {
    auto op = open_initialised(o);
    if (!op) return error(op.error().message);
    if (auto ok = op->st->revoke_token(o.token_id); !ok) return error(ok.error().message);
    std::cout << "token " << o.token_id << " revoked\n";
    return 0;
}

}  // namespace

std::function<int()> add_admin(CLI::App& app) {
    auto o = std::make_shared<AdminOptions>();
    CLI::App* a = app.add_subcommand("admin", "bootstrap organisations, clusters, workspaces and API tokens");
    a->require_subcommand(1);
    auto data_dir = [o](CLI::App* s) {
        s->add_option("--data-dir", o->data_dir, "directory of the SQLite store (default astraeus-data)");
    };
    // The service config whose "store" to use (a PostgreSQL database); init reads its pools too.
    auto config = [o](CLI::App* s) {
        s->add_option("--config", o->config, "service config: its \"store\" (PostgreSQL) instead of --data-dir's SQLite");
    };
    CLI::App* init = a->add_subcommand("init", "create the organisation, its cluster, pools and machines");
    init->add_option("--org", o->org, "organisation name")->required();
    init->add_option("--cluster", o->cluster, "cluster name")->required();
    init->add_option("--config", o->config, "service config: its pools and machines (default: 4 x 8 GPUs) and \"store\"");
    data_dir(init);
    CLI::App* ws = a->add_subcommand("workspace", "workspaces (tenants)");
    ws->require_subcommand(1);
    CLI::App* ws_add = ws->add_subcommand("add", "add a workspace, or set its weight");
    ws_add->add_option("name", o->workspace, "workspace name")->required();
    ws_add->add_option("--weight", o->weight, "its weight on the cluster (default 1)");
    data_dir(ws_add);
    config(ws_add);
    CLI::App* ws_list = ws->add_subcommand("list", "list the workspaces and their weights on the cluster");
    data_dir(ws_list);
    config(ws_list);
    CLI::App* tok = a->add_subcommand("token", "API tokens");
    tok->require_subcommand(1);
    CLI::App* create = tok->add_subcommand("create", "create a token and print it (once)");
    create->add_option("--workspace", o->token_workspace, "a workspace token");
    create->add_flag("--org-admin", o->org_admin, "an organisation-admin token");
    create->add_flag("--operator", o->operator_, "a cluster-operator token");
    create->add_flag("--agent", o->agent, "a node agent's token (the agent endpoints of the cluster only)");
    create->add_option("--name", o->token_name, "a name to recognise it by");
    data_dir(create);
    config(create);
    CLI::App* list = tok->add_subcommand("list", "list tokens (never the tokens themselves)");
    data_dir(list);
    config(list);
    CLI::App* revoke = tok->add_subcommand("revoke", "revoke a token");
    revoke->add_option("id", o->token_id, "token id (see token list)")->required();
    data_dir(revoke);
    config(revoke);
    return [o, init, ws_add, ws_list, create, list, revoke] {
        if (init->parsed()) return do_init(*o);
        if (ws_add->parsed()) return do_workspace_add(*o);
        if (ws_list->parsed()) return do_workspace_list(*o);
        if (create->parsed()) return do_token_create(*o);
        if (list->parsed()) return do_token_list(*o);
        if (revoke->parsed()) return do_token_revoke(*o);
        return 2;
    };
}

}  // namespace astraeus::cli
