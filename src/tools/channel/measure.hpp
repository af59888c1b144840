// SPDX-License-Identifier: BSD-3-Clause
// What one channel's run is and what it yields, shared by both roles: the channels the benchmark
// knows, the settings the client chooses, one row of results, and the two sides of a run of a
// datagram channel (dgram.cpp) and of the TCP stream it is compared with (stream.cpp).
#pragma once

#include "control.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace optireduce::channel_bench {

struct Channel {
    const char *name;
    const char *provider;  // for open_dgram_endpoint; nullptr: the TCP stream
    bool gso, gro;         // the kernel channel's offloads (DgramOptions); others ignore them
};

// In the order of the table: the kernel channel with each offload setting, libfabric's udp
// provider, and a TCP stream as the reference every datagram channel is judged against.
inline constexpr Channel kChannels[] = {
    {"kernel", "kernel", true, true},      {"kernel-gso", "kernel", true, false},
    {"kernel-gro", "kernel", false, true}, {"kernel-off", "kernel", false, false},
    {"udp", "udp", false, false},          {"tcp", nullptr, false, false},
};

// nullptr for a name that is none of them.
const Channel *find_channel(std::string_view name);

struct Settings {
    std::uint64_t bytes = std::uint64_t{1} << 30;  // payload per channel
    std::size_t mtu = 0;                           // the kernel channel's cap; 0: the path MTU
};

// One channel's results. Throughput and loss count payload bytes only, not our 40-byte headers.
struct Row {
    std::string channel;
    std::string error;  // not empty: the channel did not run, and why
    std::string note;   // an offload that was asked for but is not in use, and why
    bool stream = false;
    std::size_t datagram = 0;      // bytes per datagram, header included (0: the stream)
    std::uint64_t sent = 0;        // datagrams the client handed to the channel
    std::uint64_t sent_bytes = 0;  // payload in them (the stream: bytes written)
    std::uint64_t received = 0;    // distinct datagrams that arrived
    std::uint64_t received_bytes = 0;
    std::uint64_t coalesced = 0;  // of them, arrived several to one receive (GRO)
    double recv_wall_s = 0;       // receiver: first to last arrival
    double send_cpu_s = 0, recv_cpu_s = 0;
};

// CPU time of this process (user + system, getrusage) and CLOCK_MONOTONIC, in seconds.
double cpu_seconds();
double wall_seconds();

// Client side: runs `channel` against the server at the other end of `control`.
Row run_dgram(Control &control, const Channel &channel, const Settings &settings);
Row run_stream(Control &control, const Settings &settings);
// Server side, once the client's SetupMsg for the channel has arrived.
void serve_dgram(Control &control, const Channel &channel, const SetupMsg &setup);
void serve_stream(Control &control);

}  // namespace optireduce::channel_bench
