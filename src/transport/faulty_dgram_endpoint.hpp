// SPDX-License-Identifier: BSD-3-Clause
// The test-only datagram faults (OPTIREDUCE_FAULT_DROP, OPTIREDUCE_FAULT_DUPLICATE) as a datagram
// endpoint around the real one, so the network's misbehaviour sits where the network is and the
// engine above runs its normal path. The channel is wrapped only when a knob asks for a fault:
// without one, nothing between the engine and the channel changes.
//
// - Drop: each datagram the inner endpoint delivers is discarded with probability `drop` before
//   the sink sees it, counted datagrams_fault_dropped, as if the network had lost it. One draw per
//   datagram in the order the channel delivers them; poll() has one drainer at a time, so that
//   is the order the router would have seen them (it drew under its lock in arrival order).
// - Duplicate: each datagram the inner endpoint accepted, through send() or send_runs(), is
//   sent once more with probability `duplicate`, at once, as a second send() whose outcome is
//   ignored (a copy that does not leave is one the network did not make). Counts and results
//   report the originals only. Senders on several threads draw from one sequence in the order
//   their sends finish.
#pragma once

#include "transport/dgram_endpoint.hpp"
#include "transport/fault_rng.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace optireduce {

struct DgramFaults {
    double drop = 0, duplicate = 0;  // probabilities, 0..1
    std::uint64_t seed = 0;          // of this rank: the seed knob plus the world rank
    bool any() const { return drop > 0 || duplicate > 0; }
};

class FaultyDgramEndpoint final : public DgramEndpoint {
public:
    FaultyDgramEndpoint(std::unique_ptr<DgramEndpoint> inner, const DgramFaults &faults);

    std::string describe() const override;
    bool resolve(std::span<const std::byte> names, int count, std::vector<fi_addr_t> &out,
                 std::string *error) override {
        return inner_->resolve(names, count, out, error);
    }
    std::size_t max_datagram(std::span<const fi_addr_t> peers) const override { return inner_->max_datagram(peers); }
    std::size_t run_datagrams(std::size_t datagram_bytes) const override {
        return inner_->run_datagrams(datagram_bytes);
    }
    int send(fi_addr_t dest, std::span<const std::byte> header, std::span<const std::byte> payload) override;
    int send_runs(std::span<const DgramRun> runs, std::span<std::size_t> sent) override;
    // Returns what the inner endpoint returns: dropped datagrams arrived, so they count.
    int poll(const Sink &sink) override;
    void wait(std::chrono::microseconds timeout) override { inner_->wait(timeout); }
    void wake() override { inner_->wake(); }
    void wait_for_send_space(std::chrono::microseconds max) override { inner_->wait_for_send_space(max); }
    std::int64_t queued_bytes() const override { return inner_->queued_bytes(); }

private:
    bool duplicate();

    std::unique_ptr<DgramEndpoint> inner_;
    const DgramFaults faults_;
    FaultRng drop_rng_;  // only the drainer uses it: the inner endpoint lets one drain at a time
    std::mutex dup_mutex_;
    FaultRng dup_rng_;  // under dup_mutex_: any thread sends
};

// `ep` wrapped in the faults if any is asked for, else `ep` itself.
std::unique_ptr<DgramEndpoint> with_faults(std::unique_ptr<DgramEndpoint> ep, const DgramFaults &faults);

}  // namespace optireduce
