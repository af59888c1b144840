// SPDX-License-Identifier: BSD-3-Clause
// The test-only fake CUDA driver (fake_cuda.c, built as libcuda.so.1): the driver API's types,
// values and entry points it exports, under the names and signatures of the real driver (the
// versioned _v2 symbols that cuda.h's macros select), and the fake's own test hooks. Test
// programs include this header instead of cuda.h, which this machine does not have; the values
// must stay those of cuda.h and of src/device/cuda_api.hpp, since the library under test knows
// only those.
#ifndef OPTIREDUCE_TEST_FAKE_CUDA_H
#define OPTIREDUCE_TEST_FAKE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int CUresult;
typedef uintptr_t CUdeviceptr;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_ILLEGAL_ADDRESS 700

#define CU_POINTER_ATTRIBUTE_CONTEXT 1
#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define CU_POINTER_ATTRIBUTE_IS_MANAGED 8
#define CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9

#define CU_MEMORYTYPE_HOST 1u
#define CU_MEMORYTYPE_DEVICE 2u

#define CU_STREAM_DEFAULT 0u
#define CU_STREAM_NON_BLOCKING 1u

#define CU_MEMHOSTALLOC_PORTABLE 1u
#define CU_MEMHOSTALLOC_DEVICEMAP 2u
#define CU_MEMHOSTALLOC_WRITECOMBINED 4u

#define CU_MEM_ATTACH_GLOBAL 1u
#define CU_MEM_ATTACH_HOST 2u

CUresult cuInit(unsigned flags);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetCount(int *count);

CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned flags, CUdevice device);
CUresult cuCtxDestroy_v2(CUcontext ctx);
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuCtxPopCurrent_v2(CUcontext *ctx);
CUresult cuCtxGetCurrent(CUcontext *ctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice device);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device);

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned flags);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags);
CUresult cuMemAllocHost_v2(void **p, size_t bytes);
CUresult cuMemFreeHost(void *p);

CUresult cuPointerGetAttributes(unsigned n, int *attributes, void **data, CUdeviceptr ptr);
CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr);

CUresult cuStreamCreate(CUstream *stream, unsigned flags);
CUresult cuStreamDestroy_v2(CUstream stream);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuStreamQuery(CUstream stream);

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes);

CUresult cuGetErrorName(CUresult error, const char **name);
CUresult cuGetErrorString(CUresult error, const char **text);

// --- the fake's test hooks (no real driver has these; they need no cuInit) ---

// What the process has asked of the fake so far. Async copies are counted when queued (an
// injected failure queues nothing and counts only in failed_copies); "host side" is the side of
// a copy that is not device or managed memory.
struct fakecuda_stats {
  uint64_t async_htod;            // async copies host -> device (or managed)
  uint64_t async_dtoh;            // async copies device -> host
  uint64_t async_dtod;            // async copies between two device allocations
  uint64_t async_htoh;            // async copies between two host buffers
  uint64_t async_bytes_htod;      // bytes of the async_htod copies
  uint64_t async_bytes_dtoh;      // bytes of the async_dtoh copies
  uint64_t async_unpinned;        // async copies with a host side outside pinned memory
  uint64_t sync_copies;           // cuMemcpy, cuMemcpyHtoD_v2, cuMemcpyDtoH_v2 that succeeded
  uint64_t failed_copies;         // copies failed by FAKECUDA_FAIL_COPY_AT
  uint64_t host_allocs;           // cuMemHostAlloc and cuMemAllocHost_v2 calls that succeeded
  uint64_t host_alloc_bytes;      // bytes they asked for
  uint64_t pointer_queries;       // cuPointerGetAttributes calls
  uint64_t stream_syncs;          // cuStreamSynchronize calls that succeeded
  uint64_t live_device_allocs;    // device and managed allocations not yet freed
  uint64_t live_host_allocs;      // pinned host allocations not yet freed
  uint64_t live_streams;          // streams created and not yet destroyed
  uint64_t pending_copies;        // queued async copies not yet performed
};

void fakecuda_get_stats(struct fakecuda_stats *stats);

// The host-accessible alias of a byte of device or managed memory (any address inside a live
// allocation), NULL for any other address. Only the fake CUDA-aware MPI and test checks use it:
// the library under test must never see it.
void *fakecuda_shadow(const void *device_ptr);

#ifdef __cplusplus
}
#endif

#endif
