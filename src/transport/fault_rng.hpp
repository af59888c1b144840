// SPDX-License-Identifier: BSD-3-Clause
// The random decisions of the test-only OPTIREDUCE_FAULT_* knobs: splitmix64, seeded from the
// seed knob and the rank. Pure, so the transport's fault decorator (faulty_dgram_endpoint.hpp)
// and the engine's decisions (engine/setup/faults.hpp) share it. The seed fixes the sequence of
// decisions, not what each lands on: the decorator draws one per datagram in the order the
// channel delivers or sends them, which the scheduler varies, so two runs with one seed drop the
// same fraction but not the same datagrams (the tests bound rates, not sets).
#pragma once

#include <cstdint>

namespace optireduce {

class FaultRng {
public:
    FaultRng() = default;
    FaultRng(std::uint64_t seed, std::uint64_t stream)
        : state_(seed * 0x9e3779b97f4a7c15ull ^ (stream + 1) * 0xbf58476d1ce4e5b9ull) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // True with probability p.
    bool chance(double p) { return p > 0 && static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

private:
    std::uint64_t state_ = 0;
};

}  // namespace optireduce
