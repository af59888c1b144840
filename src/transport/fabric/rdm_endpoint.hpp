// SPDX-License-Identifier: BSD-3-Clause
// One reliable (FI_EP_RDM, tagged) libfabric endpoint per provider per process, shared by every
// communicator that uses that provider. Owns fabric, domain, address vector, completion queue
// and endpoint (RAII), the peer address table, and progress.
//
// Threading: one mutex guards posting, completion dispatch and the list of active operations.
// Completions are dispatched to callbacks under that mutex, from whichever thread polls, so an
// operation's state only changes while the lock is held.
#pragma once

#include "transport/fabric/fabric.hpp"
#include "transport/peer_addresses.hpp"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace optireduce {

// Context of one posted send or receive. fi_context2 must come first: libfabric hands back
// exactly this pointer (FI_CONTEXT2 mode) and may use its storage while the transfer is posted.
struct Completion {
    fi_context2 fi_ctx;
    void (*on_done)(Completion *self, int error) = nullptr;  // error: 0 or a positive fi errno
    void *owner = nullptr;
    std::uint32_t index = 0;
};

// Something with posted transfers that must be pushed forward on every progress round (post
// sends that became ready, retry posts that got FI_EAGAIN). Called with the endpoint lock held.
class Progressable {
public:
    virtual void advance() = 0;

protected:
    ~Progressable() = default;
};

// A registered staging buffer's descriptor (nullptr when the provider does not need FI_MR_LOCAL).
class MemoryRegion {
public:
    MemoryRegion() = default;
    explicit MemoryRegion(FiHandle<fid_mr> mr) : mr_(std::move(mr)) {}
    void *desc() const { return mr_ ? fi_mr_desc(mr_.get()) : nullptr; }

private:
    FiHandle<fid_mr> mr_;
};

class RdmEndpoint {
public:
    static constexpr std::size_t kNameSlot = kAddressSlot;

    // Opens an endpoint on the named provider ("shm", "tcp;ofi_rxm", ...). On failure returns
    // nullptr and a message in *error that names the provider and the libfabric error.
    static std::unique_ptr<RdmEndpoint> open(const std::string &provider, std::string *error);
    ~RdmEndpoint();

    const std::string &provider() const { return provider_; }
    // This endpoint's address, zero-padded to kNameSlot bytes.
    const std::array<std::byte, kNameSlot> &name() const { return name_; }
    std::size_t max_msg_size() const { return max_msg_size_; }
    bool needs_registration() const { return mr_local_; }

    // Resolves peers from their kNameSlot-byte names (rank order). Addresses already known
    // (another communicator with the same peer) are reused, so the table grows with distinct
    // peers, not with communicators.
    bool resolve(std::span<const std::byte> names, int count, std::vector<fi_addr_t> &out, std::string *error);

    MemoryRegion register_memory(void *buf, std::size_t len, std::string *error);

    std::mutex &mutex() { return mutex_; }

    // The following require mutex() held.
    // 0 on success, -FI_EAGAIN when the queue is full (retry after progress), else an error.
    int post_send(const void *buf, std::size_t len, void *desc, fi_addr_t dest, std::uint64_t tag, Completion *c);
    int post_recv(void *buf, std::size_t len, void *desc, std::uint64_t tag, Completion *c);
    // Asks libfabric to cancel a posted receive; its completion then arrives with FI_ECANCELED.
    void cancel(Completion *c);
    // Drains the completion queue, dispatching callbacks, then advances every active operation.
    // Returns the number of completions handled.
    int progress();
    void add_active(Progressable *p);
    void remove_active(Progressable *p);

private:
    RdmEndpoint() = default;

    std::string provider_;
    FiInfoPtr info_;
    // Declaration order is teardown order in reverse: endpoint first, fabric last.
    FiHandle<fid_fabric> fabric_;
    FiHandle<fid_domain> domain_;
    FiHandle<fid_av> av_;
    FiHandle<fid_cq> cq_;
    FiHandle<fid_ep> ep_;

    std::array<std::byte, kNameSlot> name_{};
    std::size_t max_msg_size_ = 0;
    bool mr_local_ = false;
    PeerAddresses peers_;

    std::mutex mutex_;
    std::vector<Progressable *> active_;
};

}  // namespace optireduce
