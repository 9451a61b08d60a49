// `astraeus serve`: the live service: REST API, scheduler, goodput, metrics
#include <iostream>

#include "astraeus/cli/commands.hpp"

namespace astraeus::cli {

std::function<int()> add_serve(CLI::App& app) {
    app.add_subcommand("serve", "the live service: REST API, scheduler, goodput, metrics");
    return [] {
        std::cerr << "astraeus serve: not implemented yet\n";
        return 1;
    };
}

}  // namespace astraeus::cli
