// A run's command as the service stores it and the executors run it: argv, the run's own
// environment variables, its working directory and when it counts as running.
// The stored form (the store's `command` column) is JSON:
//   {"argv": ["python3", "train.py"], "env": {"K": "V"}, "workdir": "/data", "running_at": "progress"}
// and a plain string (what stores written before executors ran commands hold) is the command
// `/bin/sh -c STRING`. Thread safety: plain values and pure functions.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"

namespace astraeus::exec {

struct CommandSpec {
    std::vector<std::string> argv;           ///< empty: no command (simulated runs)
    std::map<std::string, std::string> env;
    std::string workdir;                     ///< empty: the run's directory
    bool running_at_progress = false;        ///< "running_at": "progress" (default "up")
};

/// The stored JSON text of `c`.
std::string to_stored(const CommandSpec& c);
/// The command in stored text `s` (JSON as above, or a plain string: /bin/sh -c s; "" = none).
CommandSpec from_stored(const std::string& s);
/// The argv of the API's string form: {"/bin/sh", "-c", s}.
std::vector<std::string> shell_argv(const std::string& s);

}  // namespace astraeus::exec
