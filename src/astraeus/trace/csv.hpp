// Small text-input helpers for the trace readers: whole-file reads (gzip read transparently),
// line splitting on LF, CRLF or CR, and CSV fields (RFC 4180 quotes). Thread safety: pure.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/error.hpp"

namespace astraeus {

/// Reads a whole file; a gzip file (by its magic bytes) is decompressed.
Result<std::string> read_text_file(const std::string& path);
/// Reads at most the first `max_bytes` bytes of a file (decompressed when gzip), e.g. to
/// detect its format.
Result<std::string> read_text_prefix(const std::string& path, std::size_t max_bytes);

/// Splits text into lines; accepts "\n", "\r\n" and "\r" endings; no trailing empty line.
std::vector<std::string_view> split_lines(std::string_view text);

/// Splits one CSV record into fields (double quotes may enclose a field; "" is a quote).
std::vector<std::string> split_csv(std::string_view line);

/// Parses a whole decimal integer (optional sign); nothing else may follow.
std::optional<std::int64_t> parse_int(std::string_view s);
/// Parses a finite decimal number.
std::optional<double> parse_double(std::string_view s);

/// A CSV file with a header row: fields are found by column name.
class CsvTable {
public:
    /// Reads `path`; requires the named columns to be present in the header.
    static Result<CsvTable> read(const std::string& path, const std::vector<std::string>& required);
    std::size_t rows() const { return rows_.size(); }
    /// 1-based line number of data row i in the file (for error messages).
    std::size_t line_of(std::size_t i) const { return lines_[i]; }
    std::string_view field(std::size_t row, const std::string& column) const;
    bool has_column(const std::string& column) const;
    const std::string& path() const { return path_; }
    /// "path:line: field 'column'" prefix for an error about that cell.
    std::string where(std::size_t row, const std::string& column) const;

private:
    std::string path_;
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
    std::vector<std::size_t> lines_;
};

}  // namespace astraeus
