// SPDX-License-Identifier: BSD-3-Clause
// The socket under the kernel UDP channel and its batched system calls. It knows what the kernel
// lets it do (probed once at open: segmentation offload on send, coalescing on receive, the
// buffer sizes granted) and moves bytes; it keeps no peer state: the caller names each run's
// destination, and gets each received message's source address to look up itself.
//
// - Send: a run of same-size datagrams to one destination leaves in one message with UDP_SEGMENT
//   (GSO: the kernel, or the NIC, cuts one buffer into datagrams, each with our header), and
//   the messages of one round go in one sendmmsg. Header and payload go in as separate iovecs:
//   nothing is copied in user space.
// - Receive: recvmmsg drains many messages per call; with UDP_GRO one message may hold several
//   coalesced datagrams of one sender, all of the segment size the kernel reports in a control
//   message but the last.
// - Either offload is dropped (with the reason, for optireduce-info) where the kernel lacks it,
//   or, for GSO, when a send finds the device cannot segment (EIO): from then on single
//   datagrams, batched all the same.
//
// Threading: sends from any thread (the socket serialises them; each thread has its own
// scratch), one drainer at a time (drain() says when another thread is at it).
#pragma once

#include "transport/dgram_endpoint.hpp"
#include "transport/fd.hpp"
#include "transport/udp/udp_socket_options.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace optireduce::udp {

// Receive metadata of one message: its bytes (one datagram, or with GRO several of one sender),
// the size of each datagram in it but the last, and where it came from.
struct Received {
    std::span<const std::byte> bytes;
    std::size_t segment = 0;
    const sockaddr_in *source = nullptr;
};

class BatchIo {
public:
    BatchIo() = default;
    BatchIo(const BatchIo &) = delete;
    BatchIo &operator=(const BatchIo &) = delete;

    // Opens a socket bound to every local address on a port of the kernel's choice that never
    // fragments, enables the offloads wanted where the kernel has them and sizes its buffers.
    // On failure false and what failed in *error ("bind: ...").
    bool open(bool want_gso, bool want_gro, std::string *error);

    int fd() const { return sock_.get(); }
    std::uint16_t port() const { return port_; }
    bool gso() const { return gso_.load(std::memory_order_relaxed); }
    bool gro() const { return gro_; }
    const std::string &gso_note() const { return gso_note_; }
    const std::string &gro_note() const { return gro_note_; }
    const Buffers &buffers() const { return buffers_; }
    // Datagrams that arrived coalesced with others in one message (GRO at work).
    std::uint64_t coalesced() const { return coalesced_.load(std::memory_order_relaxed); }
    // Whether a datagram our own host's queue drops fails its send (IP_RECVERR), so that it is
    // sent again, instead of being counted as sent.
    bool local_drops_reported() const { return local_drops_reported_; }
    // Reads and drops what ICMP errors left on the socket (IP_RECVERR): its error queue, which
    // poll reports as POLLERR until it is empty, and its pending error.
    void clear_errors();

    // Datagrams of `datagram_bytes` worth putting in one run: what one offloaded send carries,
    // or without GSO what makes a system call cheap per datagram.
    std::size_t run_datagrams(std::size_t datagram_bytes) const;

    // Sends what it can of every run, runs[i] to to[i] (nullptr: not a destination, which fails
    // the call with -FI_EINVAL), falling back to single datagrams for good if the device cannot
    // segment. sent[i] gets how many leading datagrams of runs[i] went out. 0, or a negative fi
    // errno on a failure that is not a full queue.
    int send(std::span<const DgramRun> runs, std::span<const sockaddr_in *const> to, std::span<std::size_t> sent);

    // Hands each batch of received messages to on_batch(std::span<const Received>) until none
    // is waiting; the spans are valid during the call only. False, without receiving anything,
    // if another thread is draining right now.
    template <typename OnBatch>
    bool drain(OnBatch &&on_batch);

private:
    struct Tx;
    int send_once(std::span<const DgramRun> runs, std::span<const sockaddr_in *const> to, std::span<std::size_t> sent,
                  bool gso);
    static void add_message(Tx &tx, const sockaddr_in *to, const DgramRun &run, std::size_t first, std::size_t k);
    int flush(Tx &tx, std::span<std::size_t> sent);
    void give_up_gso();
    void size_buffers();
    // One recvmmsg into received_; how many messages it returned (0: none waiting).
    std::size_t receive_batch();

    static constexpr int kIcmpRetries = 4;      // per flush: each pending error is reported once
    static constexpr int kErrorsPerClear = 64;  // a bound on one clear_errors() call

    Fd sock_;
    std::uint16_t port_ = 0;
    bool local_drops_reported_ = false;
    std::atomic<bool> gso_{false};
    bool gro_ = false;
    std::string gso_note_, gro_note_;
    Buffers buffers_;  // granted

    std::mutex rx_mutex_;  // one drainer; everything below
    std::size_t rx_buffer_ = 0;
    std::vector<std::byte> rx_pool_;
    std::vector<mmsghdr> rx_msgs_;
    std::vector<iovec> rx_iov_;
    std::vector<sockaddr_in> rx_src_;
    std::vector<std::byte> rx_control_;
    std::vector<Received> received_;
    std::atomic<std::uint64_t> coalesced_{0};
};

template <typename OnBatch>
bool BatchIo::drain(OnBatch &&on_batch) {
    std::unique_lock lock(rx_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    for (;;) {
        const std::size_t n = receive_batch();
        if (n == 0) break;
        on_batch(std::span<const Received>(received_));
        if (n < rx_msgs_.size()) break;  // the socket is empty: no second call to learn it
    }
    return true;
}

}  // namespace optireduce::udp
