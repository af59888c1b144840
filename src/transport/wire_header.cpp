// SPDX-License-Identifier: BSD-3-Clause
#include "transport/wire_header.hpp"

#include <algorithm>
#include <cmath>

namespace optireduce::wire {
namespace {

// Byte offsets of each field (docs/protocol.md, "Header layout").
enum Offset : std::size_t {
    kOffMagic = 0,
    kOffVersion = 4,
    kOffPhase = 5,
    kOffFlags = 6,
    kOffLossHint = 7,
    kOffNonce = 8,
    kOffComm = 16,
    kOffSeq = 20,
    kOffSrc = 24,
    kOffChunk = 28,
    kOffLen = 32,
    kOffShardError = 34,
    kOffDeadline = 36,
};
static_assert(kOffDeadline + 4 == kHeaderBytes);

template <class T>
void put(std::span<std::byte, kHeaderBytes> out, std::size_t off, T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i)
        out[off + i] = static_cast<std::byte>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xffu);
}

template <class T>
T get(std::span<const std::byte> in, std::size_t off) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(in[off + i]) << (8 * i);
    return static_cast<T>(v);
}

constexpr std::uint8_t kKnownFlags = kTail | kEarly | kWaited | kCodecMask;
constexpr std::uint8_t kCodecs = 3;  // fp32, bf16, int8

}  // namespace

void encode(const Header &h, std::span<std::byte, kHeaderBytes> out) {
    put<std::uint32_t>(out, kOffMagic, kMagic);
    put<std::uint8_t>(out, kOffVersion, h.version);
    put<std::uint8_t>(out, kOffPhase, static_cast<std::uint8_t>(h.phase));
    put<std::uint8_t>(out, kOffFlags, h.flags);
    put<std::uint8_t>(out, kOffLossHint, h.loss_hint);
    put<std::uint64_t>(out, kOffNonce, h.job_nonce);
    put<std::uint32_t>(out, kOffComm, h.comm_id);
    put<std::uint32_t>(out, kOffSeq, h.seq);
    put<std::uint32_t>(out, kOffSrc, h.src_rank);
    put<std::uint32_t>(out, kOffChunk, h.chunk);
    put<std::uint16_t>(out, kOffLen, h.payload_len);
    put<std::uint16_t>(out, kOffShardError, h.shard_error);
    put<std::uint32_t>(out, kOffDeadline, h.sender_deadline_us);
}

// binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Written out rather than using F16C,
// which not every x86 CPU has and other architectures spell differently.
std::uint16_t to_half(float v) {
    if (std::isnan(v) || v >= 65504.0f) return 0x7bff;
    if (!(v > 0)) return 0;
    int e = 0;
    const float m = std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
    if (e > -14) {                      // normal: v = (1 + f/1024) * 2^(e-1)
        auto f = static_cast<std::uint32_t>(std::lround((m * 2.0f - 1.0f) * 1024.0f));
        int be = e - 1 + 15;
        if (f == 1024) {  // rounded up into the next binade
            f = 0;
            ++be;
        }
        if (be >= 31) return 0x7bff;
        return static_cast<std::uint16_t>(be << 10 | f);
    }
    // Subnormal: v = f/1024 * 2^-14; f = 1024 rounds up to 0x400, the smallest normal.
    return static_cast<std::uint16_t>(std::lround(std::ldexp(v, 24)));
}

float from_half(std::uint16_t h) {
    const int e = (h >> 10) & 0x1f, f = h & 0x3ff;
    float v;
    if (e == 0)
        v = std::ldexp(static_cast<float>(f), -24);
    else if (e == 31)
        v = f ? NAN : INFINITY;
    else
        v = std::ldexp(1.0f + static_cast<float>(f) / 1024.0f, e - 15);
    return (h & 0x8000) ? -v : v;
}

const char *to_string(DecodeError e) {
    switch (e) {
        case DecodeError::too_short: return "shorter than the header";
        case DecodeError::bad_magic: return "bad magic";
        case DecodeError::bad_version: return "unsupported version";
        case DecodeError::bad_phase: return "unknown phase";
        case DecodeError::bad_length: return "payload length does not match the datagram";
        case DecodeError::reserved_set: return "reserved bits set";
        case DecodeError::bad_shard_error: return "shard error not a finite non-negative value of the all-gather";
    }
    return "?";
}

Decoded decode(std::span<const std::byte> d) {
    if (d.size() < kHeaderBytes) return {std::nullopt, DecodeError::too_short};
    if (get<std::uint32_t>(d, kOffMagic) != kMagic) return {std::nullopt, DecodeError::bad_magic};
    Header h;
    h.version = get<std::uint8_t>(d, kOffVersion);
    if (h.version != kVersion) return {std::nullopt, DecodeError::bad_version};
    const auto phase = get<std::uint8_t>(d, kOffPhase);
    if (phase < static_cast<std::uint8_t>(Phase::reduce_scatter) ||
        phase > static_cast<std::uint8_t>(Phase::scatter_repair))
        return {std::nullopt, DecodeError::bad_phase};
    h.phase = static_cast<Phase>(phase);
    h.flags = get<std::uint8_t>(d, kOffFlags);
    if ((h.flags & ~kKnownFlags) != 0 || (h.phase != Phase::all_gather && (h.flags & kEarly) != 0) ||
        (h.phase != Phase::reduce_scatter && (h.flags & kWaited) != 0) ||
        ((is_repair_request(h.phase) || h.phase == Phase::hole_vote) && h.flags != 0) || codec_of(h.flags) >= kCodecs)
        return {std::nullopt, DecodeError::reserved_set};
    h.loss_hint = get<std::uint8_t>(d, kOffLossHint);
    h.job_nonce = get<std::uint64_t>(d, kOffNonce);
    h.comm_id = get<std::uint32_t>(d, kOffComm);
    h.seq = get<std::uint32_t>(d, kOffSeq);
    h.src_rank = get<std::uint32_t>(d, kOffSrc);
    h.chunk = get<std::uint32_t>(d, kOffChunk);
    h.payload_len = get<std::uint16_t>(d, kOffLen);
    h.shard_error = get<std::uint16_t>(d, kOffShardError);
    h.sender_deadline_us = get<std::uint32_t>(d, kOffDeadline);
    if (static_cast<std::size_t>(h.payload_len) != d.size() - kHeaderBytes)
        return {std::nullopt, DecodeError::bad_length};
    // A repair request lists at least one chunk index, whole.
    if (is_repair_request(h.phase) && (h.payload_len == 0 || h.payload_len % sizeof(std::uint32_t) != 0))
        return {std::nullopt, DecodeError::bad_length};
    if (h.phase == Phase::hole_vote && h.payload_len == 0) return {std::nullopt, DecodeError::bad_length};
    // 0x7c00 and above: infinity, NaN or a sign bit, none of which to_half writes; a NaN taken in
    // would make every later error estimate NaN.
    if (h.shard_error >= 0x7c00 || (h.phase != Phase::all_gather && h.shard_error != 0))
        return {std::nullopt, DecodeError::bad_shard_error};
    return {h, DecodeError::too_short};
}

}  // namespace optireduce::wire
