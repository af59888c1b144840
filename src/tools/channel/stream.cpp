// SPDX-License-Identifier: BSD-3-Clause
// Both sides of the reference run: the same payload over one TCP connection, as a bulk
// transfer would send it (large writes, Nagle left on, the kernel's buffer autotuning), so each
// datagram channel can be judged against what the host's TCP stack does with the same bytes.
#include "measure.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace optireduce::channel_bench {
namespace {

constexpr std::size_t kWriteBytes = std::size_t{1} << 20;
// The receiver's clock starts when its first read returns, so the bytes of that read come with
// no time: a read of at most this much keeps that error below 0.1% from 256 MiB on.
constexpr std::size_t kReadBytes = std::size_t{256} << 10;

}  // namespace

Row run_stream(Control &control, const Settings &settings) {
    Row row;
    row.channel = "tcp";
    row.stream = true;
    SetupMsg setup{};
    copy_text(setup.channel, row.channel);
    ReadyMsg ready{};
    if (!control.setup(setup, ready, &row.error)) return row;
    // The data goes to the address the control link reached, on the port the server opened.
    sockaddr_in to = control.peer();
    to.sin_port = htons(ready.port);
    std::string error;
    const Fd data = connect_tcp(to, &error);
    if (data.get() < 0) {
        control.send(StartMsg{0, 0, 0});
        row.error = "client: " + error;
        return row;
    }
    const std::vector<std::byte> buffer(kWriteBytes, std::byte{0x5a});

    control.send(StartMsg{0, 0, settings.bytes});
    GoMsg go;
    control.recv(go);
    const double cpu0 = cpu_seconds();
    while (row.sent_bytes < settings.bytes) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kWriteBytes, settings.bytes - row.sent_bytes));
        if (!write_all(data.get(), buffer.data(), n)) {
            row.error = std::string("client: write: ") + std::strerror(errno);
            break;
        }
        row.sent_bytes += n;
    }
    ::shutdown(data.get(), SHUT_WR);  // the server reads to the end of the stream
    row.send_cpu_s = cpu_seconds() - cpu0;

    control.send(DoneMsg{0});
    ResultMsg result{};
    control.recv(result);
    row.received_bytes = result.received_bytes;
    row.recv_wall_s = result.wall_s;
    row.recv_cpu_s = result.cpu_s;
    return row;
}

void serve_stream(Control &control) {
    std::string error;
    ReadyMsg ready{};
    // On the address the client reached us at: that one routes back to it.
    const Fd listener = listen_tcp(control.local().sin_addr, 0, &error);
    if (listener.get() < 0) {
        copy_text(ready.text, error);
        control.send(ready);
        return;
    }
    ready.ok = true;
    ready.port = bound_port(listener.get());
    control.send(ready);
    StartMsg start{};
    control.recv(start);
    if (start.bytes == 0) return;
    const Fd data = accept_tcp(listener.get(), &error);
    if (data.get() < 0) std::fprintf(stderr, "optireduce-channel-bench: stream: %s\n", error.c_str());

    std::vector<std::byte> buffer(kReadBytes);
    ResultMsg result{};
    control.send(GoMsg{});
    const double cpu0 = cpu_seconds();
    double first = 0, last = 0;
    while (data.get() >= 0 && result.received_bytes < start.bytes) {
        const ssize_t n = ::read(data.get(), buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        last = wall_seconds();
        if (first == 0) first = last;
        result.received_bytes += static_cast<std::uint64_t>(n);
    }
    result.cpu_s = cpu_seconds() - cpu0;
    result.wall_s = last - first;
    DoneMsg done{};
    control.recv(done);
    control.send(result);
}

}  // namespace optireduce::channel_bench
