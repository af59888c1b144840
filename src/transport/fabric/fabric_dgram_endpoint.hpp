// SPDX-License-Identifier: BSD-3-Clause
// The datagram channel over a libfabric FI_EP_DGRAM provider (efa, verbs UD, udp). Owns fabric,
// domain, address vector, completion queue, endpoint (RAII) and a pool of posted receive
// buffers that is kept full.
//
// Written for any datagram provider, not just udp: it honours max_msg_size, FI_MSG_PREFIX
// (prefix bytes in front of every buffer), FI_MR_LOCAL (the receive pool is registered) and
// FI_SOURCE (the sender's address comes with each completion, though the wire header's source
// rank is what the receiver trusts after validation).
//
// Threading: opened with FI_THREAD_SAFE. Any thread may send; one thread at a time drains
// (the progress thread, or a caller helping while it waits), which poll() serialises itself.
#pragma once

#include "transport/dgram_endpoint.hpp"
#include "transport/fabric/fabric.hpp"
#include "transport/peer_addresses.hpp"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace optireduce {

class FabricDgramEndpoint final : public DgramEndpoint {
public:
    // Opens an endpoint on the named datagram provider ("udp", "efa", ...). On failure returns
    // nullptr and a message in *error naming the provider and the libfabric error.
    static std::unique_ptr<FabricDgramEndpoint> open(const std::string &provider, std::string *error);
    ~FabricDgramEndpoint() override;

    std::string describe() const override;
    bool resolve(std::span<const std::byte> names, int count, std::vector<fi_addr_t> &out, std::string *error) override;
    // The provider's max_msg_size, whoever the peers are.
    std::size_t max_datagram(std::span<const fi_addr_t>) const override { return max_datagram_; }
    // One call per datagram whatever the run: enough to interleave destinations.
    std::size_t run_datagrams(std::size_t) const override { return 8; }
    int send(fi_addr_t dest, std::span<const std::byte> header, std::span<const std::byte> payload) override;
    int send_runs(std::span<const DgramRun> runs, std::span<std::size_t> sent) override;
    int poll(const Sink &sink) override;
    void wait(std::chrono::microseconds timeout) override;
    void wake() override;

private:
    explicit FabricDgramEndpoint(const std::string &provider) : DgramEndpoint(provider) {}
    bool post_receive(std::size_t slot);
    // open's last step: the send and receive pools, registered when the provider needs it, and
    // every receive slot posted. Returns 0 or the failing call's status, named in *what.
    int open_pools(std::size_t tx_slots, const char **what);
    void enlarge_socket_buffer();

    FiInfoPtr info_;
    // Members are destroyed bottom-up: endpoint, CQ, AV, registrations, domain, fabric, and only
    // then the memory the registrations and posted receives point into.
    std::vector<std::byte> rx_pool_;
    std::vector<fi_context2> rx_ctx_;
    std::vector<std::byte> tx_pool_;
    std::vector<std::byte> inject_copy_;  // header + payload of an injected send, under tx_mutex_
    // Sends larger than inject_limit_ go through a ring of slots, each busy until its completion
    // comes back through poll().
    struct TxSlot {
        fi_context2 ctx;  // first: the completion hands back this address
        bool busy = false;
    };
    std::vector<TxSlot> tx_slots_;
    FiHandle<fid_fabric> fabric_;
    FiHandle<fid_domain> domain_;
    FiHandle<fid_mr> rx_mr_;
    FiHandle<fid_mr> tx_mr_;
    FiHandle<fid_av> av_;
    FiHandle<fid_cq> cq_;
    FiHandle<fid_ep> ep_;

    std::size_t max_datagram_ = 0;
    std::size_t prefix_ = 0;        // FI_MSG_PREFIX bytes in front of every buffer
    std::size_t inject_limit_ = 0;  // sends up to this size need no buffer of ours after return
    std::size_t slot_bytes_ = 0;    // prefix + max datagram, rounded up
    std::size_t rx_slots_ = 0;
    bool mr_local_ = false;
    bool has_source_ = false;  // FI_SOURCE granted: completions name the sender
    std::mutex tx_mutex_;      // tx_slots_, inject_copy_
    std::size_t tx_next_ = 0;
    std::mutex rx_mutex_;  // one drainer at a time
    int wait_fd_ = -1;     // the CQ's, owned by libfabric
    int wake_fd_ = -1;     // an eventfd, ours
    int rcvbuf_ = 0;
    // Two threads setting up communicators at once (MPI_THREAD_MULTIPLE) resolve on this shared
    // endpoint together: its name cache (a map) and the AV need one writer at a time.
    std::mutex peers_mutex_;
    PeerAddresses peers_;
};

}  // namespace optireduce
