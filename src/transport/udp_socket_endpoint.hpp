// The kernel UDP channel ("kernel"): bounded mode's datagrams over one Linux UDP socket per
// process, at the rate the host's network stack allows rather than one system call per
// datagram (libfabric's udp provider, by its own manual a development provider).
//
// - Send: a run of same-size datagrams to one peer leaves in one sendmsg with UDP_SEGMENT (GSO:
//   the kernel, or the NIC, cuts one buffer into datagrams, each a complete datagram with our
//   header), and the runs of one round to several peers in one sendmmsg. Header and payload go
//   in as separate iovecs: nothing is copied in user space.
// - Receive: recvmmsg drains many messages per call; with UDP_GRO one message may hold several
//   coalesced datagrams, split by the segment size the kernel reports in a control message.
// - Either offload is probed at open and dropped (with the reason, for optireduce-info) where
//   the kernel lacks it, or when a send finds the device cannot segment (EIO): the channel then
//   batches single datagrams with sendmmsg / recvmmsg.
// - Datagrams never exceed the path MTU of the route to any peer (1472 bytes at 1500, 8972 at
//   9000) and never fragment (IP_PMTUDISC_DO).
//
// Threading as the interface says: sends from any thread (the socket serialises them), one
// drainer at a time (poll() serialises itself). Peers resolved later (a new communicator) are
// added under a lock that senders and the drainer share for reading.
#pragma once

#include "transport/dgram_endpoint.hpp"
#include "transport/udp_address.hpp"
#include "transport/udp_socket_options.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace optireduce {

// A file descriptor we own.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    Fd &operator=(Fd &&o) noexcept;
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd();
    int get() const { return fd_; }

private:
    int fd_ = -1;
};

class UdpSocketEndpoint final : public DgramEndpoint {
public:
    static std::unique_ptr<UdpSocketEndpoint> open(const DgramOptions &options, std::string *error);
    ~UdpSocketEndpoint() override = default;

    std::string describe() const override;
    bool resolve(std::span<const std::byte> names, int count, std::vector<fi_addr_t> &out,
                 std::string *error) override;
    std::size_t max_datagram(std::span<const fi_addr_t> peers) const override;
    std::size_t run_datagrams(std::size_t datagram_bytes) const override;
    int send(fi_addr_t dest, std::span<const std::byte> header, std::span<const std::byte> payload) override;
    int send_runs(std::span<const DgramRun> runs, std::span<std::size_t> sent) override;
    int poll(const Sink &sink) override;
    void wait(int timeout_ms) override;
    void wake() override;

    // What optireduce-info and the log report: whether each offload is in use, and if not why.
    bool gso() const { return gso_.load(std::memory_order_relaxed); }
    bool gro() const { return gro_; }
    const std::string &gso_note() const { return gso_note_; }
    const std::string &gro_note() const { return gro_note_; }
    // Datagrams that arrived coalesced with others in one receive (GRO at work).
    std::uint64_t coalesced() const { return coalesced_.load(std::memory_order_relaxed); }
    const udp::Buffers &buffers() const { return buffers_; }
    std::uint16_t port() const { return port_; }
    const std::vector<udp::LocalAddress> &addresses() const { return local_; }

private:
    explicit UdpSocketEndpoint() : DgramEndpoint(kKernelDgram) {}
    void size_buffers();
    // One sendmmsg over the runs from `first`; GSO or not as gso() says now.
    int send_batch(std::span<const DgramRun> runs, std::span<std::size_t> sent, bool gso);

    struct Peer {
        sockaddr_in addr{};
        std::size_t mtu = 0;  // of the path; 0: unknown
    };

    Fd sock_;
    Fd wake_;
    std::uint16_t port_ = 0;
    std::uint64_t netns_ = 0;
    std::vector<udp::LocalAddress> local_;
    std::size_t mtu_cap_ = 0;  // OPTIREDUCE_MTU (0: none)
    std::atomic<bool> gso_{false};
    bool gro_ = false;
    std::string gso_note_, gro_note_;
    udp::Buffers buffers_;  // granted

    mutable std::shared_mutex peers_mutex_;
    std::deque<Peer> peers_;                                // by handle
    std::map<std::string, fi_addr_t> known_;                 // by published name
    std::unordered_map<std::uint64_t, fi_addr_t> by_source_;  // (address, port) -> handle

    std::mutex rx_mutex_;  // one drainer; everything below
    std::size_t rx_buffer_ = 0;
    std::vector<std::byte> rx_pool_;
    std::vector<mmsghdr> rx_msgs_;
    std::vector<iovec> rx_iov_;
    std::vector<sockaddr_in> rx_src_;
    std::vector<std::byte> rx_control_;
    std::atomic<std::uint64_t> coalesced_{0};
};

}  // namespace optireduce
