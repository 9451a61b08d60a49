// `astra machines list|drain|undrain NAME` (operators and org admins): the machines of the
// cluster (GET /v1/machines) as a table, and draining (POST /v1/machines/NAME/drain|undrain).
// Thread safety: plain functions.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/client/api_client.hpp"

namespace astraeus::client {

struct MachinesCommands {
    CLI::App* list = nullptr;
    CLI::App* drain = nullptr;
    CLI::App* undrain = nullptr;
    std::string name;
    bool as_json = false;
    bool parsed() const { return list->parsed() || drain->parsed() || undrain->parsed(); }
};

/// Adds `machines list|drain|undrain` to `app`; the parsed values land in `m`.
void add_machines_commands(CLI::App& app, MachinesCommands& m);
/// Runs the parsed machines command; the exit code (0 ok, 2 refused, 1 server/connection).
int run_machines(const MachinesCommands& m, const ApiClient& client, std::ostream& out, std::ostream& err);
/// The table of GET /v1/machines: NAME POOL STATE GPUS USED LAST-HEARTBEAT RUNS.
Result<std::string> machines_text(const nlohmann::json& doc);

}  // namespace astraeus::client
