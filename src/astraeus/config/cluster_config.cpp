#include "astraeus/config/cluster_config.hpp"

#include <fmt/format.h>

#include <map>

#include "astraeus/base/count_text.hpp"
#include "astraeus/trace/csv.hpp"

namespace astraeus {
namespace {

Result<ClusterSpec> read_machine_list(const std::string& path) {
    auto text = read_text_file(path);
    if (!text) return std::unexpected(text.error());
    const auto lines = split_lines(*text);
    if (lines.empty()) return fail(path + ": empty machine list");
    auto header = split_csv(lines[0]);
    std::size_t col = header.size(), id_col = header.size();
    for (std::size_t c = 0; c < header.size(); ++c) {
        std::string h = header[c];
        while (!h.empty() && h.front() == ' ') h.erase(0, 1);
        if (h == "number of GPUs" || h == "gpus") col = c;
        if (h == "machineId" || h == "machine" || h == "id") id_col = c;
    }
    if (col == header.size())
        return fail(path + ":1: missing column 'number of GPUs' (or 'gpus') in the header");
    ClusterSpec spec;
    std::map<std::string, std::size_t> seen;  // machine id -> line
    for (std::size_t i = 1; i < lines.size(); ++i) {
        if (lines[i].empty()) continue;
        auto f = split_csv(lines[i]);
        if (id_col < f.size()) {
            std::string id = f[id_col];
            while (!id.empty() && id.front() == ' ') id.erase(0, 1);
            const auto [it, fresh] = seen.emplace(id, i + 1);
            if (!fresh)
                return fail(fmt::format("{}:{}: machine '{}' is listed twice (first on line {})",
                                        path, i + 1, id, it->second));
        }
        std::string v = col < f.size() ? f[col] : "";
        while (!v.empty() && v.front() == ' ') v.erase(0, 1);
        auto g = parse_int(v);
        if (!g || *g < 0 || *g > 1024)
            return fail(fmt::format("{}:{}: field 'number of GPUs': expected an integer in "
                                    "0..1024, got '{}'", path, i + 1, v));
        if (*g > 0) spec.machine_gpus.push_back(static_cast<int>(*g));
    }
    if (spec.machine_gpus.empty()) return fail(path + ": no machine with GPUs");
    return spec;
}

}  // namespace

Result<ClusterSpec> resolve_cluster(const std::string& value) {
    if (value == "philly") {
        ClusterSpec c = ClusterSpec::uniform(231, 8);
        c.machine_gpus.insert(c.machine_gpus.end(), 321, 2);
        return c;
    }
    if (value == "reference-1120") return ClusterSpec::uniform(140, 8);
    const auto x = value.find('x');
    if (x != std::string::npos && value.find_first_not_of("0123456789x") == std::string::npos) {
        auto m = parse_int(std::string_view(value).substr(0, x));
        auto g = parse_int(std::string_view(value).substr(x + 1));
        if (m && g && *m > 0 && *g > 0 && *m <= 1000000 && *g <= 1024)
            return ClusterSpec::uniform(static_cast<int>(*m), static_cast<int>(*g));
        // The shape is MACHINESxGPUS: say which number is wrong and what it must be.
        const bool machines_bad = !(m && *m > 0 && *m <= 1000000);
        const std::string got(machines_bad ? std::string_view(value).substr(0, x) : std::string_view(value).substr(x + 1));
        return fail("--cluster '" + value + "': " +
                    (machines_bad ? "the number of machines must be from 1 to 1000000"
                                  : "the GPUs per machine must be from 1 to 1024") +
                    ", got '" + got + "' (expected MACHINESxGPUS, e.g. 40x8)");
    }
    if (value.ends_with(".csv") || value.ends_with(".csv.gz")) return read_machine_list(value);
    return fail("--cluster '" + value +
                "': expected MACHINESxGPUS (e.g. 40x8), a preset (philly, reference-1120) or a "
                "machine-list CSV file");
}

std::string describe_cluster(const ClusterSpec& c) {
    std::map<int, int, std::greater<>> by_size;
    for (int g : c.machine_gpus) ++by_size[g];
    std::string parts;
    for (auto [g, n] : by_size) parts += fmt::format("{}{} x {}", parts.empty() ? "" : ", ", n, g);
    return fmt::format("{}, {} ({})", count_text(c.machines(), "machine"), count_text(c.total_gpus(), "GPU"), parts);
}

}  // namespace astraeus
