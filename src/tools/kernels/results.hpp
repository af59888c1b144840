// SPDX-License-Identifier: BSD-3-Clause
// What the measurements yield, one row per kernel, instruction set and size: the input of both
// renderings.
#pragma once

#include "bench_support.hpp"
#include "codec/wire_codec.hpp"

#include <cstddef>
#include <vector>

namespace optireduce::kernel_bench {

struct CopyRow {
    std::size_t bytes = 0;
    Timing gbps;  // GB/s of the median and the best run
};
struct FwhtRow {
    Isa isa;
    std::size_t block;
    double gbps, hot_gbps;
};
struct SignRow {
    Isa isa;
    double gbps, hot_gbps;
};
struct SumRow {
    const char *kernel;
    const char *isa;
    double out_gbps, traffic_gbps, hot_out_gbps;
};
struct CodecRow {
    Isa isa;
    std::size_t max_block, block;
    bool interleave;
    double enc_gbps, dec_gbps, gbps;
};

// GB/s count the bytes of the float side (4 per entry), whichever way the data goes.
struct WireRow {
    Codec codec;
    Isa isa;
    std::size_t payload, chunk;
    double enc_gbps, dec_gbps, hot_enc_gbps, hot_dec_gbps;
};

struct Results {
    std::vector<Isa> isas;
    int cpu = -1;
    double cpu_share = 1;  // CPU time / wall time of the whole run
    CopyRow copy_mem, copy_l2;
    std::vector<FwhtRow> fwht;
    std::vector<SignRow> sign;
    std::vector<SumRow> sum;
    std::vector<CodecRow> codec;
    std::vector<WireRow> wire;
    // What every ratio divides by: the best memory copy.
    double copy() const { return copy_mem.gbps.best; }
};

}  // namespace optireduce::kernel_bench
