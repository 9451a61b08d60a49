// `astraeus admin`: bootstrap organisations, clusters, workspaces and API tokens
#include <iostream>

#include "astraeus/cli/commands.hpp"

namespace astraeus::cli {

std::function<int()> add_admin(CLI::App& app) {
    app.add_subcommand("admin", "bootstrap organisations, clusters, workspaces and API tokens");
    return [] {
        std::cerr << "astraeus admin: not implemented yet\n";
        return 1;
    };
}

}  // namespace astraeus::cli
