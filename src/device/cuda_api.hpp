// SPDX-License-Identifier: BSD-3-Clause
// The part of the CUDA driver API the library uses, declared here because the library never
// includes CUDA's headers nor links against CUDA: it finds the driver only where the application
// has loaded it (device/cuda_driver.hpp). Types and values are those of the driver API's
// documentation (cuda.h); the functions are looked up by the names the driver exports, which
// for some of them carry the _v2 suffix that cuda.h's macros add.
#pragma once

#include <cstddef>
#include <cstdint>

namespace optireduce::cuda {

using CUresult = int;
using CUdeviceptr = std::uintptr_t;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUstream = struct CUstream_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;

// CUpointer_attribute
constexpr int CU_POINTER_ATTRIBUTE_CONTEXT = 1;
constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
constexpr int CU_POINTER_ATTRIBUTE_IS_MANAGED = 8;
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;

// CUmemorytype (0: not memory the driver knows, such as ordinary malloc'ed host memory)
constexpr unsigned CU_MEMORYTYPE_HOST = 1;
constexpr unsigned CU_MEMORYTYPE_DEVICE = 2;
constexpr unsigned CU_MEMORYTYPE_ARRAY = 3;
constexpr unsigned CU_MEMORYTYPE_UNIFIED = 4;

constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 1;
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;

// Signatures, with the symbol each is looked up by in the driver library.
using PointerGetAttributesFn = CUresult (*)(unsigned n, int *attributes, void **data, CUdeviceptr ptr);
using CtxPushCurrentFn = CUresult (*)(CUcontext);   // cuCtxPushCurrent_v2
using CtxPopCurrentFn = CUresult (*)(CUcontext *);  // cuCtxPopCurrent_v2
using CtxGetCurrentFn = CUresult (*)(CUcontext *);  // cuCtxGetCurrent
using StreamCreateFn = CUresult (*)(CUstream *, unsigned flags);
using StreamDestroyFn = CUresult (*)(CUstream);  // cuStreamDestroy_v2
using StreamSynchronizeFn = CUresult (*)(CUstream);
using MemcpyAsyncFn = CUresult (*)(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream);
using MemHostAllocFn = CUresult (*)(void **p, std::size_t bytes, unsigned flags);
using MemFreeHostFn = CUresult (*)(void *p);
using GetErrorNameFn = CUresult (*)(CUresult, const char **);

}  // namespace optireduce::cuda
