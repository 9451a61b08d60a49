#include "astraeus/trace/csv.hpp"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "astraeus/base/huge_pages.hpp"

namespace astraeus {

namespace {

// gzopen of a file to read (plain files too). A directory opens, then every read fails with a
// misleading "corrupt gzip": it is named for what it is instead.
Result<gzFile> open_for_reading(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return fail(path + ": is a directory, not a file");
    gzFile f = gzopen(path.c_str(), "rb");
    if (f == nullptr) return fail(path + ": cannot open: " + std::strerror(errno));
    return f;
}

}  // namespace

Result<std::string> read_text_file(const std::string& path) {
    auto opened = open_for_reading(path);
    if (!opened) return std::unexpected(opened.error());
    gzFile f = *opened;
    std::string out;
    // The file's size as a first capacity (a gzip file grows past it): no copies while the
    // text grows, and the buffer advised for huge pages (base/huge_pages.hpp).
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec) {
        out.reserve(static_cast<std::size_t>(size) + 1);
        advise_huge_pages(out.data(), out.capacity());
    }
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    int err = 0;
    const char* msg = gzerror(f, &err);
    std::string message = msg ? msg : "";
    if (message.starts_with(path + ": ")) message.erase(0, path.size() + 2);  // zlib names the file too
    gzclose(f);
    if (n < 0 || (err != Z_OK && err != Z_STREAM_END))
        return fail(path + ": read error (corrupt or truncated gzip?): " + message);
    return out;
}

Result<std::string> read_text_prefix(const std::string& path, std::size_t max_bytes) {
    auto opened = open_for_reading(path);
    if (!opened) return std::unexpected(opened.error());
    gzFile f = *opened;
    std::string out(std::min<std::size_t>(max_bytes, 1 << 20), '\0');
    const int n = gzread(f, out.data(), static_cast<unsigned>(out.size()));
    gzclose(f);
    if (n < 0) return fail(path + ": read error (corrupt gzip?)");
    out.resize(static_cast<std::size_t>(n));
    return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    lines.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\n' && text[i] != '\r') continue;
        lines.push_back(text.substr(start, i - start));
        if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
        start = i + 1;
    }
    if (start < text.size()) lines.push_back(text.substr(start));
    return lines;
}

std::vector<std::string> split_csv(std::string_view line) {
    if (line.find('"') == std::string_view::npos) {  // no quoting: the fields between commas
        std::vector<std::string> fields;
        fields.reserve(static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) + 1);
        std::size_t from = 0;
        for (std::size_t comma; (comma = line.find(',', from)) != std::string_view::npos;
             from = comma + 1)
            fields.emplace_back(line.substr(from, comma - from));
        fields.emplace_back(line.substr(from));
        return fields;
    }
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                fields.back() += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                fields.back() += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.emplace_back();
        } else {
            fields.back() += c;
        }
    }
    return fields;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

std::optional<double> parse_double(std::string_view s) {
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

Result<CsvTable> CsvTable::read(const std::string& path, const std::vector<std::string>& required) {
    auto text = read_text_file(path);
    if (!text) return std::unexpected(text.error());
    CsvTable t;
    t.path_ = path;
    const auto lines = split_lines(*text);
    std::size_t i = 0;
    while (i < lines.size() && lines[i].empty()) ++i;
    if (i == lines.size()) return fail(path + ": empty file (expected a header row)");
    t.header_ = split_csv(lines[i]);
    for (auto& h : t.header_)  // tolerate a UTF-8 byte-order mark and padding
        if (h.starts_with("\xEF\xBB\xBF")) h.erase(0, 3);
    for (const auto& col : required)
        if (!t.has_column(col))
            return fail(path + ":" + std::to_string(i + 1) + ": missing column '" + col +
                        "' in the header");
    for (++i; i < lines.size(); ++i) {
        if (lines[i].empty()) continue;
        auto fields = split_csv(lines[i]);
        if (fields.size() != t.header_.size())
            return fail(path + ":" + std::to_string(i + 1) + ": expected " +
                        std::to_string(t.header_.size()) + " fields, found " +
                        std::to_string(fields.size()));
        t.rows_.push_back(std::move(fields));
        t.lines_.push_back(i + 1);
    }
    return t;
}

bool CsvTable::has_column(const std::string& column) const {
    for (const auto& h : header_)
        if (h == column) return true;
    return false;
}

std::string_view CsvTable::field(std::size_t row, const std::string& column) const {
    for (std::size_t c = 0; c < header_.size(); ++c)
        if (header_[c] == column) return rows_[row][c];
    return {};
}

std::string CsvTable::where(std::size_t row, const std::string& column) const {
    return path_ + ":" + std::to_string(lines_[row]) + ": field '" + column + "'";
}

}  // namespace astraeus
