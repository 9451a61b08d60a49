#include "astraeus/cli/number_checks.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "astraeus/base/terminal_text.hpp"

namespace astraeus::cli {

CLI::Validator unsigned_digits(const std::string& type_name) {
    return CLI::Validator(
        [](std::string& v) {
            return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : "expected a non-negative integer, got '" + v + "'";
        },
        type_name);
}

CLI::Validator whole_number(std::int64_t min, std::int64_t max, const std::string& type_name) {
    return CLI::Validator(
        [min, max](std::string& text) -> std::string {
            std::int64_t v = 0;
            const char* end = text.data() + text.size();
            const auto [p, ec] = std::from_chars(text.data(), end, v);
            if (ec == std::errc() && p == end && v >= min && v <= max) return {};
            return "expected a whole number from " + std::to_string(min) + " to " +
                   std::to_string(max) + ", got '" + terminal_safe(text) + "'";
        },
        type_name);
}

namespace {
std::string shortest(double x) {
    char buf[32];
    const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, x);
    return ec == std::errc() ? std::string(buf, p) : std::to_string(x);
}
}  // namespace

CLI::Validator real_number(double min, double max, const std::string& type_name) {
    return CLI::Validator(
        [min, max](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
            if (end == text.c_str() + text.size() && std::isfinite(v) && v >= min && v <= max) return {};
            return "expected a number from " + shortest(min) + " to " + shortest(max) + ", got '" +
                   terminal_safe(text) + "'";
        },
        type_name);
}

}  // namespace astraeus::cli
