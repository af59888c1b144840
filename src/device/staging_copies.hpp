// SPDX-License-Identifier: BSD-3-Clause
// Host staging for GPU buffers: pinned host memory and a stream of the library's own, in the
// buffer's context, through which a device buffer is copied in before an operation and its
// result copied back after it. Pinned memory lets the copy engine move the bytes by DMA at the
// link's rate; a stream of our own (non-blocking) neither waits for nor delays the
// application's work on the legacy default stream.
#pragma once

#include "device/cuda_driver.hpp"

#include <cstddef>
#include <string>

namespace optireduce {

class StagingCopies {
public:
    explicit StagingCopies(const CudaDriver &cuda) : cuda_(cuda) {}
    ~StagingCopies();
    StagingCopies(const StagingCopies &) = delete;
    StagingCopies &operator=(const StagingCopies &) = delete;

    // Host memory for `bytes` and a stream in `context`, made current by the caller. Grows,
    // never shrinks. Where pinned memory cannot be had and `pageable_ok`, ordinary memory
    // instead (the copies then run at the speed of the driver's own bounce buffers), said once.
    bool reserve(std::size_t bytes, cuda::CUcontext context, bool pageable_ok, std::string *error);
    float *host() const { return host_; }
    bool pinned() const { return pinned_; }

    // One copy each way, then waits for it: the stream holds nothing else. The context must be
    // current.
    bool copy(void *dst, const void *src, std::size_t bytes, std::string *error);

private:
    void release();
    void free_host();

    const CudaDriver &cuda_;
    cuda::CUcontext context_ = nullptr;  // of the stream and the pinned memory
    cuda::CUstream stream_ = nullptr;
    float *host_ = nullptr;
    bool pinned_ = false;
    std::size_t capacity_ = 0;
};

}  // namespace optireduce
