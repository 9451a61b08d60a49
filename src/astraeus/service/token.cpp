#include "astraeus/service/token.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>

namespace astraeus::service {

Result<std::string> new_token(std::string_view prefix) {
    std::array<unsigned char, 32> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
        return fail("cannot draw random bytes for a token (OpenSSL RAND_bytes failed)");
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out(prefix);
    // base64url without padding: 32 bytes -> 43 characters.
    std::uint32_t acc = 0;
    int bits = 0;
    for (unsigned char b : bytes) {
        acc = (acc << 8) | b;
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out += kAlphabet[(acc >> bits) & 63U];
        }
    }
    if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 63U];
    return out;
}

std::string sha256_hex(std::string_view text) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    EVP_Digest(text.data(), text.size(), md.data(), &len, EVP_sha256(), nullptr);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * len);
    for (unsigned int i = 0; i < len; ++i) {
        out += kHex[md[i] >> 4];
        out += kHex[md[i] & 15];
    }
    return out;
}

}  // namespace astraeus::service
