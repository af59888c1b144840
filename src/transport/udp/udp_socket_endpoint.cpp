// SPDX-License-Identifier: BSD-3-Clause
#include "transport/udp/udp_socket_endpoint.hpp"

#include "telemetry/log.hpp"

#include <rdma/fi_errno.h>

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

namespace optireduce {

std::unique_ptr<UdpSocketEndpoint> UdpSocketEndpoint::open(const DgramOptions &options, std::string *error) {
    auto fail = [&](const std::string &what) {
        *error = "kernel UDP channel: " + what;
        return nullptr;
    };
    std::vector<udp::LocalAddress> local = udp::local_addresses(options.iface, error);
    if (local.empty()) return fail(*error);
    std::unique_ptr<UdpSocketEndpoint> self(new UdpSocketEndpoint(std::move(local), options.mtu));
    if (!self->io_.open(options.gso, options.gro, error)) return fail(*error);
    self->wake_ = Fd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));

    udp::Name name{self->peers_.netns(), self->io_.port(), {}};
    for (const auto &a : self->peers_.local()) name.addresses.push_back(a.addr);
    udp::encode_name(name, std::span<std::byte, udp::kNameBytes>(self->name_.data(), udp::kNameBytes));
    OPTIREDUCE_LOG(info, "opened %s", self->describe().c_str());
    return self;
}

std::string UdpSocketEndpoint::describe() const {
    std::string where;
    for (const auto &a : peers_.local()) {
        char buf[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &a.addr, buf, sizeof buf);
        where += (where.empty() ? "" : ", ") + std::string(buf) + " (" + a.iface + ")";
    }
    const udp::Buffers &buffers = io_.buffers();
    return "kernel UDP channel on port " + std::to_string(io_.port()) + " of " + where + ": GSO " + io_.gso_note() +
           ", GRO " + io_.gro_note() + ", datagrams up to " +
           std::to_string(udp::datagram_for_mtu(65536, peers_.mtu_cap())) + " bytes (less where the path MTU is), " +
           "socket buffers " + std::to_string(buffers.receive / 1024) + " KiB receive, " +
           std::to_string(buffers.send / 1024) + " KiB send (granted), " +
           (io_.local_drops_reported() ? "datagrams the host's queue drops are sent again"
                                       : "datagrams the host's queue drops are lost (no IP_RECVERR)");
}

bool UdpSocketEndpoint::resolve(std::span<const std::byte> names, int count, std::vector<fi_addr_t> &out,
                                std::string *error) {
    return peers_.resolve(names, kNameSlot, count, out, error);
}

std::size_t UdpSocketEndpoint::max_datagram(std::span<const fi_addr_t> peers) const {
    return peers_.max_datagram(peers);
}

std::size_t UdpSocketEndpoint::run_datagrams(std::size_t datagram_bytes) const {
    return io_.run_datagrams(datagram_bytes);
}

int UdpSocketEndpoint::send(fi_addr_t dest, std::span<const std::byte> header, std::span<const std::byte> payload) {
    const DgramRun run{dest, header, header.size(), payload, payload.size(), 1};
    std::size_t sent = 0;
    const int rc = send_runs(std::span(&run, 1), std::span(&sent, 1));
    return rc < 0 ? rc : sent == 1 ? 0 : -FI_EAGAIN;
}

int UdpSocketEndpoint::send_runs(std::span<const DgramRun> runs, std::span<std::size_t> sent) {
    // The addresses stay valid while the reader holds the table's lock, through the send.
    const udp::PeerTable::Reader peers = peers_.read();
    thread_local std::vector<const sockaddr_in *> to;
    to.resize(runs.size());
    std::transform(runs.begin(), runs.end(), to.begin(), [&](const DgramRun &r) { return peers.destination(r.dest); });
    return io_.send(runs, to, sent);
}

int UdpSocketEndpoint::poll(const Sink &sink) {
    int handled = 0;
    const bool drained = io_.drain([&](std::span<const udp::Received> batch) {
        const udp::PeerTable::Reader peers = peers_.read();
        for (const udp::Received &m : batch) {
            const fi_addr_t src = peers.source(*m.source);
            for (std::size_t at = 0; at < m.bytes.size(); at += m.segment) {
                sink(m.bytes.subspan(at, std::min(m.segment, m.bytes.size() - at)), src);
                ++handled;
            }
        }
    });
    return drained ? handled : -1;
}

void UdpSocketEndpoint::wait(std::chrono::microseconds timeout) {
    pollfd pfd[2] = {{io_.fd(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    const timespec ts = timespec_of(timeout);
    ::ppoll(pfd, wake_.get() >= 0 ? 2 : 1, timeout < timeout.zero() ? nullptr : &ts, nullptr);
    if (pfd[0].revents & POLLERR) io_.clear_errors();  // else every later wait returns at once
    if (pfd[1].revents & POLLIN) {
        std::uint64_t v;
        [[maybe_unused]] auto r = ::read(wake_.get(), &v, sizeof v);
    }
}

void UdpSocketEndpoint::wait_for_send_space(std::chrono::microseconds max) {
    // The kernel reports POLLOUT once the socket's send buffer is half free again (EAGAIN came
    // from a full one): one wake-up per half buffer instead of a retry loop on a busy core. Not
    // on arrivals too: they come every few microseconds while peers send, and each woke the
    // sender for a round of a few datagrams and a full queue again (in the training job of
    // docs/notes/2026-12-05-tail-fifth-step-queue-budget.md, 15-52% of the datagrams met a full
    // queue, and the CPU per step fell 13-20% without those wake-ups).
    // The receive buffer holds what arrives meanwhile (`max` is a millisecond at most), unless
    // the kernel granted far less than we asked: then arrivals wake us as before.
    const short events = io_.buffers().receive < udp::kWarnReceiveBuffer ? POLLOUT | POLLIN : POLLOUT;
    pollfd pfd = {io_.fd(), events, 0};
    const timespec ts = timespec_of(max);
    ::ppoll(&pfd, 1, &ts, nullptr);
    if (pfd.revents & POLLERR) io_.clear_errors();
}

std::int64_t UdpSocketEndpoint::queued_bytes() const {
    // SIOCOUTQ on a UDP socket: the bytes of its datagrams not yet freed, which a datagram is
    // once it left this host's queue for the link.
    int bytes = 0;
    return ::ioctl(io_.fd(), SIOCOUTQ, &bytes) == 0 ? bytes : -1;
}

void UdpSocketEndpoint::wake() {
    if (wake_.get() < 0) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(wake_.get(), &one, sizeof one);
}

}  // namespace optireduce
