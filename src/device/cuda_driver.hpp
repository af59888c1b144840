// SPDX-License-Identifier: BSD-3-Clause
// The CUDA driver the application loaded, if any: the library never loads CUDA, never links
// against it and never initialises it. A process without CUDA only ever asks the dynamic loader
// whether a library was loaded since it last looked.
#pragma once

#include "device/cuda_api.hpp"

#include <string>

namespace optireduce {

// What one buffer is, for the driver.
struct PointerInfo {
    bool device = false;  // device or managed memory: the host must not touch it
    bool managed = false;
    cuda::CUcontext context = nullptr;  // the context that owns it (null for VMM allocations)
};

class CudaDriver {
public:
    // The driver already loaded in this process with every entry point the library uses, or
    // nullptr. Looks the driver up again only after the process loaded a library.
    static CudaDriver *loaded();

    // What `p` is. False, with *error set, where the driver failed to say: the caller must then
    // not read the buffer as host memory.
    bool classify(const void *p, PointerInfo *info, std::string *error) const;

    // "cuMemcpyAsync: CUDA_ERROR_ILLEGAL_ADDRESS (700)"
    std::string describe(const char *call, cuda::CUresult rc) const;

    cuda::PointerGetAttributesFn pointer_get_attributes = nullptr;
    cuda::CtxPushCurrentFn ctx_push_current = nullptr;
    cuda::CtxPopCurrentFn ctx_pop_current = nullptr;
    cuda::CtxGetCurrentFn ctx_get_current = nullptr;
    cuda::StreamCreateFn stream_create = nullptr;
    cuda::StreamDestroyFn stream_destroy = nullptr;
    cuda::StreamSynchronizeFn stream_synchronize = nullptr;
    cuda::MemcpyAsyncFn memcpy_async = nullptr;
    cuda::MemHostAllocFn mem_host_alloc = nullptr;
    cuda::MemFreeHostFn mem_free_host = nullptr;
    cuda::GetErrorNameFn get_error_name = nullptr;  // optional

private:
    bool resolve(void *handle, std::string *missing);
};

// Makes `context` current on the calling thread for the scope (the engine's executor thread has
// none of its own), and restores what was current before.
class CudaContextScope {
public:
    CudaContextScope(const CudaDriver &cuda, cuda::CUcontext context);
    ~CudaContextScope();
    CudaContextScope(const CudaContextScope &) = delete;
    CudaContextScope &operator=(const CudaContextScope &) = delete;
    cuda::CUresult status() const { return status_; }

private:
    const CudaDriver &cuda_;
    cuda::CUresult status_;
};

}  // namespace optireduce
