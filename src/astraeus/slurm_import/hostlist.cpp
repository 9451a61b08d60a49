#include "astraeus/slurm_import/hostlist.hpp"

#include <charconv>
#include <cstdint>

namespace astraeus::slurm {
namespace {

// One job's nodes: the largest Slurm clusters have tens of thousands of nodes. The bound is
// checked before any group is expanded (a range's length, the product of the groups), so a
// 200-byte "n[0-999]x[0-999]" is refused at once instead of building a million names.
constexpr std::size_t kMaxNames = kMaxHostlistNames;

// Splits at commas outside brackets.
Result<std::vector<std::string_view>> split_top(std::string_view text) {
    std::vector<std::string_view> parts;
    int depth = 0;
    std::size_t from = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '[') {
            if (++depth > 1) return fail("nested '[' at offset " + std::to_string(i));
        } else if (c == ']') {
            if (--depth < 0) return fail("']' without '[' at offset " + std::to_string(i));
        } else if (c == ',' && depth == 0) {
            parts.push_back(text.substr(from, i - from));
            from = i + 1;
        }
    }
    if (depth != 0) return fail("'[' without ']'");
    parts.push_back(text.substr(from));
    return parts;
}

Result<std::uint64_t> number(std::string_view s) {
    std::uint64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
        return fail("expected a number, got '" + std::string(s) + "'");
    return v;
}

// The strings one bracket group stands for: "1-3,7" -> 1 2 3 7; "08-10" -> 08 09 10.
Result<std::vector<std::string>> group(std::string_view body) {
    std::vector<std::string> out;
    std::size_t from = 0;
    while (from <= body.size()) {
        std::size_t comma = body.find(',', from);
        if (comma == std::string_view::npos) comma = body.size();
        const std::string_view item = body.substr(from, comma - from);
        const std::size_t dash = item.find('-');
        if (dash == std::string_view::npos) {
            if (auto n = number(item); !n) return std::unexpected(n.error());
            out.emplace_back(item);
        } else {
            const std::string_view a = item.substr(0, dash), b = item.substr(dash + 1);
            auto lo = number(a);
            if (!lo) return std::unexpected(lo.error());
            auto hi = number(b);
            if (!hi) return std::unexpected(hi.error());
            if (*hi < *lo) return fail("range '" + std::string(item) + "' ends below its start");
            if (*hi - *lo >= kMaxNames)
                return fail("range '" + std::string(item) + "' is too long (more than " + std::to_string(kMaxNames) + " names)");
            const std::size_t width = a.size() > 1 && a[0] == '0' ? a.size() : 0;
            for (std::uint64_t v = *lo; v <= *hi; ++v) {
                std::string s = std::to_string(v);
                if (s.size() < width) s.insert(0, width - s.size(), '0');
                out.push_back(std::move(s));
            }
        }
        if (out.size() > kMaxNames) return fail("more than " + std::to_string(kMaxNames) + " names");
        from = comma + 1;
    }
    return out;
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view text) {
    std::vector<std::string> names;
    if (text.empty() || text == "None assigned" || text == "(null)") return names;
    auto where = [&](const std::string& m) {
        return fail("hostlist '" + std::string(text) + "': " + m);
    };
    auto parts = split_top(text);
    if (!parts) return where(parts.error().message);
    for (std::string_view part : *parts) {
        if (part.empty()) return where("an empty name");
        std::vector<std::string> acc{""};
        std::size_t i = 0;
        while (i < part.size()) {
            const std::size_t open = part.find('[', i);
            const std::string_view lit = part.substr(i, open == std::string_view::npos ? part.size() - i : open - i);
            for (auto& a : acc) a += lit;
            if (open == std::string_view::npos) break;
            const std::size_t close = part.find(']', open);
            auto g = group(part.substr(open + 1, close - open - 1));
            if (!g) return where(g.error().message);
            if (acc.size() * g->size() > kMaxNames)
                return where("more than " + std::to_string(kMaxNames) + " names (" + std::to_string(acc.size()) +
                             " x " + std::to_string(g->size()) + ")");
            std::vector<std::string> next;
            next.reserve(acc.size() * g->size());
            for (const auto& a : acc)
                for (const auto& s : *g) next.push_back(a + s);
            acc = std::move(next);
            i = close + 1;
        }
        for (auto& a : acc) names.push_back(std::move(a));
        if (names.size() > kMaxNames) return where("more than " + std::to_string(kMaxNames) + " names");
    }
    return names;
}

}  // namespace astraeus::slurm
