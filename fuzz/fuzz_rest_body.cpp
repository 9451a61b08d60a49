// Fuzz target of REST request bodies (service/request_parse.hpp): POST /v1/runs and POST
// /v1/runs/NAME/progress. The first byte is the progress run's gang size (1..16); the rest
// is the body, given to both parsers. Properties of an accepted submit body: a name, a positive
// gang, no image, a command (argv array or string, env, workdir, running_at) whose stored form
// reads back equal (exec::to_stored / from_stored), an argv that starts with a program, and a
// workdir that is empty or absolute.
#include <cstdint>
#include <string_view>

#include "astraeus/exec/command_spec.hpp"
#include "astraeus/service/request_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const int workers = 1 + data[0] % 16;
    const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
    auto submit = astraeus::service::parse_submit_body(body);
    if (submit && (submit->workers < 1 || submit->gpus_per_worker < 1 || submit->name.empty()))
        __builtin_trap();  // an accepted body always has a name and a positive gang
    if (submit) {
        const astraeus::exec::CommandSpec& c = submit->command;
        if (!submit->image.empty()) __builtin_trap();  // an image is always refused
        if (!c.argv.empty() && c.argv.front().empty()) __builtin_trap();
        if (!c.workdir.empty() && c.workdir.front() != '/') __builtin_trap();
        const astraeus::exec::CommandSpec back = astraeus::exec::from_stored(astraeus::exec::to_stored(c));
        if (back.argv != c.argv || back.env != c.env || back.workdir != c.workdir ||
            back.running_at_progress != c.running_at_progress)
            __builtin_trap();  // what the store keeps is what was submitted
    }
    auto json = astraeus::service::parse_progress_body(body);
    if (json) {
        auto reports = astraeus::service::progress_reports(*json, workers);
        if (reports)
            for (const auto& [w, step] : *reports)
                if (w < 0 || w >= workers || step < 0) __builtin_trap();
    }
    return 0;
}
