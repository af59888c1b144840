// SPDX-License-Identifier: BSD-3-Clause
// The owner's reduction: the sum in source order, bit for bit the same on every instruction set
// and with dst aliasing the first source, at lengths that leave every vector path a remainder.
#include "codec/reduce.hpp"
#include "test_vectors.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace optireduce {
namespace {

TEST(Reduce, SumsInSourceOrderOnEveryInstructionSet) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{7}, std::size_t{33}, std::size_t{1003}}) {
        std::vector<std::vector<float>> v;
        for (unsigned k = 0; k < 5; ++k) v.push_back(test::random_vector(n, 20 + k));
        const float *srcs[] = {v[0].data(), v[1].data(), v[2].data(), v[3].data(), v[4].data()};
        // Bytes compared only where there are any: an empty vector's data() may be null, which
        // memcmp must not get.
        const auto same = [n](const std::vector<float> &a, const std::vector<float> &b) {
            return n == 0 || std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0;
        };
        std::vector<float> want(n);
        for (std::size_t i = 0; i < n; ++i) want[i] = (((v[0][i] + v[1][i]) + v[2][i]) + v[3][i]) + v[4][i];
        for (const Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
            if (!isa_supported(isa)) {
                std::printf("%s: not on this CPU, not compared\n", to_string(isa));
                continue;
            }
            std::vector<float> got(n, -1.0f);
            sum_in_order(srcs, got.data(), n, isa);
            EXPECT_TRUE(same(got, want)) << to_string(isa) << " n=" << n;
            // In place: dst is the first source.
            std::vector<float> first = v[0];
            const float *aliased[] = {first.data(), v[1].data(), v[2].data(), v[3].data(), v[4].data()};
            sum_in_order(aliased, first.data(), n, isa);
            EXPECT_TRUE(same(first, want)) << to_string(isa) << " in place";
        }
    }
}

}  // namespace
}  // namespace optireduce
