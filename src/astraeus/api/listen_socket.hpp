// A listening TCP socket opened before the server that serves it: `astraeus serve` binds its
// ports first, so a busy port fails before the data directory or the store is touched, and no
// other process can take the port between that check and the server's start.
#pragma once
#include <string>

#include "astraeus/base/error.hpp"

namespace astraeus::api {

class ListenSocket {
public:
    /// Binds host:port (an IP address, or "localhost" for 127.0.0.1; port 0: any free port)
    /// with SO_REUSEADDR (not SO_REUSEPORT: a second server on the same port fails) and listens.
    /// Errors: "cannot listen on HOST:PORT: 'HOST' is not an IP address", or "cannot listen on
    /// HOST:PORT (in use, or not a local address): <strerror>".
    static Result<ListenSocket> open(const std::string& host, int port);
    ListenSocket() = default;
    ListenSocket(ListenSocket&& o) noexcept;
    ListenSocket& operator=(ListenSocket&& o) noexcept;
    ListenSocket(const ListenSocket&) = delete;
    ListenSocket& operator=(const ListenSocket&) = delete;
    ~ListenSocket();  ///< closes the socket unless released

    bool valid() const { return fd_ >= 0; }
    int port() const { return port_; }   ///< the bound port (the chosen one for port 0)
    bool ipv6() const { return ipv6_; }
    /// A second descriptor of the same socket (close-on-exec): a follower's server accepts on
    /// it, the leader's server later on this one; connections waiting in between are kept.
    Result<ListenSocket> duplicate() const;
    /// Gives the descriptor away (the caller closes it); this object is then empty.
    int release();

private:
    int fd_ = -1;
    int port_ = 0;
    bool ipv6_ = false;
};

}  // namespace astraeus::api
