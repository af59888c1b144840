// SPDX-License-Identifier: BSD-3-Clause
// Both sides of one datagram channel's run. The client sends the payload as the engine would:
// datagrams of one size, each a wire header (chunk = its index) and a slice of the payload, in
// runs of the channel's run_datagrams() through send_runs(). The server counts the distinct
// indices that arrive, so loss is exact whatever the order.
#include "measure.hpp"

#include "transport/udp/udp_socket_endpoint.hpp"
#include "transport/wire_header.hpp"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

namespace optireduce::channel_bench {
namespace {

// After the client's done message, how long the server waits for stragglers before it counts
// the rest as lost.
constexpr double kQuietSeconds = 0.2;
// A full socket or send queue empties at the link's rate: sleeping this long between tries
// loses no throughput, and keeps the wait out of the sender's CPU cost.
constexpr auto kFullPause = std::chrono::microseconds(20);

const UdpSocketEndpoint *as_kernel(const DgramEndpoint &ep) { return dynamic_cast<const UdpSocketEndpoint *>(&ep); }

// Writes the headers of datagrams first..first+k-1 of a run of `run_bytes` payload bytes.
void encode_headers(std::span<std::byte> headers, std::uint64_t first, std::size_t k, std::size_t segment,
                    std::uint64_t run_bytes) {
    for (std::size_t j = 0; j < k; ++j) {
        wire::Header h;
        h.chunk = static_cast<std::uint32_t>(first + j);
        h.payload_len = static_cast<std::uint16_t>(std::min<std::uint64_t>(segment, run_bytes - j * segment));
        wire::encode(
            h, std::span<std::byte, wire::kHeaderBytes>(headers.data() + j * wire::kHeaderBytes, wire::kHeaderBytes));
    }
}

// Hands one run of k datagrams to the channel, waiting while it is full; counts them into
// row.sent. False, with row.error, when the channel fails.
bool send_run(DgramEndpoint &ep, const DgramRun &run, Row &row) {
    const auto discard = [](std::span<const std::byte>, fi_addr_t) {};
    for (std::size_t done = 0; done < run.count;) {
        const DgramRun rest{run.dest,           run.headers.subspan(done * wire::kHeaderBytes),
                            wire::kHeaderBytes, run.payload.subspan(done * run.segment),
                            run.segment,        run.count - done};
        std::size_t sent = 0;
        if (const int rc = ep.send_runs(std::span(&rest, 1), std::span(&sent, 1)); rc < 0) {
            row.error = "client: send: " + std::string(fi_strerror(-rc));
            return false;
        }
        done += sent;
        row.sent += sent;
        if (sent == 0) {
            // Full: libfabric providers free their send buffers only as completions are read.
            ep.poll(discard);
            std::this_thread::sleep_for(kFullPause);
        }
    }
    return true;
}

// Sends `bytes` as `count` datagrams of row.datagram bytes (the last one short), in runs of the
// channel's run_datagrams().
void send_all(DgramEndpoint &ep, fi_addr_t dest, std::uint64_t count, std::uint64_t bytes, Row &row) {
    const std::size_t segment = row.datagram - wire::kHeaderBytes;
    // One run's headers and payload, reused: the payload's content does not matter, and a buffer
    // that stays in cache measures the channel, not this host's memory.
    const std::size_t per_run = ep.run_datagrams(row.datagram);
    std::vector<std::byte> headers(per_run * wire::kHeaderBytes);
    std::vector<std::byte> payload(per_run * segment);
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i % 251);
    for (std::uint64_t next = 0; next < count;) {
        const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(per_run, count - next));
        const std::uint64_t run_bytes = std::min<std::uint64_t>(k * segment, bytes - next * segment);
        encode_headers(headers, next, k, segment, run_bytes);
        const DgramRun run{dest,
                           headers,
                           wire::kHeaderBytes,
                           std::span<const std::byte>(payload.data(), static_cast<std::size_t>(run_bytes)),
                           segment,
                           k};
        if (!send_run(ep, run, row)) return;
        next += k;
    }
}

}  // namespace

Row run_dgram(Control &control, const Channel &channel, const Settings &settings) {
    Row row;
    row.channel = channel.name;
    std::string error;
    const auto ep =
        open_dgram_endpoint(channel.provider, DgramOptions{"", settings.mtu, channel.gso, channel.gro}, &error);
    if (!ep) {
        row.error = "client: " + error;
        return row;
    }
    SetupMsg setup{};
    copy_text(setup.channel, channel.name);
    setup.mtu = settings.mtu;
    setup.name = ep->name();
    ReadyMsg ready{};
    if (!control.setup(setup, ready, &row.error)) return row;
    // From here on the server waits for a StartMsg; a count of 0 tells it we cannot go on.
    const auto cancel = [&](std::string why) {
        control.send(StartMsg{0, 0, 0});
        row.error = std::move(why);
        return row;
    };
    std::vector<fi_addr_t> peer;
    if (!ep->resolve(ready.name, 1, peer, &error)) return cancel("client: " + error);
    const fi_addr_t dest = peer[0];

    row.datagram = std::min<std::size_t>(ep->max_datagram(peer), ready.max_datagram);
    if (row.datagram <= wire::kHeaderBytes)
        return cancel("datagrams of " + std::to_string(row.datagram) + " bytes hold no payload");
    const std::size_t segment = row.datagram - wire::kHeaderBytes;
    const std::uint64_t count = (settings.bytes + segment - 1) / segment;
    if (count > std::numeric_limits<std::uint32_t>::max())
        return cancel("more datagrams than a 32-bit chunk index counts: send fewer bytes");
    if (as_kernel(*ep) && channel.gro && !ready.gro) row.note = std::string("GRO ") + ready.text;

    control.send(StartMsg{row.datagram, count, settings.bytes});
    GoMsg go;
    control.recv(go);
    const double cpu0 = cpu_seconds();
    send_all(*ep, dest, count, settings.bytes, row);
    row.send_cpu_s = cpu_seconds() - cpu0;
    row.sent_bytes = std::min<std::uint64_t>(row.sent * segment, settings.bytes);  // only the last is short
    if (const UdpSocketEndpoint *k = as_kernel(*ep); k && channel.gso && !k->gso())
        row.note += (row.note.empty() ? "" : "; ") + std::string("GSO ") + k->gso_note();

    control.send(DoneMsg{row.sent});
    ResultMsg result{};
    control.recv(result);
    row.received = result.received;
    row.received_bytes = result.received_bytes;
    row.coalesced = result.coalesced;
    row.recv_wall_s = result.wall_s;
    row.recv_cpu_s = result.cpu_s;
    return row;
}

void serve_dgram(Control &control, const Channel &channel, const SetupMsg &setup) {
    std::string error;
    ReadyMsg ready{};
    const auto ep =
        open_dgram_endpoint(channel.provider, DgramOptions{"", setup.mtu, channel.gso, channel.gro}, &error);
    std::vector<fi_addr_t> peer;
    if (!ep || !ep->resolve(setup.name, 1, peer, &error)) {
        copy_text(ready.text, error);
        control.send(ready);
        return;
    }
    ready.ok = true;
    ready.max_datagram = ep->max_datagram(peer);
    ready.name = ep->name();
    const UdpSocketEndpoint *kernel = as_kernel(*ep);
    if (kernel) {
        ready.gro = kernel->gro();
        copy_text(ready.text, kernel->gro_note());
    }
    control.send(ready);
    StartMsg start{};
    control.recv(start);
    if (start.count == 0) return;

    std::vector<bool> seen(start.count);
    ResultMsg result{};
    double first = 0, last = 0, done_at = 0;
    const auto sink = [&](std::span<const std::byte> datagram, fi_addr_t) {
        // One poll() may drain thousands of datagrams, so the clock starts at the first one
        // itself; it stops when the poll() that handled the last one returns.
        if (first == 0) first = wall_seconds();
        const wire::Decoded d = wire::decode(datagram);
        if (!d.header || d.header->chunk >= start.count || seen[d.header->chunk]) return;
        seen[d.header->chunk] = true;
        ++result.received;
        result.received_bytes += d.header->payload_len;
    };
    control.send(GoMsg{});
    const double cpu0 = cpu_seconds();
    bool done = false;
    DoneMsg done_msg{};
    while (result.received < start.count) {
        if (ep->poll(sink) > 0) {
            last = wall_seconds();
            continue;
        }
        if (!done && control.readable()) {
            control.recv(done_msg);
            done = true;
            done_at = wall_seconds();
        }
        if (done && wall_seconds() - std::max(done_at, last) >= kQuietSeconds) break;
        ep->wait(std::chrono::milliseconds(10));
    }
    result.cpu_s = cpu_seconds() - cpu0;
    result.wall_s = last - first;
    if (kernel) result.coalesced = kernel->coalesced();
    if (!done) control.recv(done_msg);  // everything arrived before the client said so
    control.send(result);
}

}  // namespace optireduce::channel_bench
