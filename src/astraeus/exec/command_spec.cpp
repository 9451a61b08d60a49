#include "astraeus/exec/command_spec.hpp"

#include <nlohmann/json.hpp>

namespace astraeus::exec {

using nlohmann::json;

std::vector<std::string> shell_argv(const std::string& s) { return {"/bin/sh", "-c", s}; }

std::string to_stored(const CommandSpec& c) {
    if (c.argv.empty() && c.env.empty() && c.workdir.empty() && !c.running_at_progress) return "";
    json j;
    j["argv"] = c.argv;
    j["env"] = c.env;
    if (!c.workdir.empty()) j["workdir"] = c.workdir;
    if (c.running_at_progress) j["running_at"] = "progress";
    return j.dump();
}

CommandSpec from_stored(const std::string& s) {
    CommandSpec c;
    if (s.empty()) return c;
    if (s.front() == '{') {
        const json j = json::parse(s, nullptr, false);
        if (j.is_object() && j.contains("argv") && j["argv"].is_array()) {
            for (const auto& a : j["argv"])
                if (a.is_string()) c.argv.push_back(a.get<std::string>());
            if (j.contains("env") && j["env"].is_object())
                for (auto it = j["env"].begin(); it != j["env"].end(); ++it)
                    if (it.value().is_string()) c.env[it.key()] = it.value().get<std::string>();
            if (j.contains("workdir") && j["workdir"].is_string()) c.workdir = j["workdir"].get<std::string>();
            c.running_at_progress = j.value("running_at", std::string()) == "progress";
            return c;
        }
    }
    c.argv = shell_argv(s);
    return c;
}

}  // namespace astraeus::exec
