// SPDX-License-Identifier: BSD-3-Clause
#include "engine/setup/staging.hpp"

namespace optireduce {

bool StagingBuffer::reserve(std::size_t floats, RdmEndpoint *ep, std::string *error) {
    if (floats <= capacity_ && data_) return true;
    mr_ = MemoryRegion();  // deregister before the memory goes away
    data_.reset();
    capacity_ = 0;
    // Page aligned and rounded up: registration works on pages, and vector loads like 64 B.
    constexpr std::size_t kAlign = 4096;
    const std::size_t bytes = ((std::max<std::size_t>(floats, 1) * sizeof(float) + kAlign - 1) / kAlign) * kAlign;
    data_.reset(static_cast<float *>(std::aligned_alloc(kAlign, bytes)));
    if (!data_) {
        *error = "out of memory allocating " + std::to_string(bytes) + " bytes of staging";
        return false;
    }
    std::string reg_error;
    if (ep) mr_ = ep->register_memory(data_.get(), bytes, &reg_error);
    if (!reg_error.empty()) {
        *error = reg_error;
        data_.reset();
        return false;
    }
    capacity_ = bytes / sizeof(float);
    return true;
}

}  // namespace optireduce
