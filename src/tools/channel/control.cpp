// SPDX-License-Identifier: BSD-3-Clause
#include "control.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace optireduce::channel_bench {

bool write_all(int fd, const void *data, std::size_t bytes) {
    const auto *p = static_cast<const char *>(data);
    while (bytes > 0) {
        const ssize_t n = ::write(fd, p, bytes);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        bytes -= static_cast<std::size_t>(n);
    }
    return true;
}

bool read_all(int fd, void *data, std::size_t bytes) {
    auto *p = static_cast<char *>(data);
    while (bytes > 0) {
        const ssize_t n = ::read(fd, p, bytes);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        bytes -= static_cast<std::size_t>(n);
    }
    return true;
}

Fd listen_tcp(in_addr addr, std::uint16_t port, std::string *error) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) {
        *error = std::string("socket: ") + std::strerror(errno);
        return {};
    }
    // A server started again right after a run finds its port still in TIME_WAIT.
    const int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr = addr;
    a.sin_port = htons(port);
    if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || ::listen(fd.get(), 4) != 0) {
        *error = "listen on " + to_string(a) + ": " + std::strerror(errno);
        return {};
    }
    return fd;
}

std::uint16_t bound_port(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    return ntohs(a.sin_port);
}

Fd accept_tcp(int listener, std::string *error) {
    for (;;) {
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) return Fd(fd);
        if (errno != EINTR) {
            *error = std::string("accept: ") + std::strerror(errno);
            return {};
        }
    }
}

Fd connect_tcp(const sockaddr_in &to, std::string *error) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0 || ::connect(fd.get(), reinterpret_cast<const sockaddr *>(&to), sizeof to) != 0) {
        *error = "connect to " + to_string(to) + ": " + std::strerror(errno);
        return {};
    }
    return fd;
}

std::optional<sockaddr_in> parse_host(const std::string &text, std::uint16_t default_port, std::string *error) {
    std::string host = text;
    std::uint16_t port = default_port;
    if (const auto colon = text.rfind(':'); colon != std::string::npos) {
        host = text.substr(0, colon);
        const std::string p = text.substr(colon + 1);
        char *end = nullptr;
        const unsigned long v = std::strtoul(p.c_str(), &end, 10);
        if (p.empty() || *end != '\0' || v == 0 || v > 65535) {
            *error = "bad port '" + p + "' in '" + text + "' (1..65535)";
            return std::nullopt;
        }
        port = static_cast<std::uint16_t>(v);
    }
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0 || !found) {
        *error = "cannot resolve '" + host + "' to an IPv4 address: " + gai_strerror(rc);
        return std::nullopt;
    }
    sockaddr_in a{};
    std::memcpy(&a, found->ai_addr, sizeof a);
    freeaddrinfo(found);
    a.sin_port = htons(port);
    return a;
}

std::string to_string(const sockaddr_in &a) {
    char buf[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(a.sin_port));
}

sockaddr_in Control::local() const {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    getsockname(fd(), reinterpret_cast<sockaddr *>(&a), &len);
    return a;
}

sockaddr_in Control::peer() const {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    getpeername(fd(), reinterpret_cast<sockaddr *>(&a), &len);
    return a;
}

bool Control::readable() const {
    pollfd p{fd(), POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

bool Control::hello(std::string *error) {
    // Small messages that each wait for an answer: Nagle would hold every one of them back.
    const int one = 1;
    setsockopt(fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const HelloMsg mine;
    HelloMsg theirs{0, 0};
    send(mine);
    recv(theirs);
    if (theirs.magic != mine.magic || theirs.version != mine.version) {
        *error = "the peer at " + to_string(peer()) + " is not optireduce-channel-bench of this version";
        return false;
    }
    return true;
}

void Control::lost() {
    std::fprintf(stderr, "optireduce-channel-bench: the control link to the other side was lost\n");
    std::exit(1);
}

}  // namespace optireduce::channel_bench
