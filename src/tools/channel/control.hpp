// SPDX-License-Identifier: BSD-3-Clause
// The control link: one TCP connection between client and server over which they agree on each
// channel's run and hand back its results, and the TCP helpers the stream measurement shares.
// IPv4 only, like the kernel datagram channel.
//
// Both ends run the same build of this program, so messages are fixed-size structs sent as they
// are; the hello exchanged first refuses a peer of another build instead of misreading it.
// Per channel:
//   client -> server  SetupMsg   which channel; the client's endpoint name
//   server -> client  ReadyMsg   the server's endpoint name and largest datagram (or why not)
//   client -> server  StartMsg   the agreed datagram size and how much will come
//   server -> client  GoMsg      the server is draining: send
//   ... the data, on the channel itself ...
//   client -> server  DoneMsg    everything was sent
//   server -> client  ResultMsg  what arrived, and what it cost the server
#pragma once

#include "transport/dgram_endpoint.hpp"
#include "transport/fd.hpp"

#include <netinet/in.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

namespace optireduce::channel_bench {

inline constexpr std::uint16_t kDefaultPort = 18515;  // fabtests' default control port

struct HelloMsg {
    std::uint32_t magic = 0x4243524f;  // "ORCB"
    std::uint32_t version = 1;         // bump on any change to a message below
};
struct SetupMsg {
    char channel[16];
    std::uint64_t mtu;
    std::array<std::byte, DgramEndpoint::kNameSlot> name;
};
struct ReadyMsg {
    bool ok;
    bool gro;            // the server's kernel endpoint coalesces on receive
    std::uint16_t port;  // the stream: where the server listens for it
    std::uint64_t max_datagram;
    std::array<std::byte, DgramEndpoint::kNameSlot> name;
    char text[256];  // !ok: why; else the server's GRO note
};
struct StartMsg {
    std::uint64_t datagram;  // header included; 0 for the stream
    std::uint64_t count;     // datagrams (the stream: 0)
    std::uint64_t bytes;     // payload
};
struct GoMsg {
    std::uint8_t go = 1;
};
struct DoneMsg {
    std::uint64_t sent;
};
struct ResultMsg {
    std::uint64_t received, received_bytes, coalesced;
    double wall_s, cpu_s;
};

// Copies `s` into a message's text field, cut to fit and always terminated.
template <std::size_t N>
void copy_text(char (&to)[N], const std::string &s) {
    const std::size_t n = s.size() < N - 1 ? s.size() : N - 1;
    s.copy(to, n);
    to[n] = '\0';
}

// Whole buffers over a blocking socket (retrying partial transfers and EINTR). false on an
// error or the end of the stream.
bool write_all(int fd, const void *data, std::size_t bytes);
bool read_all(int fd, void *data, std::size_t bytes);

// A listening socket on addr:port (port 0: the kernel picks one; bound_port says which).
Fd listen_tcp(in_addr addr, std::uint16_t port, std::string *error);
std::uint16_t bound_port(int fd);
Fd accept_tcp(int listener, std::string *error);
Fd connect_tcp(const sockaddr_in &to, std::string *error);
// "HOST" or "HOST:PORT", HOST an IPv4 address or a name.
std::optional<sockaddr_in> parse_host(const std::string &text, std::uint16_t default_port, std::string *error);
std::string to_string(const sockaddr_in &a);

class Control {
public:
    explicit Control(Fd fd) : fd_(std::move(fd)) {}
    int fd() const { return fd_.get(); }
    // Our and the peer's address on the link.
    sockaddr_in local() const;
    sockaddr_in peer() const;

    // A lost link ends the program: the other side is gone, and so is the run.
    template <class M>
    void send(const M &m) {
        static_assert(std::is_trivially_copyable_v<M>);
        if (!write_all(fd(), &m, sizeof m)) lost();
    }
    template <class M>
    void recv(M &m) {
        if (!recv_or_end(m)) lost();
    }
    // false when the link closed instead (between channels: the client is done).
    template <class M>
    bool recv_or_end(M &m) {
        static_assert(std::is_trivially_copyable_v<M>);
        return read_all(fd(), &m, sizeof m);
    }
    // Whether a message has begun to arrive (or the link closed), without blocking.
    bool readable() const;
    // Exchanges HelloMsg; false, and a message in *error, for a peer of another build.
    bool hello(std::string *error);
    // The client's side of one channel's setup: sends `setup`, reads the server's answer into
    // `ready`; false, and the server's reason in *error, when it cannot serve the channel.
    bool setup(const SetupMsg &setup, ReadyMsg &ready, std::string *error) {
        send(setup);
        recv(ready);
        if (!ready.ok) *error = std::string("server: ") + ready.text;
        return ready.ok;
    }

private:
    [[noreturn]] static void lost();
    Fd fd_;
};

}  // namespace optireduce::channel_bench
