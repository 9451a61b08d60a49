#include "astraeus/base/base64.hpp"

#include <array>

namespace astraeus {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int, 256> decode_table() {
    std::array<int, 256> t{};
    for (int& v : t) v = -1;
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = i;
    return t;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const unsigned v = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16 |
                           static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                           static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 2]));
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += kAlphabet[v & 63];
    }
    const std::size_t rest = bytes.size() - i;
    if (rest > 0) {
        unsigned v = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16;
        if (rest == 2) v |= static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8;
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

Result<std::string> base64_decode(std::string_view text) {
    static constexpr std::array<int, 256> kTable = decode_table();
    if (text.size() % 4 != 0)
        return fail("base64: expected a length that is a multiple of 4, got " + std::to_string(text.size()));
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t i = 0; i < text.size(); i += 4) {
        const bool last = i + 4 == text.size();
        int pad = 0;
        unsigned v = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const char ch = text[i + k];
            int d = kTable[static_cast<unsigned char>(ch)];
            if (ch == '=' && last && k >= 2 && (k == 3 || text[i + 3] == '=')) {
                ++pad;
                d = 0;
            } else if (d < 0 || pad > 0) {
                return fail("base64: unexpected character at position " + std::to_string(i + k));
            }
            v = v << 6 | static_cast<unsigned>(d);
        }
        out += static_cast<char>((v >> 16) & 255);
        if (pad < 2) out += static_cast<char>((v >> 8) & 255);
        if (pad < 1) out += static_cast<char>(v & 255);
    }
    return out;
}

}  // namespace astraeus
