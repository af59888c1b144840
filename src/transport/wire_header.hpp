// SPDX-License-Identifier: BSD-3-Clause
// The header at the front of every datagram of the bounded (FI_EP_DGRAM) channel: the one
// definition of the wire format, specified in docs/protocol.md. Encoded field by field in
// little-endian order, never by copying a struct, so the format does not depend on the
// compiler's layout or the host's byte order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace optireduce::wire {

inline constexpr std::uint32_t kMagic = 0x4744524fu;  // "ORDG" on the wire
// 2: bytes 34-35 carry shard_error; 3: kEarly, repair; 4: kWaited; 5: hole vote; 6: bytes 36-39
// carry the sender's deadline (its expected completion time before); 7: scatter repair, and the
// hole vote carries the sender's lesson of late votes; 8: the transformed payload interleaves
// blocks a 16-float line at a time (codec/block_layout.hpp), not float by float: a version 7
// peer's payload would decode to other coordinates, so it is refused rather than mixed in; 9:
// flags bits 3-4 name the payload's codec (codec/wire_codec.hpp)
inline constexpr std::uint8_t kVersion = 9;
inline constexpr std::size_t kHeaderBytes = 40;

// repair: a receiver's request to a shard's owner for all-gather chunks it is missing (payload:
// their indices, uint32 little-endian); the owner answers with ordinary all-gather datagrams.
// hole_vote: after its all-gather, a rank's list of the chunks it is missing and of the peers'
// votes it has, so that every rank fills the same holes the same way (engine/dgram/hole_votes.hpp).
// scatter_repair: a receiver's request to a sender for reduce-scatter chunks of its contribution
// it is missing (payload as for repair); the sender answers with ordinary reduce-scatter
// datagrams while its operation is open (engine/dgram/scatter_repair.hpp).
enum class Phase : std::uint8_t { reduce_scatter = 1, all_gather = 2, repair = 3, hole_vote = 4, scatter_repair = 5 };

// The requests for chunks sent again: both carry chunk indices and no flags.
constexpr bool is_repair_request(Phase p) { return p == Phase::repair || p == Phase::scatter_repair; }

enum Flags : std::uint8_t {
    kTail = 1u << 0,  // among the sender's last datagrams of this phase to this receiver
    // All-gather only: sent before the sender's reduce-scatter closed (a chunk whose
    // contributions were all in early). Receivers start the sender's phase-2 clock at its first
    // datagram without this flag: the rest of its shard comes only after its reduce-scatter.
    kEarly = 1u << 1,
    // Reduce-scatter only: the sender's previous operation on this communicator waited out the
    // straggler bound for a peer that never started. Its start here is late by its own wait, not
    // by compute skew, so receivers do not learn it as lateness (a bound learned from the waits
    // it causes grows without end: each write-off would double it).
    kWaited = 1u << 2,
    // Reduce-scatter and all-gather: bits 3-4 hold the payload's codec (0 fp32, 1 bf16, 2 int8;
    // 3 is refused). A receiver places only payloads of its own communicator's codec.
    kCodecMask = 3u << 3,
};
inline constexpr unsigned kCodecShift = 3;
constexpr std::uint8_t codec_flags(std::uint8_t codec) { return static_cast<std::uint8_t>(codec << kCodecShift); }
constexpr std::uint8_t codec_of(std::uint8_t flags) {
    return static_cast<std::uint8_t>((flags & kCodecMask) >> kCodecShift);
}

struct Header {
    std::uint8_t version = kVersion;
    Phase phase = Phase::reduce_scatter;
    std::uint8_t flags = 0;
    // The sender's own receive loss on its previous operation of this communicator, in 1/255
    // units (streams it got partially, not silent peers): how its peers learn to pace to it.
    std::uint8_t loss_hint = 0;
    std::uint64_t job_nonce = 0;    // random, chosen by rank 0 at communicator setup
    std::uint32_t comm_id = 0;      // agreed at communicator setup
    std::uint32_t seq = 0;          // eligible call number on the communicator
    std::uint32_t src_rank = 0;     // sender's rank in the communicator
    std::uint32_t chunk = 0;        // datagram index within (phase, sender -> receiver) stream
    std::uint16_t payload_len = 0;  // bytes after the header
    // All-gather only (0 in the reduce-scatter): the sender's estimate of the relative error
    // of the reduced shard it sends, ||estimate - exact|| / ||estimate||, as IEEE binary16.
    // Receivers add it into their own error estimate without any extra message.
    std::uint16_t shard_error = 0;
    // The sender's own deadline of this phase for this size (what its observations alone say):
    // its receivers take the job's deadline as the median of theirs and their peers'.
    std::uint32_t sender_deadline_us = 0;

    bool operator==(const Header &) const = default;
};

// IEEE binary16 from/to float, for shard_error: round to nearest, saturating at 65504 (also for
// NaN: an error that cannot be bounded), negative values as 0 (an error estimate is never
// negative). So a sender never puts an infinity, a NaN or a sign bit on the wire.
std::uint16_t to_half(float v);
float from_half(std::uint16_t h);

// Writes kHeaderBytes into out (which must hold at least that many bytes).
void encode(const Header &h, std::span<std::byte, kHeaderBytes> out);

enum class DecodeError : std::uint8_t {
    too_short,
    bad_magic,
    bad_version,
    bad_phase,
    bad_length,
    reserved_set,
    bad_shard_error,  // not a finite non-negative binary16, or nonzero in the reduce-scatter
};
const char *to_string(DecodeError e);

struct Decoded {
    std::optional<Header> header;
    DecodeError error = DecodeError::too_short;  // meaningful when !header
};

// Parses the header of a received datagram of `datagram.size()` bytes. Checks what the header
// alone can tell (magic, version, phase, reserved bits zero, that payload_len matches the
// datagram size, a valid shard_error); the receiver then checks nonce, communicator, rank and
// chunk bounds against its own state before any byte of payload is placed.
Decoded decode(std::span<const std::byte> datagram);

}  // namespace optireduce::wire
