// SPDX-License-Identifier: BSD-3-Clause
// A datagram channel that runs a script instead of a network, for the engine's sending, fault and
// hole-vote tests: send_runs takes the first `accept` datagrams of each run (a full queue
// takes fewer; `room_per_call` caps a whole call) and records every datagram sent; poll hands
// over `arrivals` datagrams; each sent datagram records which send_runs call handed it over.
// With `drain_rate` set, a link behind it drains what was sent at that many bytes per second
// (real time), send_runs takes no more than `capacity` bytes queued, and queued_bytes reports
// them.
#pragma once

#include "transport/dgram_endpoint.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace optireduce::test {

// poll's datagrams are one byte each, holding its index.
class ScriptedEndpoint final : public DgramEndpoint {
public:
    ScriptedEndpoint() : DgramEndpoint("scripted") {}
    std::string describe() const override { return "scripted"; }
    bool resolve(std::span<const std::byte>, int, std::vector<fi_addr_t> &, std::string *) override { return true; }
    std::size_t max_datagram(std::span<const fi_addr_t>) const override { return 9000; }
    std::size_t run_datagrams(std::size_t) const override { return 16; }
    int send(fi_addr_t dest, std::span<const std::byte> header, std::span<const std::byte> payload) override {
        std::vector<std::byte> d(header.begin(), header.end());
        d.insert(d.end(), payload.begin(), payload.end());
        sent.push_back({dest, std::move(d), calls});
        return 0;
    }
    int send_runs(std::span<const DgramRun> runs, std::span<std::size_t> out) override {
        ++calls;
        drain_link();
        std::size_t call_room = room_per_call;
        for (std::size_t r = 0; r < runs.size(); ++r) {
            const DgramRun &run = runs[r];
            out[r] = std::min(run.count, accept);
            if (room_per_call > 0) {
                out[r] = std::min(out[r], call_room);
                call_room -= out[r];
            }
            if (drain_rate > 0) {
                const std::size_t bytes = run.header_bytes + run.segment;
                const double room = static_cast<double>(capacity) - queued_;
                out[r] = std::min(out[r], room > 0 ? static_cast<std::size_t>(room) / bytes : 0);
                queued_ += static_cast<double>(out[r] * bytes);
            }
            for (std::size_t i = 0; i < out[r]; ++i) {
                const std::size_t at = i * run.segment;
                send(run.dest, run.headers.subspan(i * run.header_bytes, run.header_bytes),
                     run.payload.subspan(at, std::min(run.segment, run.payload.size() - at)));
            }
        }
        return 0;
    }
    int poll(const Sink &sink) override {
        for (std::size_t i = 0; i < arrivals; ++i) {
            const auto b = static_cast<std::byte>(i);
            sink(std::span<const std::byte>(&b, 1), 7);
        }
        return static_cast<int>(arrivals);
    }
    void wait(std::chrono::microseconds) override {}
    void wake() override {}
    std::int64_t queued_bytes() const override {
        if (drain_rate <= 0) return -1;
        drain_link();
        return static_cast<std::int64_t>(queued_);
    }

    struct Sent {
        fi_addr_t dest;
        std::vector<std::byte> bytes;
        std::size_t call;  // the send_runs call that handed it over (a direct send: calls so far)
    };
    std::vector<Sent> sent;
    std::size_t calls = 0;  // send_runs calls so far
    std::size_t accept = 1000;
    std::size_t arrivals = 0;
    // > 0: each send_runs takes at most this many datagrams in all, in the order of its runs (a
    // queue that fills part-way through a round, as sendmmsg stops at the first that fails).
    std::size_t room_per_call = 0;
    double drain_rate = 0;  // bytes/s; 0: no link behind (queued_bytes unknown)
    std::size_t capacity = 0;

private:
    void drain_link() const {
        const auto now = std::chrono::steady_clock::now();
        if (drained_at_ != std::chrono::steady_clock::time_point{})
            queued_ = std::max(0.0, queued_ - drain_rate * std::chrono::duration<double>(now - drained_at_).count());
        drained_at_ = now;
    }
    mutable double queued_ = 0;
    mutable std::chrono::steady_clock::time_point drained_at_{};
};

}  // namespace optireduce::test
