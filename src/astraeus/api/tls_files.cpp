// check_tls_files and tls_key_warning (api/http_server.hpp): the TLS files of `astraeus serve`,
// checked with OpenSSL before the server loads them, so that a bad file is an error that names it.
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <sys/stat.h>

#include <cstdio>
#include <memory>

#include "astraeus/api/http_server.hpp"

namespace astraeus::api {

namespace {

std::string openssl_error() {
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0) return "no PEM data found";
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    return buf;
}

struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

Result<void> check_tls_files(const TlsFiles& tls) {
    if (tls.cert_file.empty() || tls.key_file.empty())
        return fail("TLS needs both --tls-cert FILE and --tls-key FILE");
    std::unique_ptr<std::FILE, FileCloser> cf(std::fopen(tls.cert_file.c_str(), "r"));
    if (!cf) return fail("--tls-cert " + tls.cert_file + ": cannot read the file");
    std::unique_ptr<X509, decltype(&X509_free)> cert(PEM_read_X509(cf.get(), nullptr, nullptr, nullptr), X509_free);
    if (!cert) return fail("--tls-cert " + tls.cert_file + ": not a PEM certificate (" + openssl_error() + ")");
    std::unique_ptr<std::FILE, FileCloser> kf(std::fopen(tls.key_file.c_str(), "r"));
    if (!kf) return fail("--tls-key " + tls.key_file + ": cannot read the file");
    // An empty passphrase callback result: an encrypted key is refused instead of prompting.
    auto no_pass = [](char*, int, int, void*) -> int { return 0; };
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_PrivateKey(kf.get(), nullptr, no_pass, nullptr),
                                                            EVP_PKEY_free);
    if (!key)
        return fail("--tls-key " + tls.key_file + ": not an unencrypted PEM private key (" + openssl_error() + ")");
    if (X509_check_private_key(cert.get(), key.get()) != 1) {
        ERR_clear_error();
        return fail("--tls-key " + tls.key_file + ": the key does not match the certificate " + tls.cert_file);
    }
    return {};
}

std::string tls_key_warning(const TlsFiles& tls) {
    struct stat st {};
    if (tls.key_file.empty() || ::stat(tls.key_file.c_str(), &st) != 0) return {};
    if ((st.st_mode & (S_IRGRP | S_IROTH)) == 0) return {};
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return "--tls-key " + tls.key_file + " is readable by " +
           ((st.st_mode & S_IROTH) ? std::string("every user") : std::string("its group")) + " (mode " + mode +
           "): whoever reads it can impersonate this server; chmod 600 it";
}

}  // namespace astraeus::api
