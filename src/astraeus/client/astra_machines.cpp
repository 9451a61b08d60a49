#include "astraeus/client/astra_machines.hpp"

#include <nlohmann/json.hpp>
#include <sstream>

namespace astraeus::client {

using nlohmann::json;

void add_machines_commands(CLI::App& app, MachinesCommands& m) {
    auto* cmd = app.add_subcommand("machines", "the cluster's machines: list, drain, undrain (operators, org admins)");
    cmd->require_subcommand(1);
    m.list = cmd->add_subcommand("list", "every machine: state, pool, GPUs used, last heartbeat, what runs there");
    m.list->add_flag("--json", m.as_json, "print the server's JSON as is");
    m.drain = cmd->add_subcommand(
        "drain", "no new placements on NAME; its runs get the checkpoint signal and resume elsewhere (preemption)");
    m.drain->add_option("name", m.name, "the machine's name")->required();
    m.drain->add_flag("--json", m.as_json, "print the server's JSON as is");
    m.undrain = cmd->add_subcommand("undrain", "NAME takes work again");
    m.undrain->add_option("name", m.name, "the machine's name")->required();
    m.undrain->add_flag("--json", m.as_json, "print the server's JSON as is");
}

Result<std::string> machines_text(const json& doc) {
    if (!doc.contains("machines") || !doc["machines"].is_array()) return fail("the answer has no 'machines' list");
    std::ostringstream s;
    char line[512];
    std::snprintf(line, sizeof line, "%-20s %-12s %-14s %5s %5s  %-20s %s\n", "NAME", "POOL", "STATE", "GPUS", "USED",
                  "LAST-HEARTBEAT", "RUNS");
    s << line;
    for (const json& m : doc["machines"]) {
        std::string runs;
        for (const json& r : m.value("runs", json::array())) {
            if (!runs.empty()) runs += ", ";
            runs += r.value("workspace", "") + "/" + r.value("run", "") + " (" + r.value("state", "") + ")";
        }
        std::snprintf(line, sizeof line, "%-20s %-12s %-14s %5d %5d  %-20s %s\n", m.value("name", "").c_str(),
                      m.value("pool", "").c_str(), m.value("state", "").c_str(), m.value("gpus", 0),
                      m.value("gpus_used", 0), m.value("last_heartbeat", "-").c_str(), runs.empty() ? "-" : runs.c_str());
        s << line;
    }
    return s.str();
}

int run_machines(const MachinesCommands& m, const ApiClient& client, std::ostream& out, std::ostream& err) {
    CallResult res = m.list->parsed()
                         ? client.get("/machines")
                         : client.post("/machines/" + percent_encode(m.name) + (m.drain->parsed() ? "/drain" : "/undrain"),
                                       "{}");
    if (!res) {
        err << "astra: " << res.error().message << '\n';
        return res.error().exit_code;
    }
    if (m.as_json) {
        out << *res;
        if (res->empty() || res->back() != '\n') out << '\n';
        return 0;
    }
    const json doc = json::parse(*res, nullptr, false);
    if (doc.is_discarded()) {
        err << "astra: the server's answer is not JSON\n";
        return 1;
    }
    if (m.list->parsed()) {
        auto text = machines_text(doc);
        if (!text) {
            err << "astra: " << text.error().message << '\n';
            return 1;
        }
        out << *text;
        return 0;
    }
    out << "machine " << doc.value("machine", m.name) << (doc.value("drained", false) ? " drained" : " undrained");
    if (doc.value("drained", false)) out << ", " << doc.value("runs_stopped", 0) << " run(s) stopped with the checkpoint signal";
    out << '\n';
    return 0;
}

}  // namespace astraeus::client
