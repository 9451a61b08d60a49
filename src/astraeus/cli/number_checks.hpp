// CLI11 validators for numeric options, shared by `astraeus` and `astra`. CLI11 2.1's
// PositiveNumber / NonNegativeNumber / Range print ranges such as "0.000000 to 1797...(300
// digits).000000" and accept numbers that later overflow; these name the option's real range and
// the text given: "expected a whole number from 1 to 2147483647, got '0'".
// Thread safety: the validators hold no state.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace astraeus::cli {

/// A whole number (decimal, optional '-') in [min, max]; a value that overflows int64 is out of
/// range, not clamped. `type_name` is what --help shows after the option (e.g. "POSITIVE").
CLI::Validator whole_number(std::int64_t min, std::int64_t max, const std::string& type_name);

/// Decimal digits only (a seed: any uint64; "-1" is refused, not wrapped to 2^64 - 1).
CLI::Validator unsigned_digits(const std::string& type_name);

/// A finite real number in [min, max] (strtod syntax, nothing after it).
CLI::Validator real_number(double min, double max, const std::string& type_name);

}  // namespace astraeus::cli
