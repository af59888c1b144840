// SPDX-License-Identifier: BSD-3-Clause
// How many datagrams a stream sends to one receiver in a row: the length of one offloaded send
// (a run) in StreamSender.
//
// Every other rank sends to each receiver at once in both phases of a Transpose AllReduce, so
// runs from all of them can reach one receiver's link together: that link (a switch port, or the
// cloud's shaper in front of a virtual machine) then takes senders x run bytes at once and
// queues, or drops, what its burst allowance does not cover. Runs are sized so that all the
// senders' together carry kIncastBytes, never more than the channel's own longest run (one
// offloaded send: 44 datagrams of 1472 bytes), at least one datagram. On the emulated cloud
// (4 hosts at 1 Gbit/s, each link a token bucket of 1 ms) runs of 44 datagrams made osu_allreduce
// 8-20% slower than runs of 14-16 from 256 KiB to 32 MiB, and the kernel's time in the links'
// shapers grew with them (docs/notes/2026-12-07-runs-sized-for-receiver.md); runs of 11 cost
// more system calls than they saved. A job of two ranks has one sender per receiver and keeps
// the channel's runs, and so does a stream that fits in one: a small operation's whole phase is
// then one burst per sender, and splitting it put a loop iteration (or a lost core) between the
// halves that its deadline, a fraction of a millisecond, did not cover (a training job's 112 KB
// allreduces closed 10x as many phases at the deadline).
#pragma once

#include <algorithm>
#include <cstddef>

namespace optireduce {

inline constexpr std::size_t kIncastBytes = std::size_t{64} * 1024;

// `channel_run`: DgramEndpoint::run_datagrams; `senders`: the ranks that send to one receiver
// (the communicator's size less one); `datagram_bytes`: header and payload of one datagram;
// `stream_datagrams`: how many the stream sends in the phase.
inline std::size_t incast_run(std::size_t channel_run, std::size_t senders, std::size_t datagram_bytes,
                              std::size_t stream_datagrams) {
    if (senders <= 1 || datagram_bytes == 0 || stream_datagrams <= channel_run) return channel_run;
    const std::size_t fits = kIncastBytes / (senders * datagram_bytes);
    return std::max<std::size_t>(1, std::min(fits, channel_run));
}

}  // namespace optireduce
