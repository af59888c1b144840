// SPDX-License-Identifier: BSD-3-Clause
// The datagram header: round trip, exact byte layout (docs/protocol.md), and rejection of every
// malformed input the receiver may see from the network.
#include "transport/wire_header.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include <random>
#include <vector>

using namespace optireduce::wire;

namespace {

Header sample() {
    Header h;
    h.phase = Phase::all_gather;
    h.flags = kTail;
    h.loss_hint = 0x2a;
    h.job_nonce = 0x1122334455667788ull;
    h.comm_id = 0x01020304u;
    h.seq = 0xa0b0c0d0u;
    h.src_rank = 7;
    h.chunk = 0x00abcdefu;
    h.payload_len = 12;
    h.sender_deadline_us = 250000;
    return h;
}

std::vector<std::byte> datagram(const Header &h) {
    std::vector<std::byte> d(kHeaderBytes + h.payload_len, std::byte{0x5a});
    encode(h, std::span<std::byte, kHeaderBytes>(d.data(), kHeaderBytes));
    return d;
}

}  // namespace

TEST(WireHeader, RoundTrips) {
    const Header h = sample();
    const auto d = datagram(h);
    const Decoded got = decode(d);
    ASSERT_TRUE(got.header.has_value()) << to_string(got.error);
    EXPECT_EQ(*got.header, h);
}

TEST(WireHeader, LayoutIsLittleEndianAtDocumentedOffsets) {
    const auto d = datagram(sample());
    auto byte = [&](std::size_t i) { return std::to_integer<unsigned>(d[i]); };
    EXPECT_EQ(byte(0), 'O');
    EXPECT_EQ(byte(1), 'R');
    EXPECT_EQ(byte(2), 'D');
    EXPECT_EQ(byte(3), 'G');
    EXPECT_EQ(byte(4), 9u);     // version
    EXPECT_EQ(byte(5), 2u);     // phase all-gather
    EXPECT_EQ(byte(6), 1u);     // tail flag
    EXPECT_EQ(byte(7), 0x2au);  // loss hint
    EXPECT_EQ(byte(8), 0x88u);  // nonce, least significant byte first
    EXPECT_EQ(byte(15), 0x11u);
    EXPECT_EQ(byte(16), 0x04u);  // comm id
    EXPECT_EQ(byte(20), 0xd0u);  // seq
    EXPECT_EQ(byte(24), 7u);     // src rank
    EXPECT_EQ(byte(28), 0xefu);  // chunk
    EXPECT_EQ(byte(32), 12u);    // payload length
    EXPECT_EQ(byte(36), 250000u & 0xffu);
}

TEST(WireHeader, RejectsEachMalformation) {
    const auto good = datagram(sample());
    auto expect_error = [](std::vector<std::byte> d, DecodeError e) {
        const Decoded got = decode(d);
        EXPECT_FALSE(got.header.has_value());
        EXPECT_EQ(got.error, e) << to_string(got.error);
    };
    expect_error(std::vector<std::byte>(good.begin(), good.begin() + kHeaderBytes - 1), DecodeError::too_short);
    auto d = good;
    d[0] = std::byte{0};
    expect_error(d, DecodeError::bad_magic);
    d = good;
    d[4] = std::byte{2};
    expect_error(d, DecodeError::bad_version);
    d = good;
    d[5] = std::byte{6};
    expect_error(d, DecodeError::bad_phase);
    d = good;
    d[6] = std::byte{0x80};
    expect_error(d, DecodeError::reserved_set);
    // kEarly is an all-gather flag: in the reduce-scatter it is refused.
    Header rs = sample();
    rs.phase = Phase::reduce_scatter;
    rs.shard_error = 0;
    rs.flags = kEarly;
    expect_error(datagram(rs), DecodeError::reserved_set);
    rs.phase = Phase::all_gather;
    EXPECT_TRUE(decode(datagram(rs)).header.has_value());
    // kWaited is a reduce-scatter flag: refused in the all-gather, kept in the reduce-scatter.
    rs.flags = kWaited;
    expect_error(datagram(rs), DecodeError::reserved_set);
    rs.phase = Phase::reduce_scatter;
    rs.flags = kWaited | kTail;
    ASSERT_TRUE(decode(datagram(rs)).header.has_value());
    EXPECT_EQ(decode(datagram(rs)).header->flags, kWaited | kTail);
    // Bits 3-4 name the payload's codec: 0-2 kept, 3 refused.
    for (std::uint8_t codec = 0; codec < 3; ++codec) {
        rs.flags = codec_flags(codec);
        ASSERT_TRUE(decode(datagram(rs)).header.has_value());
        EXPECT_EQ(codec_of(decode(datagram(rs)).header->flags), codec);
    }
    rs.flags = codec_flags(3);
    expect_error(datagram(rs), DecodeError::reserved_set);
    // shard_error (bytes 34-35, little-endian): infinity, NaN and a sign bit are refused, and so
    // is any nonzero value in the reduce-scatter; the largest finite value passes.
    for (const std::uint16_t bad : {0x7c00, 0x7e00, 0x8000, 0xbc00}) {
        d = good;
        d[34] = std::byte(bad & 0xff);
        d[35] = std::byte(bad >> 8);
        expect_error(d, DecodeError::bad_shard_error);
    }
    d = good;
    d[34] = std::byte{0xff};
    d[35] = std::byte{0x7b};
    ASSERT_TRUE(decode(d).header.has_value());
    EXPECT_EQ(decode(d).header->shard_error, 0x7bff);
    d[5] = std::byte{1};  // the same value in a reduce-scatter datagram
    expect_error(d, DecodeError::bad_shard_error);
    d = good;
    d[4] = std::byte{1};  // version 1 had no shard_error field
    expect_error(d, DecodeError::bad_version);
    d = good;
    d.push_back(std::byte{0});  // one byte more than payload_len says
    expect_error(d, DecodeError::bad_length);
}

// Random bytes never crash the parser, and whatever it accepts re-encodes to the same bytes.
// A repair request (all-gather or reduce-scatter): whole uint32 chunk indices, at least one; no
// flags, no shard error.
TEST(WireHeader, RepairRequestsCarryWholeIndicesAndNothingElse) {
    for (const Phase phase : {Phase::repair, Phase::scatter_repair}) {
        SCOPED_TRACE(static_cast<int>(phase));
        Header h = sample();
        h.phase = phase;
        h.flags = 0;
        h.shard_error = 0;
        h.payload_len = 8;
        auto d = datagram(h);
        ASSERT_TRUE(decode(d).header.has_value());
        EXPECT_EQ(decode(d).header->phase, phase);
        for (const std::uint16_t len : {0, 6}) {
            h.payload_len = len;
            EXPECT_EQ(decode(datagram(h)).error, DecodeError::bad_length) << len;
        }
        h.payload_len = 8;
        h.flags = kTail;
        EXPECT_EQ(decode(datagram(h)).error, DecodeError::reserved_set);
        h.flags = 0;
        h.shard_error = 0x3c00;
        EXPECT_EQ(decode(datagram(h)).error, DecodeError::bad_shard_error);
    }
}

// A hole vote: a payload (the vote), no flags, no shard error.
TEST(WireHeader, HoleVotesCarryAPayloadAndNothingElse) {
    Header h = sample();
    h.phase = Phase::hole_vote;
    h.flags = 0;
    h.shard_error = 0;
    h.payload_len = 3;
    EXPECT_TRUE(decode(datagram(h)).header.has_value());
    h.payload_len = 0;
    EXPECT_EQ(decode(datagram(h)).error, DecodeError::bad_length);
    h.payload_len = 3;
    h.flags = kTail;
    EXPECT_EQ(decode(datagram(h)).error, DecodeError::reserved_set);
    h.flags = 0;
    h.shard_error = 0x3c00;
    EXPECT_EQ(decode(datagram(h)).error, DecodeError::bad_shard_error);
}

TEST(WireHeader, RandomInputIsRejectedOrCanonical) {
    std::mt19937 rng(12345);
    int accepted = 0;
    for (int iter = 0; iter < 20000; ++iter) {
        std::vector<std::byte> d(rng() % 64);
        for (auto &b : d) b = static_cast<std::byte>(rng());
        if (iter % 2 && d.size() >= kHeaderBytes) {  // half start from a valid prefix
            auto base = datagram(sample());
            std::copy(base.begin(), base.begin() + 8, d.begin());
            d[5] = std::byte{1};
            d[6] = std::byte{0};
            d[34] = d[35] = std::byte{0};
            d[32] = static_cast<std::byte>(d.size() - kHeaderBytes);
            d[33] = std::byte{0};
        }
        const Decoded got = decode(d);
        if (!got.header) continue;
        ++accepted;
        std::vector<std::byte> again(kHeaderBytes);
        encode(*got.header, std::span<std::byte, kHeaderBytes>(again.data(), kHeaderBytes));
        EXPECT_TRUE(std::equal(again.begin(), again.end(), d.begin()));
    }
    EXPECT_GT(accepted, 0);
}

// shard_error travels as binary16: monotone, within half an ulp (2^-11 relative) over its range.
TEST(WireHeader, HalfPrecisionErrorFieldRoundTrips) {
    EXPECT_EQ(to_half(0.0f), 0);
    EXPECT_EQ(to_half(-1.0f), 0);
    EXPECT_EQ(to_half(NAN), 0x7bff);  // an error that cannot be bounded: the largest
    EXPECT_EQ(to_half(1.0f), 0x3c00);
    EXPECT_EQ(to_half(1e9f), 0x7bff);
    EXPECT_FLOAT_EQ(from_half(0x7bff), 65504.0f);
    std::uint16_t prev = 0;
    for (double v = 1e-7; v < 6e4; v *= 1.01) {
        const std::uint16_t h = to_half(static_cast<float>(v));
        EXPECT_GE(h, prev) << v;
        prev = h;
        const double tol = v >= 6.2e-5 ? v * std::ldexp(1.0, -11) * 1.0001 : std::ldexp(1.0, -25);
        EXPECT_NEAR(from_half(h), v, tol) << v;
    }
}
