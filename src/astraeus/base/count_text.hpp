// A count with its noun in the right number ("1 machine", "2 machines", "0 GPUs") for the
// messages and summaries people read. Thread safety: a pure function.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace astraeus {

/// "N noun" for N == 1 (and -1), else "N plural"; `plural` defaults to noun + "s".
inline std::string count_text(std::int64_t n, std::string_view noun, std::string_view plural = {}) {
    std::string s = std::to_string(n);
    s += ' ';
    if (n == 1 || n == -1) {
        s += noun;
    } else if (plural.empty()) {
        s += noun;
        s += 's';
    } else {
        s += plural;
    }
    return s;
}

}  // namespace astraeus
