// `astraeus goodput`: goodput accounting of an event log (replay)
#include <iostream>

#include "astraeus/cli/commands.hpp"

namespace astraeus::cli {

std::function<int()> add_goodput(CLI::App& app) {
    app.add_subcommand("goodput", "goodput accounting of an event log (replay)");
    return [] {
        std::cerr << "astraeus goodput: not implemented yet\n";
        return 1;
    };
}

}  // namespace astraeus::cli
