#include "transport/udp_socket_endpoint.hpp"

#include "telemetry/log.hpp"
#include "transport/udp_socket_options.hpp"

#include <rdma/fi_errno.h>

#include <arpa/inet.h>
#include <netinet/udp.h>  // UDP_SEGMENT, UDP_GRO as control messages
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace optireduce {
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
std::uint64_t source_key(const sockaddr_in &a) {
    return static_cast<std::uint64_t>(a.sin_addr.s_addr) << 16 | a.sin_port;
}

int errno_to_fi(int e) {
    switch (e) {
        case EAGAIN:
        case ENOBUFS:  // the device's queue or socket memory: transient, like a full queue
            return -FI_EAGAIN;
        case EMSGSIZE:
            return -FI_EMSGSIZE;
        default:
            return -FI_EIO;
    }
}

}  // namespace

Fd &Fd::operator=(Fd &&o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
}

Fd::~Fd() {
    if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<UdpSocketEndpoint> UdpSocketEndpoint::open(const DgramOptions &options, std::string *error) {
    std::unique_ptr<UdpSocketEndpoint> self(new UdpSocketEndpoint());
    auto fail = [&](const std::string &what) {
        *error = "kernel UDP channel: " + what;
        return nullptr;
    };
    self->local_ = udp::local_addresses(options.iface, error);
    if (self->local_.empty()) return fail(*error);
    self->netns_ = udp::netns_id();
    self->mtu_cap_ = options.mtu;

    self->sock_ = Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (self->sock_.get() < 0) return fail(std::string("socket: ") + std::strerror(errno));
    const int fd = self->sock_.get();
    // Bound to every address: peers send to one we published, or to loopback when they share
    // our network namespace. The port is the kernel's choice.
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(fd, reinterpret_cast<sockaddr *>(&any), sizeof any) != 0)
        return fail(std::string("bind: ") + std::strerror(errno));
    socklen_t len = sizeof any;
    getsockname(fd, reinterpret_cast<sockaddr *>(&any), &len);
    self->port_ = ntohs(any.sin_port);
    // Never fragment: a datagram is lost whole or arrives whole, and a wrong size fails loudly.
    const int pmtu = IP_PMTUDISC_DO;
    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);

    const udp::Offloads offloads = udp::enable_offloads(fd, options.gso, options.gro);
    self->gso_ = offloads.gso;
    self->gro_ = offloads.gro;
    self->gso_note_ = offloads.gso_note;
    self->gro_note_ = offloads.gro_note;
    self->size_buffers();
    self->wake_ = Fd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));

    // Receive buffers: a coalesced message can hold up to 64 KiB, a single datagram our cap.
    const std::size_t batch = self->gro_ ? kRxBatchGro : kRxBatch;
    self->rx_buffer_ = self->gro_ ? 65536 : udp::kMaxDatagram + 64;
    self->rx_pool_.resize(batch * self->rx_buffer_);
    self->rx_msgs_.resize(batch);
    self->rx_iov_.resize(batch);
    self->rx_src_.resize(batch);
    self->rx_control_.resize(batch * CMSG_SPACE(sizeof(int)));

    udp::Name name{self->netns_, self->port_, {}};
    for (const auto &a : self->local_) name.addresses.push_back(a.addr);
    udp::encode_name(name, std::span<std::byte, udp::kNameBytes>(self->name_.data(), udp::kNameBytes));
    OPTIREDUCE_LOG(info, "opened %s", self->describe().c_str());
    return self;
}

void UdpSocketEndpoint::size_buffers() {
    buffers_ = udp::size_buffers(sock_.get());
    if (buffers_.receive < udp::kWarnReceiveBuffer)
        OPTIREDUCE_LOG(warn,
                       "kernel UDP channel: the kernel granted a %d KiB receive buffer instead of %d MiB; "
                       "bursts that arrive while this rank is busy will be lost. Raise the limit, e.g. "
                       "sysctl -w net.core.rmem_max=%d",
                       buffers_.receive / 1024, udp::kWantReceiveBuffer >> 20, udp::kWantReceiveBuffer);
}

std::string UdpSocketEndpoint::describe() const {
    std::string where;
    for (const auto &a : local_) {
        char buf[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &a.addr, buf, sizeof buf);
        where += (where.empty() ? "" : ", ") + std::string(buf) + " (" + a.iface + ")";
    }
    return "kernel UDP channel on port " + std::to_string(port_) + " of " + where + ": GSO " + gso_note_ + ", GRO " +
           gro_note_ + ", datagrams up to " + std::to_string(udp::datagram_for_mtu(65536, mtu_cap_)) +
           " bytes (less where the path MTU is), " +
           "socket buffers " + std::to_string(buffers_.receive / 1024) + " KiB receive, " +
           std::to_string(buffers_.send / 1024) + " KiB send (granted)";
}

bool UdpSocketEndpoint::resolve(std::span<const std::byte> names, int count, std::vector<fi_addr_t> &out,
                                std::string *error) {
    std::unique_lock lock(peers_mutex_);
    out.assign(static_cast<std::size_t>(count), FI_ADDR_NOTAVAIL);
    for (int i = 0; i < count; ++i) {
        const auto slot = names.subspan(static_cast<std::size_t>(i) * kNameSlot, kNameSlot);
        std::string key(reinterpret_cast<const char *>(slot.data()), kNameSlot);
        if (auto it = known_.find(key); it != known_.end()) {
            out[static_cast<std::size_t>(i)] = it->second;
            continue;
        }
        const std::optional<udp::Name> name = udp::decode_name(slot);
        if (!name) {
            *error = "kernel UDP channel: rank " + std::to_string(i) +
                     " sent no kernel-channel address (a different OPTIREDUCE_DGRAM_PROVIDER or release?)";
            return false;
        }
        Peer p;
        p.addr = udp::choose_destination(*name, netns_, local_);
        p.mtu = udp::path_mtu(p.addr);
        const auto handle = static_cast<fi_addr_t>(peers_.size());
        peers_.push_back(p);
        known_.emplace(std::move(key), handle);
        // Datagrams from this peer may come from any address it published, or from loopback.
        by_source_[source_key(p.addr)] = handle;
        for (const in_addr &a : name->addresses) {
            sockaddr_in s = p.addr;
            s.sin_addr = a;
            by_source_.emplace(source_key(s), handle);
        }
        out[static_cast<std::size_t>(i)] = handle;
        OPTIREDUCE_LOG(debug, "kernel UDP peer %d at %s, path MTU %zu", i, udp::to_string(p.addr).c_str(), p.mtu);
    }
    return true;
}

std::size_t UdpSocketEndpoint::max_datagram(std::span<const fi_addr_t> peers) const {
    std::shared_lock lock(peers_mutex_);
    std::size_t d = udp::kMaxDatagram;
    for (fi_addr_t h : peers)
        if (h < peers_.size()) d = std::min(d, udp::datagram_for_mtu(peers_[h].mtu, mtu_cap_));
    return d;
}

std::size_t UdpSocketEndpoint::run_datagrams(std::size_t datagram_bytes) const {
    if (!gso() || datagram_bytes == 0) return kRunWithoutGso;
    return std::max<std::size_t>(1, std::min(kMaxSegments, kMaxGsoBytes / datagram_bytes));
}

int UdpSocketEndpoint::send(fi_addr_t dest, std::span<const std::byte> header, std::span<const std::byte> payload) {
    const DgramRun run{dest, header, header.size(), payload, payload.size(), 1};
    std::size_t sent = 0;
    const int rc = send_runs(std::span(&run, 1), std::span(&sent, 1));
    return rc < 0 ? rc : sent == 1 ? 0 : -FI_EAGAIN;
}

int UdpSocketEndpoint::send_runs(std::span<const DgramRun> runs, std::span<std::size_t> sent) {
    std::fill(sent.begin(), sent.end(), 0);
    for (;;) {
        const bool gso = this->gso();
        const int rc = send_batch(runs, sent, gso);
        if (rc != -FI_EIO || !gso) return rc;
        // EIO from an offloaded send: the device cannot segment (no checksum offload, xfrm).
        // From here on single datagrams; what was sent stays sent. One thread writes the note.
        bool expected = true;
        if (gso_.compare_exchange_strong(expected, false)) {
            gso_note_ = "off: a segmented send failed on this route (EIO)";
            OPTIREDUCE_LOG(info, "kernel UDP channel: %s; sending single datagrams", gso_note_.c_str());
        }
    }
}

int UdpSocketEndpoint::send_batch(std::span<const DgramRun> runs, std::span<std::size_t> sent, bool gso) {
    // Scratch of the calling thread: senders on several threads never share it.
    thread_local std::vector<mmsghdr> msgs;
    thread_local std::vector<iovec> iov;
    thread_local std::vector<std::byte> control;
    thread_local std::vector<std::pair<std::size_t, std::size_t>> owner;  // (run, datagrams)
    std::size_t total = 0, total_msgs = 0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
        const std::size_t left = runs[r].count - sent[r];
        total += left;
        const std::size_t per = gso ? run_datagrams(runs[r].header_bytes + runs[r].segment) : 1;
        total_msgs += (left + per - 1) / per;
    }
    if (total == 0) return 0;
    iov.resize(2 * total);
    msgs.resize(total_msgs);
    control.resize(total_msgs * CMSG_SPACE(sizeof(std::uint16_t)));
    owner.resize(total_msgs);

    std::shared_lock lock(peers_mutex_);
    std::size_t m = 0, v = 0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
        const DgramRun &run = runs[r];
        if (run.dest >= peers_.size()) return -FI_EINVAL;
        const std::size_t datagram = run.header_bytes + run.segment;
        const std::size_t per = gso ? run_datagrams(datagram) : 1;
        for (std::size_t i = sent[r]; i < run.count; i += per, ++m) {
            const std::size_t k = std::min(per, run.count - i);
            msghdr &h = msgs[m].msg_hdr;
            h = msghdr{};
            h.msg_name = const_cast<sockaddr_in *>(&peers_[run.dest].addr);
            h.msg_namelen = sizeof(sockaddr_in);
            h.msg_iov = &iov[v];
            for (std::size_t j = i; j < i + k; ++j) {
                const std::size_t at = j * run.segment;
                iov[v++] = {const_cast<std::byte *>(run.headers.data() + j * run.header_bytes), run.header_bytes};
                iov[v++] = {const_cast<std::byte *>(run.payload.data() + at),
                            std::min(run.segment, run.payload.size() - at)};
            }
            h.msg_iovlen = 2 * k;
            if (k > 1) {
                // The segment size: every datagram of the message but the last is exactly this.
                h.msg_control = control.data() + m * CMSG_SPACE(sizeof(std::uint16_t));
                h.msg_controllen = CMSG_SPACE(sizeof(std::uint16_t));
                cmsghdr *c = CMSG_FIRSTHDR(&h);
                c->cmsg_level = SOL_UDP;
                c->cmsg_type = UDP_SEGMENT;
                c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
                const auto seg = static_cast<std::uint16_t>(datagram);
                std::memcpy(CMSG_DATA(c), &seg, sizeof seg);
            }
            owner[m] = {r, k};
        }
    }
    // sendmmsg stops at the first message that fails; the messages before it are sent.
    std::size_t done = 0;
    while (done < m) {
        const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(m - done, UIO_MAXIOV));
        const int n = ::sendmmsg(sock_.get(), msgs.data() + done, chunk, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno == EAGAIN || errno == ENOBUFS ? 0 : errno_to_fi(errno);
        }
        for (int i = 0; i < n; ++i) sent[owner[done + static_cast<std::size_t>(i)].first] += owner[done + i].second;
        done += static_cast<std::size_t>(n);
        if (static_cast<unsigned>(n) < chunk) break;  // the next one would block or fail: next round
    }
    return 0;
}

int UdpSocketEndpoint::poll(const Sink &sink) {
    std::unique_lock lock(rx_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return -1;
    const std::size_t batch = rx_msgs_.size();
    const std::size_t control = CMSG_SPACE(sizeof(int));
    int handled = 0;
    for (;;) {
        for (std::size_t i = 0; i < batch; ++i) {
            rx_iov_[i] = {rx_pool_.data() + i * rx_buffer_, rx_buffer_};
            msghdr &h = rx_msgs_[i].msg_hdr;
            h = msghdr{};
            h.msg_name = &rx_src_[i];
            h.msg_namelen = sizeof(sockaddr_in);
            h.msg_iov = &rx_iov_[i];
            h.msg_iovlen = 1;
            h.msg_control = rx_control_.data() + i * control;
            h.msg_controllen = control;
        }
        const int n = ::recvmmsg(sock_.get(), rx_msgs_.data(), static_cast<unsigned>(batch), MSG_DONTWAIT, nullptr);
        if (n <= 0) break;
        std::shared_lock peers(peers_mutex_);
        for (int i = 0; i < n; ++i) {
            const msghdr &h = rx_msgs_[static_cast<std::size_t>(i)].msg_hdr;
            const std::size_t len = rx_msgs_[static_cast<std::size_t>(i)].msg_len;
            if (h.msg_flags & MSG_TRUNC) {
                OPTIREDUCE_LOG(debug, "kernel UDP channel: a datagram larger than %zu bytes was cut; dropped", rx_buffer_);
                continue;
            }
            const auto found = by_source_.find(source_key(rx_src_[static_cast<std::size_t>(i)]));
            const fi_addr_t src = found != by_source_.end() ? found->second : kUnknownSource;
            // With GRO one message may carry several datagrams of one sender, all `segment`
            // bytes but the last.
            std::size_t segment = len;
            for (const cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(const_cast<msghdr *>(&h), const_cast<cmsghdr *>(c)))
                if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
                    int s = 0;
                    std::memcpy(&s, CMSG_DATA(c), sizeof s);
                    if (s > 0) segment = static_cast<std::size_t>(s);
                }
            const std::byte *buf = rx_pool_.data() + static_cast<std::size_t>(i) * rx_buffer_;
            if (segment < len) coalesced_.fetch_add((len + segment - 1) / segment, std::memory_order_relaxed);
            for (std::size_t at = 0; at < len; at += segment) {
                sink(std::span<const std::byte>(buf + at, std::min(segment, len - at)), src);
                ++handled;
            }
        }
        if (static_cast<std::size_t>(n) < batch) break;
    }
    return handled;
}

void UdpSocketEndpoint::wait(int timeout_ms) {
    pollfd pfd[2] = {{sock_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    ::poll(pfd, wake_.get() >= 0 ? 2 : 1, timeout_ms);
    if (pfd[1].revents & POLLIN) {
        std::uint64_t v;
        [[maybe_unused]] auto r = ::read(wake_.get(), &v, sizeof v);
    }
}

void UdpSocketEndpoint::wake() {
    if (wake_.get() < 0) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(wake_.get(), &one, sizeof one);
}

}  // namespace optireduce
