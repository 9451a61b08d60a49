#include "astraeus/cli/input_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "astraeus/trace/csv.hpp"

namespace astraeus::cli {

Result<std::unique_ptr<std::istream>> open_input_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return fail(path + ": is a directory (expected a file)");
    auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
    if (!*in) return fail(path + ": cannot open (" + std::strerror(errno) + ")");
    char magic[2] = {0, 0};
    in->read(magic, 2);
    const bool gzip = in->gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                      static_cast<unsigned char>(magic[1]) == 0x8b;
    if (!gzip) {
        in->clear();
        in->seekg(0);
        return std::unique_ptr<std::istream>(std::move(in));
    }
    auto text = read_text_file(path);
    if (!text) return std::unexpected(text.error());
    return std::unique_ptr<std::istream>(std::make_unique<std::istringstream>(std::move(*text)));
}

Result<void> not_the_input(const std::string& flag, const std::string& out, const std::string& input) {
    std::error_code ec;
    if (input.empty() || input == "-" || out.empty() || !std::filesystem::equivalent(input, out, ec)) return {};
    return fail(flag + " " + out + " is the input " + input + "; write to another file (it would replace the input)");
}

}  // namespace astraeus::cli
