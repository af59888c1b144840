// SPDX-License-Identifier: BSD-3-Clause
// OPTIREDUCE_CARRY (error feedback): what a communicator's bounded calls dropped, kept by each
// rank until the next call that sums the same tensor (docs/architecture.md, "Carrying what was
// dropped").
//
// A residual is keyed on the call's receive buffer and count. Frameworks reduce each gradient
// bucket into the same tensor every step (PyTorch DDP's buckets, Horovod's fusion buffer while
// the tensors it fuses repeat), so the receive buffer names the tensor, and the count guards
// against a buffer reused at another size. The send buffer is not in the key: it is often a
// temporary copy, and under MPI_IN_PLACE it is the receive buffer anyway. The datatype is: the
// engine takes only floats.
//
// One residual per key, kept in the buffer that also holds the next call's input (its own plus
// the residual). A residual larger than the input it joins is scaled down to the input's norm
// (kMaxResidualRatio; counted in carry_capped_calls): error feedback assumes what it carries is
// a fraction of a step, and a lump that comes back at once sets training back (a host slow for
// seconds left 75% of ten steps to carry on the 2.2 M job: 20 more steps). Operations that
// lose that much are not carried at all (BoundedOperation::kCarryMaxHoles); this bounds what
// several smaller ones in a row can pile up. A key no call on the communicator used for `idle_calls` calls, or a
// residual that would take the store beyond `max_bytes`, is dropped and counted (carry_dropped_entries). Calls on one
// communicator run one at a time (comm_executor.hpp), so the store takes no lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace optireduce {

class CarryStore {
public:
    struct Slot {
        std::vector<float> values;    // the residual while pending; then the call's input
        std::uint64_t pending = 0;    // entries (wire domain) the residual carries; 0: none waits
        std::uint64_t last_call = 0;  // the store's call count when a call last used it
    };

    static constexpr double kMaxResidualRatio = 1;  // ||residual added|| <= this x ||input||

    CarryStore(std::size_t max_bytes, std::uint64_t idle_calls) : max_bytes_(max_bytes), idle_calls_(idle_calls) {}
    CarryStore(const CarryStore &) = delete;
    CarryStore &operator=(const CarryStore &) = delete;
    ~CarryStore();  // what is still pending is dropped, and counted

    // A bounded call on (recvbuf, count) begins: drops the residuals idle too long, and returns
    // this key's slot (made empty where new).
    Slot &begin(const void *recvbuf, std::size_t count);
    // The call's input: `in` (count floats) plus the slot's pending residual (scaled down to
    // kMaxResidualRatio of `in`'s norm where larger), written into the slot's buffer; `in`
    // itself where nothing is pending.
    const float *input(Slot &slot, const float *in, std::size_t count);
    // Where the call's new residual of `count` floats goes, and a `padded`-float scratch to build
    // it in (reused by every call: one call at a time); nullptr, nothing kept and `entries`
    // counted as dropped, where the memory cap refuses them. May be the buffer input() returned.
    struct Target {
        float *residual = nullptr;
        float *scratch = nullptr;
    };
    Target target(Slot &slot, std::size_t count, std::size_t padded, std::uint64_t entries);
    std::size_t bytes() const { return bytes_; }
    std::size_t slots() const { return slots_.size(); }

private:
    void drop(Slot &slot);
    // Resizes `v` to `n` floats within the cap (bytes_ follows); false: refused, `v` unchanged.
    bool fit(std::vector<float> &v, std::size_t n);

    std::size_t max_bytes_;
    std::uint64_t idle_calls_;
    std::uint64_t calls_ = 0;
    std::size_t bytes_ = 0;
    std::map<std::pair<const void *, std::size_t>, Slot> slots_;
    std::vector<float> scratch_;
};

}  // namespace optireduce
