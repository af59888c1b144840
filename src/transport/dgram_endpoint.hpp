// SPDX-License-Identifier: BSD-3-Clause
// The unreliable datagram channel of bounded mode (docs/protocol.md, "Datagram channel"), as the
// engine sees it: one endpoint per process, any thread sends, one thread at a time drains. Two
// kinds sit behind it:
// - udp_socket_endpoint.hpp, "kernel": our own Linux UDP sockets with segmentation offload on
//   send (UDP_SEGMENT), coalescing on receive (UDP_GRO) and batched system calls; the default
//   on commodity Ethernet;
// - fabric_dgram_endpoint.hpp, any libfabric FI_EP_DGRAM provider by name: efa and verbs UD
//   (kernel bypass, where a cloud has it) and libfabric's udp, kept for comparison.
//
// Peers are named by an opaque fi_addr_t handle that resolve() hands out (libfabric's address
// vector index, or the socket endpoint's own table index), so the engine stays the same over
// both.
#pragma once

#include "transport/peer_addresses.hpp"

#include <rdma/fabric.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace optireduce {

// A duration as ppoll(2)'s timeout (a negative one as zero: the caller tests for "no limit").
inline timespec timespec_of(std::chrono::microseconds d) {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(std::max(d, d.zero()));
    return {static_cast<time_t>(s.count()),
            static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::max(d, d.zero()) - s).count())};
}

// A run of datagrams to one peer, built without copying: datagram i is the header_bytes at
// headers[i * header_bytes] followed by payload bytes [i * segment, min((i + 1) * segment,
// payload.size())). Every datagram but the last carries exactly `segment` payload bytes, which
// is what segmentation offload needs (the kernel cuts one buffer into equal pieces).
struct DgramRun {
    fi_addr_t dest = FI_ADDR_NOTAVAIL;
    std::span<const std::byte> headers;
    std::size_t header_bytes = 0;
    std::span<const std::byte> payload;
    std::size_t segment = 0;
    std::size_t count = 0;
};

// Settings of the kernel channel (OPTIREDUCE_IFACE, _MTU, _UDP_OFFLOAD); libfabric providers
// ignore them.
struct DgramOptions {
    std::string iface;            // comma-separated interface names; empty: every non-loopback one
    std::size_t mtu = 0;          // 0: the path MTU; else at most this
    bool gso = true, gro = true;  // allowed to use send / receive offload where the kernel has it
};

class DgramEndpoint {
public:
    static constexpr std::size_t kNameSlot = kAddressSlot;

    virtual ~DgramEndpoint() = default;
    DgramEndpoint(const DgramEndpoint &) = delete;
    DgramEndpoint &operator=(const DgramEndpoint &) = delete;

    // "kernel", or the libfabric provider's name.
    const std::string &provider() const { return provider_; }
    // What it is and how it runs, for the log and optireduce-info ("kernel UDP on eth0 ...").
    virtual std::string describe() const = 0;
    // This endpoint's name, exchanged through MPI; every member resolves every other's.
    const std::array<std::byte, kNameSlot> &name() const { return name_; }

    // Resolves peers from their kNameSlot-byte names (rank order), reusing known ones.
    virtual bool resolve(std::span<const std::byte> names, int count, std::vector<fi_addr_t> &out,
                         std::string *error) = 0;
    // Largest datagram (header + payload) that reaches every one of `peers` in one piece.
    virtual std::size_t max_datagram(std::span<const fi_addr_t> peers) const = 0;
    // Datagrams worth putting in one run: what one system call (or one offloaded send) carries.
    virtual std::size_t run_datagrams(std::size_t datagram_bytes) const = 0;

    // Sends one datagram: `header` then `payload`. 0, -FI_EAGAIN when the channel cannot take it
    // now (call again), or another negative fi errno. The bytes are copied before it returns.
    virtual int send(fi_addr_t dest, std::span<const std::byte> header, std::span<const std::byte> payload) = 0;
    // Sends what it can of every run, in as few system calls as it can: sent[i] gets how many
    // leading datagrams of runs[i] went out. 0, or a negative fi errno on a failure that is
    // not a full queue. The bytes are copied before it returns.
    virtual int send_runs(std::span<const DgramRun> runs, std::span<std::size_t> sent) = 0;

    // Hands every datagram that has arrived to `sink`. Returns how many (0: none waiting), or -1
    // if another thread is draining right now. `source` is the sender's handle where the channel
    // knows it, FI_ADDR_NOTAVAIL where it cannot tell, and kUnknownSource for an address that
    // is no peer of ours.
    static constexpr fi_addr_t kUnknownSource = FI_ADDR_NOTAVAIL - 1;
    using Sink = std::function<void(std::span<const std::byte> datagram, fi_addr_t source)>;
    virtual int poll(const Sink &sink) = 0;

    // Blocks until a datagram may be waiting, `timeout` passed (kForever: no limit) or wake().
    // Microseconds, not poll(2)'s milliseconds: a waiter whose deadline is 300 us away sleeps
    // 300 us instead of spinning through its last millisecond.
    static constexpr std::chrono::microseconds kForever{-1};
    virtual void wait(std::chrono::microseconds timeout) = 0;
    // Ends a wait() in progress (another thread needs the progress thread's attention).
    virtual void wake() = 0;
    // After a send found the queue full: blocks until it has room again or `max` passed (the
    // caller drains what arrived meanwhile when it wakes; a channel whose receive queue could
    // overflow within `max` wakes for arrivals too). A channel that cannot tell only yields the
    // core.
    virtual void wait_for_send_space(std::chrono::microseconds /*max*/) { std::this_thread::yield(); }
    // Bytes this endpoint's sends still occupy on this host (the socket's send buffer and the
    // host's queue towards the link), or -1 where the channel cannot tell.
    virtual std::int64_t queued_bytes() const { return -1; }

protected:
    explicit DgramEndpoint(std::string provider) : provider_(std::move(provider)) {}
    std::array<std::byte, kNameSlot> name_{};

private:
    std::string provider_;
};

// The name OPTIREDUCE_DGRAM_PROVIDER gives the kernel UDP channel.
inline constexpr const char *kKernelDgram = "kernel";

// Opens the kernel channel (provider "kernel") or a libfabric datagram provider. On failure
// nullptr and a message in *error naming the provider and what failed.
std::unique_ptr<DgramEndpoint> open_dgram_endpoint(const std::string &provider, const DgramOptions &options,
                                                   std::string *error);

}  // namespace optireduce
