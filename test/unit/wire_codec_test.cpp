// SPDX-License-Identifier: BSD-3-Clause
// The wire codec's dispatch (codec/wire_codec.hpp): sizes on the wire, entries per payload in
// whole cache lines, and each codec's chunk functions behind encode_chunk / decode_chunk.
#include "codec/wire_codec.hpp"

#include "codec/bf16_codec.hpp"
#include "codec/int8_codec.hpp"
#include "guarded_bytes.hpp"
#include "test_vectors.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace optireduce {
namespace {

constexpr Codec kCodecs[] = {Codec::fp32, Codec::bf16, Codec::int8};

TEST(WireCodec, Names) {
    EXPECT_EQ(std::string(to_string(Codec::fp32)), "fp32");
    EXPECT_EQ(std::string(to_string(Codec::bf16)), "bf16");
    EXPECT_EQ(std::string(to_string(Codec::int8)), "int8");
}

TEST(WireCodec, CodedBytes) {
    EXPECT_EQ(coded_bytes(Codec::fp32, 0), 0u);
    EXPECT_EQ(coded_bytes(Codec::fp32, 2240), 8960u);
    EXPECT_EQ(coded_bytes(Codec::bf16, 4480), 8960u);
    EXPECT_EQ(coded_bytes(Codec::int8, 0), 4u);
    EXPECT_EQ(coded_bytes(Codec::int8, 8944), 8948u);
}

TEST(WireCodec, EntriesPerPayloadAreTheMostThatFit) {
    EXPECT_EQ(entries_per_payload(Codec::fp32, 8960), 2240u);
    EXPECT_EQ(entries_per_payload(Codec::bf16, 8960), 4480u);
    EXPECT_EQ(entries_per_payload(Codec::int8, 8960), 8956u);
    EXPECT_EQ(entries_per_payload(Codec::fp32, 8932), 2233u);  // a 9000-byte MTU's payload
    EXPECT_EQ(entries_per_payload(Codec::int8, 4), 0u);
    EXPECT_EQ(entries_per_payload(Codec::int8, 5), 1u);
    EXPECT_EQ(entries_per_payload(Codec::int8, 3), 0u);
    for (const Codec c : kCodecs)
        for (std::size_t p = 0; p < 3000; ++p) {
            const std::size_t n = entries_per_payload(c, p);
            if (n > 0) {
                ASSERT_LE(coded_bytes(c, n), p);
            }
            ASSERT_GT(coded_bytes(c, n + 1), p) << to_string(c) << " " << p;
        }
}

TEST(WireCodec, ChunksGoThroughEachCodecsFunctions) {
    const auto x = test::random_vector(1000, 2);
    std::vector<std::byte> got(4 * x.size()), want(4 * x.size());
    std::vector<float> y(x.size()), want_y(x.size());
    encode_chunk(Codec::fp32, x.data(), x.size(), got.data(), 5);
    EXPECT_EQ(std::memcmp(got.data(), x.data(), 4 * x.size()), 0);
    decode_chunk(Codec::fp32, got.data(), x.size(), y.data());
    EXPECT_EQ(y, x);

    encode_chunk(Codec::bf16, x.data(), x.size(), got.data(), 5);
    bf16_codec::encode(x.data(), x.size(), want.data());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), coded_bytes(Codec::bf16, x.size())), 0);
    decode_chunk(Codec::bf16, got.data(), x.size(), y.data());
    bf16_codec::decode(want.data(), x.size(), want_y.data());
    EXPECT_EQ(y, want_y);

    encode_chunk(Codec::int8, x.data(), x.size(), got.data(), 5);
    int8_codec::encode(x.data(), x.size(), want.data(), 5);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), coded_bytes(Codec::int8, x.size())), 0);
    decode_chunk(Codec::int8, got.data(), x.size(), y.data());
    int8_codec::decode(want.data(), x.size(), want_y.data());
    EXPECT_EQ(y, want_y);
}

TEST(WireCodec, EveryCodecStaysWithinItsCodedBytes) {
    for (const Codec c : kCodecs)
        for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{2240}}) {
            const auto x = test::random_vector(n, 4);
            test::GuardedBytes in(4 * n), coded(coded_bytes(c, n)), out(4 * n);
            in.fill(x.data());
            encode_chunk(c, in.floats(), n, coded.data(), 1);
            decode_chunk(c, coded.data(), n, out.floats());
            for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(out.floats()[i], x[i], 0.05) << to_string(c);
        }
}

}  // namespace
}  // namespace optireduce
