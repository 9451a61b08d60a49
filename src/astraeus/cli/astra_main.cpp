// `astra`: the client command line of the Astraeus service (see client/astra_cli.hpp).
#include <cstdlib>
#include <iostream>

#include "astraeus/client/astra_cli.hpp"

int main(int argc, char** argv) {
    return astraeus::client::run_astra(argc, argv, std::getenv("ASTRALYX_API"),
                                       std::getenv("ASTRALYX_TOKEN"), std::cout, std::cerr);
}
