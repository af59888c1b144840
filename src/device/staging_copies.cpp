// SPDX-License-Identifier: BSD-3-Clause
#include "device/staging_copies.hpp"

#include "telemetry/log.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace optireduce {

StagingCopies::~StagingCopies() {
    if (!context_) return;
    // The application may have destroyed the context already (a device reset before
    // MPI_Finalize): then these calls fail, and the driver freed the memory with the context.
    CudaContextScope scope(cuda_, context_);
    if (scope.status() == cuda::CUDA_SUCCESS) release();
}

void StagingCopies::release() {
    if (stream_) cuda_.stream_destroy(stream_);
    free_host();
    stream_ = nullptr;
}

void StagingCopies::free_host() {
    if (host_ && pinned_) cuda_.mem_free_host(host_);
    if (host_ && !pinned_) std::free(host_);
    host_ = nullptr;
    capacity_ = 0;
}

bool StagingCopies::reserve(std::size_t bytes, cuda::CUcontext context, bool pageable_ok, std::string *error) {
    if (context != context_) {
        if (context_) {
            CudaContextScope old(cuda_, context_);
            if (old.status() == cuda::CUDA_SUCCESS) release();
        }
        // What the old context could not free went with it.
        stream_ = nullptr;
        host_ = nullptr;
        capacity_ = 0;
        context_ = context;
    }
    if (!stream_) {
        const cuda::CUresult rc = cuda_.stream_create(&stream_, cuda::CU_STREAM_NON_BLOCKING);
        if (rc != cuda::CUDA_SUCCESS) {
            stream_ = nullptr;
            *error = cuda_.describe("cuStreamCreate", rc);
            return false;
        }
    }
    if (host_ && bytes <= capacity_) return true;
    free_host();
    constexpr std::size_t kAlign = 4096;  // the engine's vector loads and the copy engine like pages
    const std::size_t size = ((std::max<std::size_t>(bytes, 1) + kAlign - 1) / kAlign) * kAlign;
    void *p = nullptr;
    const cuda::CUresult rc = cuda_.mem_host_alloc(&p, size, cuda::CU_MEMHOSTALLOC_PORTABLE);
    if (rc == cuda::CUDA_SUCCESS) {
        host_ = static_cast<float *>(p);
        pinned_ = true;
        capacity_ = size;
        return true;
    }
    *error = cuda_.describe("cuMemHostAlloc", rc) + " for " + std::to_string(size) + " bytes of pinned staging";
    if (!pageable_ok) return false;
    host_ = static_cast<float *>(std::aligned_alloc(kAlign, size));
    if (!host_) {
        *error += ", nor ordinary memory";
        return false;
    }
    pinned_ = false;
    capacity_ = size;
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
        OPTIREDUCE_LOG(warn, "%s: GPU buffers are staged through ordinary host memory instead, at a lower rate",
                       error->c_str());
    error->clear();
    return true;
}

bool StagingCopies::copy(void *dst, const void *src, std::size_t bytes, std::string *error) {
    cuda::CUresult rc = cuda_.memcpy_async(reinterpret_cast<cuda::CUdeviceptr>(dst),
                                           reinterpret_cast<cuda::CUdeviceptr>(src), bytes, stream_);
    if (rc != cuda::CUDA_SUCCESS) {
        *error = cuda_.describe("cuMemcpyAsync", rc);
        return false;
    }
    rc = cuda_.stream_synchronize(stream_);
    if (rc != cuda::CUDA_SUCCESS) {
        *error = cuda_.describe("cuStreamSynchronize", rc);
        return false;
    }
    return true;
}

}  // namespace optireduce
