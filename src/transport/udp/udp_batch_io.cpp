// SPDX-License-Identifier: BSD-3-Clause
#include "transport/udp/udp_batch_io.hpp"

#include "telemetry/log.hpp"
#include "transport/udp/udp_address.hpp"

#include <rdma/fi_errno.h>

#include <arpa/inet.h>
#include <netinet/udp.h>  // UDP_SEGMENT, UDP_GRO as control messages

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

namespace optireduce::udp {
namespace {

// The kernel's limits on one offloaded send: at most 64 segments, and the whole buffer must fit
// one IPv4 datagram (65535 minus the IP and UDP headers).
constexpr std::size_t kMaxSegments = 64;
constexpr std::size_t kMaxGsoBytes = 65535 - 28;
// Single datagrams per peer in one round when there is no segmentation offload: enough to make
// the system call cheap per datagram, short enough to interleave destinations.
constexpr std::size_t kRunWithoutGso = 16;
// Messages per recvmmsg: with GRO each buffer holds up to 64 KiB of coalesced datagrams.
constexpr std::size_t kRxBatchGro = 16, kRxBatch = 64;
constexpr std::size_t kTxControl = CMSG_SPACE(sizeof(std::uint16_t));
constexpr std::size_t kRxControl = CMSG_SPACE(sizeof(int));

// Errors an ICMP message left on the socket (IP_RECVERR), reported by whichever call comes next
// whatever it was doing: a peer's closed port or an unreachable host says nothing about this
// send or receive, which is tried again.
bool from_icmp(int e) {
    return e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH || e == EHOSTDOWN || e == ENETDOWN ||
           e == EPROTO || e == ETIMEDOUT;
}

int errno_to_fi(int e) {
    switch (e) {
        case EAGAIN:
        case ENOBUFS:  // the device's queue or socket memory: transient, like a full queue
            return -FI_EAGAIN;
        case EMSGSIZE: return -FI_EMSGSIZE;
        default: return -FI_EIO;
    }
}

// With GRO the kernel reports the size of the coalesced datagrams; without it, or for a message
// that holds one, the message is one datagram.
std::size_t gro_segment(const msghdr &h, std::size_t len) {
    std::size_t segment = len;
    for (const cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(const_cast<msghdr *>(&h), const_cast<cmsghdr *>(c)))
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int s = 0;
            std::memcpy(&s, CMSG_DATA(c), sizeof s);
            if (s > 0) segment = static_cast<std::size_t>(s);
        }
    return segment;
}

}  // namespace

// Send metadata of one call, scratch of the calling thread: senders on several threads never
// share it.
struct BatchIo::Tx {
    std::vector<mmsghdr> msgs;
    std::vector<iovec> iov;
    std::vector<std::byte> control;
    std::vector<std::pair<std::size_t, std::size_t>> owner;  // (run, datagrams) of each message
    std::size_t m = 0, v = 0;                                // messages and iovecs filled
};

bool BatchIo::open(bool want_gso, bool want_gro, std::string *error) {
    auto fail = [&](const char *call) {
        *error = std::string(call) + ": " + std::strerror(errno);
        return false;
    };
    sock_ = Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (sock_.get() < 0) return fail("socket");
    const int fd = sock_.get();
    // Bound to every address: peers send to one we published, or to loopback when they share
    // our network namespace. The port is the kernel's choice.
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(fd, reinterpret_cast<sockaddr *>(&any), sizeof any) != 0) return fail("bind");
    socklen_t len = sizeof any;
    getsockname(fd, reinterpret_cast<sockaddr *>(&any), &len);
    port_ = ntohs(any.sin_port);
    // Never fragment: a datagram is lost whole or arrives whole, and a wrong size fails loudly.
    const int pmtu = IP_PMTUDISC_DO;
    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
    // Report local drops: without IP_RECVERR the kernel counts a datagram its own queue (the
    // qdisc) dropped as sent, and a whole offloaded run (up to 64 datagrams) is lost without a
    // word. With it the send fails with ENOBUFS, which flush() treats as a full queue: the run
    // is sent again once there is room, as TCP's would be. Two jobs sharing a host lost 4-10% of
    // their reduce-scatter this way. The price: ICMP errors now reach the socket (its error
    // queue and one pending error), which clear_errors() reads and drops.
    const int recverr = 1;
    if (setsockopt(fd, IPPROTO_IP, IP_RECVERR, &recverr, sizeof recverr) == 0) local_drops_reported_ = true;

    Offloads offloads = enable_offloads(fd, want_gso, want_gro);
    gso_ = offloads.gso;
    gro_ = offloads.gro;
    gso_note_ = std::move(offloads.gso_note);
    gro_note_ = std::move(offloads.gro_note);
    size_buffers();

    // Receive buffers: a coalesced message can hold up to 64 KiB, a single datagram our cap.
    const std::size_t batch = gro_ ? kRxBatchGro : kRxBatch;
    rx_buffer_ = gro_ ? 65536 : kMaxDatagram + 64;
    rx_pool_.resize(batch * rx_buffer_);
    rx_msgs_.resize(batch);
    rx_iov_.resize(batch);
    rx_src_.resize(batch);
    rx_control_.resize(batch * kRxControl);
    received_.reserve(batch);
    return true;
}

void BatchIo::size_buffers() {
    buffers_ = udp::size_buffers(sock_.get());
    if (buffers_.receive < kWarnReceiveBuffer)
        OPTIREDUCE_LOG(warn,
                       "kernel UDP channel: the kernel granted a %d KiB receive buffer instead of %d MiB; "
                       "bursts that arrive while this rank is busy will be lost. Raise the limit, e.g. "
                       "sysctl -w net.core.rmem_max=%d",
                       buffers_.receive / 1024, kWantReceiveBuffer >> 20, kWantReceiveBuffer);
}

std::size_t BatchIo::run_datagrams(std::size_t datagram_bytes) const {
    if (!gso() || datagram_bytes == 0) return kRunWithoutGso;
    return std::max<std::size_t>(1, std::min(kMaxSegments, kMaxGsoBytes / datagram_bytes));
}

int BatchIo::send(std::span<const DgramRun> runs, std::span<const sockaddr_in *const> to, std::span<std::size_t> sent) {
    std::fill(sent.begin(), sent.end(), 0);
    for (;;) {
        const bool gso = this->gso();
        const int rc = send_once(runs, to, sent, gso);
        if (rc != -FI_EIO || !gso) return rc;
        // EIO from an offloaded send: the device cannot segment (no checksum offload, xfrm).
        // From here on single datagrams; what was sent stays sent.
        give_up_gso();
    }
}

void BatchIo::give_up_gso() {
    // One thread writes the note.
    bool expected = true;
    if (gso_.compare_exchange_strong(expected, false)) {
        gso_note_ = "off: a segmented send failed on this route (EIO)";
        OPTIREDUCE_LOG(info, "kernel UDP channel: %s; sending single datagrams", gso_note_.c_str());
    }
}

// One sendmmsg (or a few, past UIO_MAXIOV messages) over what is left of the runs.
int BatchIo::send_once(std::span<const DgramRun> runs, std::span<const sockaddr_in *const> to,
                       std::span<std::size_t> sent, bool gso) {
    thread_local Tx tx;
    std::size_t total = 0, total_msgs = 0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
        const std::size_t left = runs[r].count - sent[r];
        total += left;
        const std::size_t per = gso ? run_datagrams(runs[r].header_bytes + runs[r].segment) : 1;
        total_msgs += (left + per - 1) / per;
    }
    if (total == 0) return 0;
    tx.iov.resize(2 * total);
    tx.msgs.resize(total_msgs);
    tx.control.resize(total_msgs * kTxControl);
    tx.owner.resize(total_msgs);
    tx.m = tx.v = 0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
        const DgramRun &run = runs[r];
        if (!to[r]) return -FI_EINVAL;
        const std::size_t per = gso ? run_datagrams(run.header_bytes + run.segment) : 1;
        for (std::size_t i = sent[r]; i < run.count; i += per) {
            const std::size_t k = std::min(per, run.count - i);
            tx.owner[tx.m] = {r, k};
            add_message(tx, to[r], run, i, k);
        }
    }
    return flush(tx, sent);
}

// Datagrams [first, first + k) of `run` as the next message: one iovec each for header and
// payload, and with more than one datagram the segment size that has the kernel cut them apart.
void BatchIo::add_message(Tx &tx, const sockaddr_in *to, const DgramRun &run, std::size_t first, std::size_t k) {
    msghdr &h = tx.msgs[tx.m].msg_hdr;
    h = msghdr{};
    h.msg_name = const_cast<sockaddr_in *>(to);
    h.msg_namelen = sizeof(sockaddr_in);
    h.msg_iov = &tx.iov[tx.v];
    for (std::size_t j = first; j < first + k; ++j) {
        const std::size_t at = j * run.segment;
        tx.iov[tx.v++] = {const_cast<std::byte *>(run.headers.data() + j * run.header_bytes), run.header_bytes};
        tx.iov[tx.v++] = {const_cast<std::byte *>(run.payload.data() + at),
                          std::min(run.segment, run.payload.size() - at)};
    }
    h.msg_iovlen = 2 * k;
    if (k > 1) {
        // Every datagram of the message but the last is exactly this.
        h.msg_control = tx.control.data() + tx.m * kTxControl;
        h.msg_controllen = kTxControl;
        cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
        const auto seg = static_cast<std::uint16_t>(run.header_bytes + run.segment);
        std::memcpy(CMSG_DATA(c), &seg, sizeof seg);
    }
    ++tx.m;
}

int BatchIo::flush(Tx &tx, std::span<std::size_t> sent) {
    // sendmmsg stops at the first message that fails; the messages before it are sent.
    std::size_t done = 0;
    int icmp_reports = 0;
    while (done < tx.m) {
        const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(tx.m - done, UIO_MAXIOV));
        const int n = ::sendmmsg(sock_.get(), tx.msgs.data() + done, chunk, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (from_icmp(errno)) {
                // Not this send's error: it was not sent, and goes again (now, or after a few
                // reports in a row, in the next round, like a full queue's).
                clear_errors();
                if (++icmp_reports <= kIcmpRetries) continue;
                return 0;
            }
            return errno == EAGAIN || errno == ENOBUFS ? 0 : errno_to_fi(errno);
        }
        for (std::size_t i = done; i < done + static_cast<std::size_t>(n); ++i)
            sent[tx.owner[i].first] += tx.owner[i].second;
        done += static_cast<std::size_t>(n);
        if (static_cast<unsigned>(n) < chunk) break;  // the next one would block or fail: next round
    }
    return 0;
}

void BatchIo::clear_errors() {
    // Each read takes one report off the error queue (and the pending error with the first).
    std::array<std::byte, 512> data{}, control{};
    for (int i = 0; i < kErrorsPerClear; ++i) {
        iovec iov{data.data(), data.size()};
        msghdr h{};
        h.msg_iov = &iov;
        h.msg_iovlen = 1;
        h.msg_control = control.data();
        h.msg_controllen = control.size();
        if (::recvmsg(sock_.get(), &h, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) break;
    }
    int pending = 0;
    socklen_t len = sizeof pending;
    getsockopt(sock_.get(), SOL_SOCKET, SO_ERROR, &pending, &len);  // reading it clears it
}

std::size_t BatchIo::receive_batch() {
    const std::size_t batch = rx_msgs_.size();
    for (std::size_t i = 0; i < batch; ++i) {
        rx_iov_[i] = {rx_pool_.data() + i * rx_buffer_, rx_buffer_};
        msghdr &h = rx_msgs_[i].msg_hdr;
        h = msghdr{};
        h.msg_name = &rx_src_[i];
        h.msg_namelen = sizeof(sockaddr_in);
        h.msg_iov = &rx_iov_[i];
        h.msg_iovlen = 1;
        h.msg_control = rx_control_.data() + i * kRxControl;
        h.msg_controllen = kRxControl;
    }
    int n = ::recvmmsg(sock_.get(), rx_msgs_.data(), static_cast<unsigned>(batch), MSG_DONTWAIT, nullptr);
    if (n < 0 && from_icmp(errno)) {
        clear_errors();
        n = ::recvmmsg(sock_.get(), rx_msgs_.data(), static_cast<unsigned>(batch), MSG_DONTWAIT, nullptr);
    }
    received_.clear();
    for (std::size_t i = 0; i < static_cast<std::size_t>(std::max(n, 0)); ++i) {
        const msghdr &h = rx_msgs_[i].msg_hdr;
        const std::size_t len = rx_msgs_[i].msg_len;
        if (h.msg_flags & MSG_TRUNC) {
            OPTIREDUCE_LOG(debug, "kernel UDP channel: a datagram larger than %zu bytes was cut; dropped", rx_buffer_);
            continue;
        }
        const std::size_t segment = gro_segment(h, len);
        if (segment < len) coalesced_.fetch_add((len + segment - 1) / segment, std::memory_order_relaxed);
        received_.push_back({std::span<const std::byte>(rx_pool_.data() + i * rx_buffer_, len), segment, &rx_src_[i]});
    }
    return static_cast<std::size_t>(std::max(n, 0));
}

}  // namespace optireduce::udp
