// SPDX-License-Identifier: BSD-3-Clause
#include "transport/fabric/fabric_dgram_endpoint.hpp"

#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"
#include "transport/fabric/hints.hpp"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace optireduce {
namespace {

constexpr int kCqBatch = 64;
// The provider's rx queue (1024 on udp) bounds how many receives can be posted; we keep it full
// so a burst finds buffers, and the kernel socket buffer (enlarged below) absorbs the rest.
constexpr std::size_t kMaxRxSlots = 1024;
constexpr std::size_t kMaxTxSlots = 256;
// What we ask the kernel for. Unprivileged processes get at most net.core.rmem_max (4 MiB on
// Debian: ~1800 datagrams instead of the 92 the default 208 KiB holds).
constexpr int kWantRcvbuf = 32 << 20;

// A datagram endpoint of `provider`: with FI_SOURCE first (the receiver cross-checks the
// sender), without it if the provider lacks it.
int find_dgram_info(const std::string &provider, fi_info **info) {
    FiInfoPtr hints = engine_hints(FI_EP_DGRAM, FI_MSG | FI_SEND | FI_RECV, provider.c_str());
    if (!hints) return -FI_ENOMEM;
    hints->caps |= FI_SOURCE;
    int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), info);
    if (rc != 0 || *info == nullptr) {
        hints->caps &= ~FI_SOURCE;
        rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), info);
    }
    return rc != 0 || *info == nullptr ? (rc ? rc : -FI_ENODATA) : 0;
}

}  // namespace

std::unique_ptr<FabricDgramEndpoint> FabricDgramEndpoint::open(const std::string &provider, std::string *error) {
    std::unique_ptr<FabricDgramEndpoint> self(new FabricDgramEndpoint(provider));
    auto fail = [&](const char *what, int rc) {
        *error = "datagram provider '" + provider + "': " + fi_error_text(what, rc);
        return nullptr;
    };

    fi_info *info = nullptr;
    int rc = find_dgram_info(provider, &info);
    if (rc != 0) return fail("fi_getinfo found no datagram endpoint", rc);
    self->info_.reset(info);
    self->has_source_ = (info->caps & FI_SOURCE) != 0;
    self->max_datagram_ = info->ep_attr->max_msg_size;
    self->prefix_ = (info->mode & FI_MSG_PREFIX) ? info->ep_attr->msg_prefix_size : 0;
    self->inject_limit_ = info->tx_attr->inject_size;
    self->mr_local_ = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    self->slot_bytes_ = (self->prefix_ + self->max_datagram_ + 63) / 64 * 64;
    if (self->max_datagram_ < 64) return fail("max_msg_size too small for a datagram header", -FI_EINVAL);

    if ((rc = fi_fabric(info->fabric_attr, self->fabric_.out(), nullptr))) return fail("fi_fabric", rc);
    if ((rc = fi_domain(self->fabric_.get(), info, self->domain_.out(), nullptr))) return fail("fi_domain", rc);

    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if ((rc = fi_av_open(self->domain_.get(), &av_attr, self->av_.out(), nullptr))) return fail("fi_av_open", rc);

    self->rx_slots_ = std::min(kMaxRxSlots, info->rx_attr->size);
    const std::size_t tx_slots = std::min(kMaxTxSlots, info->tx_attr->size);
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_MSG;
    cq_attr.size = self->rx_slots_ + tx_slots + 64;
    // A wait fd lets an idle progress thread sleep in poll(2) instead of spinning; providers
    // without one (efa DGRAM) get a short sleep loop instead.
    cq_attr.wait_obj = FI_WAIT_FD;
    if (fi_cq_open(self->domain_.get(), &cq_attr, self->cq_.out(), nullptr) != 0) {
        cq_attr.wait_obj = FI_WAIT_NONE;
        if ((rc = fi_cq_open(self->domain_.get(), &cq_attr, self->cq_.out(), nullptr))) return fail("fi_cq_open", rc);
    }

    const char *step = nullptr;
    if ((rc = open_bound_endpoint(self->domain_.get(), info, self->av_.get(), self->cq_.get(), self->ep_, &step)))
        return fail(step, rc);
    if (cq_attr.wait_obj == FI_WAIT_FD && fi_control(&self->cq_.get()->fid, FI_GETWAIT, &self->wait_fd_) != 0)
        self->wait_fd_ = -1;
    self->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

    std::size_t len = kNameSlot;
    if ((rc = fi_getname(&self->ep_.get()->fid, self->name_.data(), &len))) return fail("fi_getname", rc);
    if ((rc = self->open_pools(tx_slots, &step))) return fail(step, rc);

    self->enlarge_socket_buffer();
    OPTIREDUCE_LOG(info,
                   "opened %s datagram endpoint: max datagram %zu, prefix %zu, inject %zu, mr_local %d, "
                   "FI_SOURCE %d, wait fd %d, %zu receives posted, socket buffer %d bytes",
                   info->fabric_attr->prov_name, self->max_datagram_, self->prefix_, self->inject_limit_,
                   self->mr_local_ ? 1 : 0, self->has_source_ ? 1 : 0, self->wait_fd_ >= 0 ? 1 : 0, self->rx_slots_,
                   self->rcvbuf_);
    return self;
}

int FabricDgramEndpoint::open_pools(std::size_t tx_slots, const char **what) {
    rx_pool_.resize(rx_slots_ * slot_bytes_);
    rx_ctx_.resize(rx_slots_);
    tx_pool_.resize(tx_slots * slot_bytes_);
    tx_slots_.resize(tx_slots);
    inject_copy_.resize(slot_bytes_);
    int rc;
    if (mr_local_) {
        if ((rc = fi_mr_reg(domain_.get(), rx_pool_.data(), rx_pool_.size(), FI_RECV, 0, 0, 0, rx_mr_.out(), nullptr)))
            return *what = "fi_mr_reg(receive pool)", rc;
        if ((rc = fi_mr_reg(domain_.get(), tx_pool_.data(), tx_pool_.size(), FI_SEND, 0, 0, 0, tx_mr_.out(), nullptr)))
            return *what = "fi_mr_reg(send pool)", rc;
    }
    for (std::size_t i = 0; i < rx_slots_; ++i)
        if (!post_receive(i)) return *what = "fi_recv", -FI_EAGAIN;
    return 0;
}

FabricDgramEndpoint::~FabricDgramEndpoint() {
    if (int rc = ep_.reset()) OPTIREDUCE_LOG(debug, "%s", fi_error_text("fi_close(dgram ep)", rc).c_str());
    if (wake_fd_ >= 0) ::close(wake_fd_);
}

// The udp provider never sets SO_RCVBUF, so a receiver that is descheduled for a moment (a
// 2-core host running 4 ranks) loses whatever exceeds ~92 datagrams. It offers no knob, but its
// socket is ours: find the datagram socket bound to our endpoint's address among this process's
// descriptors and enlarge its buffer. Best effort: other providers have no socket to find.
void FabricDgramEndpoint::enlarge_socket_buffer() {
    sockaddr_storage mine{};
    std::memcpy(&mine, name_.data(), std::min(sizeof mine, kNameSlot));
    if (mine.ss_family != AF_INET && mine.ss_family != AF_INET6) return;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return;
    while (dirent *e = readdir(dir)) {
        const int fd = std::atoi(e->d_name);
        if (fd <= 2) continue;
        int type = 0;
        socklen_t tl = sizeof type;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_DGRAM) continue;
        sockaddr_storage bound{};
        socklen_t bl = sizeof bound;
        if (getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &bl) != 0 || bound.ss_family != mine.ss_family)
            continue;
        const bool same =
            mine.ss_family == AF_INET
                ? reinterpret_cast<sockaddr_in &>(bound).sin_port == reinterpret_cast<sockaddr_in &>(mine).sin_port
                : reinterpret_cast<sockaddr_in6 &>(bound).sin6_port == reinterpret_cast<sockaddr_in6 &>(mine).sin6_port;
        if (!same) continue;
        // SO_RCVBUFFORCE passes rmem_max with CAP_NET_ADMIN; otherwise the capped request.
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kWantRcvbuf, sizeof kWantRcvbuf) != 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kWantRcvbuf, sizeof kWantRcvbuf);
        socklen_t vl = sizeof rcvbuf_;
        getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf_, &vl);
        break;
    }
    closedir(dir);
}

bool FabricDgramEndpoint::post_receive(std::size_t slot) {
    void *desc = rx_mr_ ? fi_mr_desc(rx_mr_.get()) : nullptr;
    for (int attempt = 0; attempt < 1000; ++attempt) {
        const ssize_t rc = fi_recv(ep_.get(), rx_pool_.data() + slot * slot_bytes_, prefix_ + max_datagram_, desc,
                                   FI_ADDR_UNSPEC, &rx_ctx_[slot]);
        if (rc == 0) return true;
        if (rc != -FI_EAGAIN) return false;
    }
    return false;
}

bool FabricDgramEndpoint::resolve(std::span<const std::byte> names, int count, std::vector<fi_addr_t> &out,
                                  std::string *error) {
    std::lock_guard lock(peers_mutex_);
    return peers_.resolve(av_.get(), provider(), names, count, out, error);
}

int FabricDgramEndpoint::send(fi_addr_t dest, std::span<const std::byte> header, std::span<const std::byte> payload) {
    const std::size_t len = header.size() + payload.size();
    if (len > max_datagram_) return -FI_EMSGSIZE;
    // Header and payload are contiguous on the wire; building them in one buffer costs one copy
    // of at most max_datagram bytes, far below the per-datagram system call.
    std::lock_guard lock(tx_mutex_);
    std::byte *buf;
    TxSlot *slot = nullptr;
    if (len <= inject_limit_) {  // prefix bytes do not count toward the inject limit
        buf = inject_copy_.data();
    } else {
        slot = &tx_slots_[tx_next_];
        if (slot->busy) return -FI_EAGAIN;  // the ring is full until completions come back
        buf = tx_pool_.data() + tx_next_ * slot_bytes_;
    }
    std::memcpy(buf + prefix_, header.data(), header.size());
    if (!payload.empty()) std::memcpy(buf + prefix_ + header.size(), payload.data(), payload.size());
    if (!slot) return static_cast<int>(fi_inject(ep_.get(), buf, prefix_ + len, dest));
    void *desc = tx_mr_ ? fi_mr_desc(tx_mr_.get()) : nullptr;
    const ssize_t rc = fi_send(ep_.get(), buf, prefix_ + len, desc, dest, &slot->ctx);
    if (rc == 0) {
        slot->busy = true;
        tx_next_ = (tx_next_ + 1) % tx_slots_.size();
    }
    return static_cast<int>(rc);
}

int FabricDgramEndpoint::send_runs(std::span<const DgramRun> runs, std::span<std::size_t> sent) {
    // libfabric has no segmentation offload: one send per datagram, stopping at a full queue.
    for (std::size_t r = 0; r < runs.size(); ++r) {
        const DgramRun &run = runs[r];
        sent[r] = 0;
        for (std::size_t i = 0; i < run.count; ++i) {
            const std::size_t at = i * run.segment;
            const int rc = send(run.dest, run.headers.subspan(i * run.header_bytes, run.header_bytes),
                                run.payload.subspan(at, std::min(run.segment, run.payload.size() - at)));
            if (rc == -FI_EAGAIN) break;
            if (rc < 0) return rc;
            ++sent[r];
        }
    }
    return 0;
}

std::string FabricDgramEndpoint::describe() const {
    return "libfabric " + provider() + ": max datagram " + std::to_string(max_datagram_) + ", prefix " +
           std::to_string(prefix_) + ", FI_SOURCE " + (has_source_ ? "yes" : "no") + ", socket buffer " +
           (rcvbuf_ > 0 ? std::to_string(rcvbuf_) + " bytes" : "n/a");
}

int FabricDgramEndpoint::poll(const Sink &sink) {
    std::unique_lock lock(rx_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return -1;
    int handled = 0;
    fi_cq_msg_entry entries[kCqBatch];
    fi_addr_t sources[kCqBatch];
    for (;;) {
        const ssize_t n = has_source_ ? fi_cq_readfrom(cq_.get(), entries, kCqBatch, sources)
                                      : fi_cq_read(cq_.get(), entries, kCqBatch);
        if (n == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            if (fi_cq_readerr(cq_.get(), &err, 0) != 1) break;
            // A failed receive (truncated datagram, ...) still frees its slot: repost it.
            auto *ctx = static_cast<fi_context2 *>(err.op_context);
            if (ctx >= rx_ctx_.data() && ctx < rx_ctx_.data() + rx_ctx_.size()) {
                post_receive(static_cast<std::size_t>(ctx - rx_ctx_.data()));
            } else if (ctx) {
                std::lock_guard tx(tx_mutex_);
                reinterpret_cast<TxSlot *>(ctx)->busy = false;
            }
            bump(process_stats().completion_errors);
            OPTIREDUCE_LOG(debug, "datagram transfer failed: %s", fi_strerror(err.err));
            continue;
        }
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; ++i) {
            auto *ctx = static_cast<fi_context2 *>(entries[i].op_context);
            if (ctx < rx_ctx_.data() || ctx >= rx_ctx_.data() + rx_ctx_.size()) {
                std::lock_guard tx(tx_mutex_);
                reinterpret_cast<TxSlot *>(ctx)->busy = false;  // a send from the slot ring
                continue;
            }
            const auto slot = static_cast<std::size_t>(ctx - rx_ctx_.data());
            const std::byte *buf = rx_pool_.data() + slot * slot_bytes_ + prefix_;
            const std::size_t len = entries[i].len >= prefix_ ? entries[i].len - prefix_ : 0;
            const std::size_t got = std::min(len, max_datagram_);
            sink(std::span<const std::byte>(buf, got), has_source_ ? sources[i] : FI_ADDR_NOTAVAIL);
            post_receive(slot);
            ++handled;
        }
        if (n < kCqBatch) break;
    }
    return handled;
}

void FabricDgramEndpoint::wait(std::chrono::microseconds timeout) {
    if (wait_fd_ < 0) {
        // No wait object: sleep briefly, so an idle rank costs little CPU and a busy one polls.
        constexpr std::chrono::microseconds kIdleNap{1000};
        std::this_thread::sleep_for(timeout < timeout.zero() ? kIdleNap : std::min(timeout, kIdleNap));
        return;
    }
    fid *fids[1] = {&cq_.get()->fid};
    if (fi_trywait(fabric_.get(), fids, 1) != FI_SUCCESS) return;  // something is waiting already
    pollfd pfd[2] = {{wait_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const timespec ts = timespec_of(timeout);
    ::ppoll(pfd, wake_fd_ >= 0 ? 2 : 1, timeout < timeout.zero() ? nullptr : &ts, nullptr);
    if (pfd[1].revents & POLLIN) {
        std::uint64_t v;
        [[maybe_unused]] auto r = ::read(wake_fd_, &v, sizeof v);
    }
}

void FabricDgramEndpoint::wake() {
    if (wake_fd_ < 0) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(wake_fd_, &one, sizeof one);
}

}  // namespace optireduce
