// SPDX-License-Identifier: BSD-3-Clause
// Engine-owned memory that transfers land in. The engine never receives into user memory: a
// late or cancelled transfer can then only ever touch these buffers, and the user buffer is
// written exactly once, by the copy-out at the end of an operation.
#pragma once

#include "transport/fabric/rdm_endpoint.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>

namespace optireduce {

class StagingBuffer {
public:
    // Grows (never shrinks) to hold at least `floats` elements; re-registers with `ep` (if not
    // null) when it grows.
    bool reserve(std::size_t floats, RdmEndpoint *ep, std::string *error);
    bool fits(std::size_t floats) const { return data_ && floats <= capacity_; }
    float *data() const { return data_.get(); }
    void *desc() const { return mr_.desc(); }

private:
    struct Free {
        void operator()(float *p) const { std::free(p); }
    };
    std::unique_ptr<float, Free> data_;
    MemoryRegion mr_;  // declared after data_ so it is closed before the memory is freed
    std::size_t capacity_ = 0;
};

// The buffers of one in-flight operation: `result` holds the whole output vector (peer shards
// from the all-gather, this rank's reduced shard), `incoming` one shard-sized slot per peer for
// the reduce-scatter, `input` a copy of the caller's data when the provider needs registered
// send buffers (FI_MR_LOCAL), `wire` bounded mode's transformed input (codec/block_layout),
// `coded` the datagrams' payloads under a codec other than fp32 (codec/coded_stream.hpp): every
// shard of our contribution, our own shard's slot holding the reduced shard we send.
struct Staging {
    StagingBuffer result, incoming, input, wire, coded;
    bool busy = false;
};

}  // namespace optireduce
