#include "astraeus/api/listen_socket.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace astraeus::api {

Result<ListenSocket> ListenSocket::open(const std::string& host, int port) {
    namespace ip = boost::asio::ip;
    const std::string where = host + ":" + (port == 0 ? std::string("0 (any port)") : std::to_string(port));
    boost::system::error_code ec;
    const ip::address addr = ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
    if (ec) return fail("cannot listen on " + where + ": '" + host + "' is not an IP address");
    const ip::tcp::endpoint ep(addr, static_cast<unsigned short>(port));
    ListenSocket s;
    s.ipv6_ = addr.is_v6();
    s.fd_ = ::socket(s.ipv6_ ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
    const int one = 1;
    if (s.fd_ < 0 || ::setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::bind(s.fd_, ep.data(), static_cast<socklen_t>(ep.size())) != 0 || ::listen(s.fd_, SOMAXCONN) != 0)
        return fail("cannot listen on " + where + " (in use, or not a local address): " + std::strerror(errno));
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    if (::getsockname(s.fd_, reinterpret_cast<sockaddr*>(&bound), &len) != 0)
        return fail("cannot listen on " + where + ": getsockname: " + std::strerror(errno));
    s.port_ = ntohs(s.ipv6_ ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    return s;
}

ListenSocket::ListenSocket(ListenSocket&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), port_(o.port_), ipv6_(o.ipv6_) {}

ListenSocket& ListenSocket::operator=(ListenSocket&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(o.fd_, -1);
        port_ = o.port_;
        ipv6_ = o.ipv6_;
    }
    return *this;
}

ListenSocket::~ListenSocket() {
    if (fd_ >= 0) ::close(fd_);
}

Result<ListenSocket> ListenSocket::duplicate() const {
    ListenSocket d;
    d.fd_ = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
    if (d.fd_ < 0) return fail(std::string("cannot duplicate the listening socket: ") + std::strerror(errno));
    d.port_ = port_;
    d.ipv6_ = ipv6_;
    return d;
}

int ListenSocket::release() { return std::exchange(fd_, -1); }

}  // namespace astraeus::api
