#include "astraeus/store/sql_text.hpp"

#include <cctype>
#include <iterator>

namespace astraeus::store {
namespace {

const char* const kMigrations[] = {
    // 1: tenancy, tokens, runs, workers, attempts, goodput, alerts, meta
    R"sql(
CREATE TABLE organizations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE clusters (id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL, UNIQUE (org_id, name));
CREATE TABLE pools (id INTEGER PRIMARY KEY, cluster_id INTEGER NOT NULL REFERENCES clusters(id),
  name TEXT NOT NULL, UNIQUE (cluster_id, name));
CREATE TABLE machines (id INTEGER PRIMARY KEY, pool_id INTEGER NOT NULL REFERENCES pools(id),
  name TEXT NOT NULL UNIQUE, gpus INTEGER NOT NULL CHECK (gpus > 0), up INTEGER NOT NULL DEFAULT 1);
CREATE TABLE workspaces (id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL, UNIQUE (org_id, name));
CREATE TABLE workspace_weights (workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  cluster_id INTEGER NOT NULL REFERENCES clusters(id), weight REAL NOT NULL CHECK (weight >= 0),
  PRIMARY KEY (workspace_id, cluster_id));
CREATE TABLE tokens (id INTEGER PRIMARY KEY, name TEXT NOT NULL, scope TEXT NOT NULL,
  org_id INTEGER NOT NULL REFERENCES organizations(id), workspace_id INTEGER, cluster_id INTEGER,
  hash TEXT NOT NULL UNIQUE, created_s INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE runs (id INTEGER PRIMARY KEY, workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  pool_id INTEGER NOT NULL REFERENCES pools(id), name TEXT NOT NULL, workers INTEGER NOT NULL,
  gpus_per_worker INTEGER NOT NULL, time_limit_s INTEGER NOT NULL, sim_duration_s INTEGER NOT NULL,
  command TEXT NOT NULL, image TEXT NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL,
  stop_cause TEXT NOT NULL, submitted_s INTEGER NOT NULL, started_s INTEGER NOT NULL,
  ended_s INTEGER NOT NULL, phase_since_s INTEGER NOT NULL, executed_s INTEGER NOT NULL,
  lease_start_s INTEGER NOT NULL, lease_end_s INTEGER NOT NULL, attempts INTEGER NOT NULL,
  UNIQUE (workspace_id, name));
CREATE TABLE workers (run_id INTEGER NOT NULL REFERENCES runs(id), idx INTEGER NOT NULL,
  phase INTEGER NOT NULL, cause INTEGER NOT NULL, attempt INTEGER NOT NULL, parts TEXT NOT NULL,
  level REAL NOT NULL, PRIMARY KEY (run_id, idx));
CREATE TABLE attempts (run_id INTEGER NOT NULL REFERENCES runs(id), number INTEGER NOT NULL,
  started_s INTEGER NOT NULL, ended_s INTEGER NOT NULL, outcome TEXT NOT NULL,
  PRIMARY KEY (run_id, number));
CREATE TABLE goodput_hourly (run_id INTEGER NOT NULL, machine_id INTEGER NOT NULL,
  hour INTEGER NOT NULL, category INTEGER NOT NULL, held INTEGER NOT NULL, gpu_s INTEGER NOT NULL,
  PRIMARY KEY (run_id, machine_id, hour, category, held));
CREATE INDEX goodput_hourly_hour ON goodput_hourly(hour);
CREATE TABLE alerts (name TEXT NOT NULL, scope TEXT NOT NULL, target TEXT NOT NULL,
  state TEXT NOT NULL, since INTEGER NOT NULL, value REAL NOT NULL,
  PRIMARY KEY (name, scope, target));
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
)sql",
    // 2: machines registered by node agents, drains, heartbeats (docs/agents.md)
    R"sql(
ALTER TABLE machines ADD COLUMN from_agent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE machines ADD COLUMN drained INTEGER NOT NULL DEFAULT 0;
ALTER TABLE machines ADD COLUMN last_heartbeat_s INTEGER NOT NULL DEFAULT -1;
ALTER TABLE machines ADD COLUMN addr TEXT NOT NULL DEFAULT '';
)sql",
    // 3: an agent token registers one machine name (docs/security.md "Agent tokens")
    R"sql(
CREATE TABLE agent_token_machines (token_id INTEGER PRIMARY KEY REFERENCES tokens(id),
                                   machine TEXT NOT NULL);
)sql",
    // 4: Idempotency-Key of POST /v1/runs (docs/api.md "Idempotent submits")
    R"sql(
CREATE TABLE idempotency_keys (token_id INTEGER NOT NULL, key TEXT NOT NULL,
                               body_sha256 TEXT NOT NULL, run_id INTEGER NOT NULL,
                               status INTEGER NOT NULL, reply TEXT NOT NULL,
                               created_s INTEGER NOT NULL, PRIMARY KEY (token_id, key));
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_s);
)sql",
    // 5: the web pages' sign-in sessions (docs/security.md "Web sessions"): the secret's hash only
    R"sql(
CREATE TABLE sessions (id INTEGER PRIMARY KEY, token_id INTEGER NOT NULL REFERENCES tokens(id),
                       hash TEXT NOT NULL UNIQUE, created_s INTEGER NOT NULL,
                       expires_s INTEGER NOT NULL);
CREATE INDEX sessions_token ON sessions (token_id, created_s);
CREATE INDEX sessions_expires ON sessions (expires_s);
)sql",
    // 6: where each worker's goodput count stands, for an exact count across a restart
    // (spec/goodput.md "The count"; goodput_io/pending_count.hpp)
    R"sql(
ALTER TABLE workers ADD COLUMN counted_s INTEGER NOT NULL DEFAULT -1;
ALTER TABLE workers ADD COLUMN decided_s INTEGER NOT NULL DEFAULT -1;
ALTER TABLE workers ADD COLUMN pending TEXT NOT NULL DEFAULT '';
)sql",
};

bool ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// `sql` with every whole-word `from` (outside single quotes) replaced by `to`.
std::string replace_words(std::string_view sql, std::string_view from, std::string_view to) {
    std::string out;
    bool quoted = false;
    for (std::size_t i = 0; i < sql.size();) {
        if (sql[i] == '\'') quoted = !quoted;
        if (!quoted && sql.substr(i, from.size()) == from && (i == 0 || !ident(sql[i - 1])) &&
            (i + from.size() == sql.size() || !ident(sql[i + from.size()]))) {
            out += to;
            i += from.size();
            continue;
        }
        out += sql[i++];
    }
    return out;
}

}  // namespace

const char* to_string(Scope s) {
    switch (s) {
        case Scope::Workspace: return "workspace";
        case Scope::OrgAdmin: return "org-admin";
        case Scope::Operator: return "operator";
        case Scope::Agent: return "agent";
    }
    return "workspace";
}

Scope scope_from(std::string_view s) {
    return s == "org-admin" ? Scope::OrgAdmin : s == "operator" ? Scope::Operator : s == "agent" ? Scope::Agent : Scope::Workspace;
}

std::span<const char* const> migrations() { return {std::begin(kMigrations), std::end(kMigrations)}; }

std::string postgres_dialect(std::string_view sql) {
    std::string s = replace_words(sql, "id INTEGER PRIMARY KEY", "id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
    s = replace_words(s, "INTEGER", "BIGINT");
    return replace_words(s, "REAL", "DOUBLE PRECISION");
}

std::string numbered_params(std::string_view sql) {
    std::string out;
    bool quoted = false;
    int n = 0;
    for (std::size_t i = 0; i < sql.size(); ++i) {
        const char c = sql[i];
        if (c == '\'') quoted = !quoted;
        if (quoted || c != '?') {
            out += c;
            continue;
        }
        out += '$';
        if (i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1])) != 0) continue;  // ?N
        out += std::to_string(++n);
    }
    return out;
}

}  // namespace astraeus::store
