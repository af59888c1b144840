// A datagram channel that runs a script instead of a network, for the engine's sending, fault and
// hole-vote tests: send_runs takes the first `accept` datagrams of each run (a full queue
// takes fewer) and records every datagram sent; poll hands over `arrivals` datagrams.
#pragma once

#include "transport/dgram_endpoint.hpp"

#include <algorithm>
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
        sent.push_back({dest, std::move(d)});
        return 0;
    }
    int send_runs(std::span<const DgramRun> runs, std::span<std::size_t> out) override {
        for (std::size_t r = 0; r < runs.size(); ++r) {
            const DgramRun &run = runs[r];
            out[r] = std::min(run.count, accept);
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

    struct Sent {
        fi_addr_t dest;
        std::vector<std::byte> bytes;
    };
    std::vector<Sent> sent;
    std::size_t accept = 1000;
    std::size_t arrivals = 0;
};

}  // namespace optireduce::test
