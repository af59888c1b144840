// SPDX-License-Identifier: BSD-3-Clause
#include "device/cuda_driver.hpp"

#include "telemetry/log.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace optireduce {

namespace {

// How many objects the dynamic loader has ever added to the process: it changes exactly when a
// library is loaded, so the driver needs looking up again only then. The first object reported
// carries the count; the walk stops there.
unsigned long long loader_adds() {
    unsigned long long adds = 0;
    dl_iterate_phdr(
        [](dl_phdr_info *info, std::size_t, void *out) {
            *static_cast<unsigned long long *>(out) = info->dlpi_adds;
            return 1;
        },
        &adds);
    return adds;
}

// Whether a loaded object's file is the driver's (libcuda.so.1, or a path to it by another of its
// names). Checked before asking dlopen, which searches the library path for an absent name even
// with RTLD_NOLOAD (about 28 us on Debian 12), where this walk costs well under 1 us.
int is_driver(dl_phdr_info *info, std::size_t, void *) {
    return info->dlpi_name && std::strstr(info->dlpi_name, "libcuda.so") ? 1 : 0;
}
bool driver_mapped() { return dl_iterate_phdr(is_driver, nullptr) != 0; }

std::atomic<CudaDriver *> g_driver{nullptr};
std::atomic<unsigned long long> g_adds_seen{0};
std::mutex g_lookup_mutex;

template <class Fn>
bool find(void *handle, const char *name, Fn *fn, std::string *missing) {
    *fn = reinterpret_cast<Fn>(dlsym(handle, name));
    if (!*fn && missing->empty()) *missing = name;
    return *fn != nullptr;
}

}  // namespace

bool CudaDriver::resolve(void *handle, std::string *missing) {
    // The _v2 names are what cuda.h's macros make of these calls since CUDA 3.2 and 4.0.
    bool ok = find(handle, "cuPointerGetAttributes", &pointer_get_attributes, missing);
    ok &= find(handle, "cuCtxPushCurrent_v2", &ctx_push_current, missing);
    ok &= find(handle, "cuCtxPopCurrent_v2", &ctx_pop_current, missing);
    ok &= find(handle, "cuCtxGetCurrent", &ctx_get_current, missing);
    ok &= find(handle, "cuStreamCreate", &stream_create, missing);
    ok &= find(handle, "cuStreamDestroy_v2", &stream_destroy, missing);
    ok &= find(handle, "cuStreamSynchronize", &stream_synchronize, missing);
    ok &= find(handle, "cuMemcpyAsync", &memcpy_async, missing);
    ok &= find(handle, "cuMemHostAlloc", &mem_host_alloc, missing);
    ok &= find(handle, "cuMemFreeHost", &mem_free_host, missing);
    get_error_name = reinterpret_cast<cuda::GetErrorNameFn>(dlsym(handle, "cuGetErrorName"));
    return ok;
}

CudaDriver *CudaDriver::loaded() {
    if (CudaDriver *d = g_driver.load(std::memory_order_acquire)) return d;
    const unsigned long long adds = loader_adds();
    if (adds == g_adds_seen.load(std::memory_order_relaxed)) return nullptr;
    std::lock_guard lock(g_lookup_mutex);
    if (CudaDriver *d = g_driver.load(std::memory_order_acquire)) return d;
    g_adds_seen.store(adds, std::memory_order_relaxed);
    if (!driver_mapped()) return nullptr;
    // RTLD_NOLOAD: a handle only if the application already loaded the driver; never loads it.
    void *handle = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY | RTLD_LOCAL);
    if (!handle) return nullptr;
    // Kept for the life of the process (the handle holds a reference; the driver is never unloaded
    // by CUDA either), and so is the object: buffers are classified until exit.
    auto *driver = new CudaDriver;
    std::string missing;
    if (!driver->resolve(handle, &missing)) {
        OPTIREDUCE_LOG(warn,
                       "the CUDA driver loaded in this process lacks %s (older than CUDA 7?): GPU buffers "
                       "cannot be recognised, and a GPU buffer given to an eligible allreduce would be read "
                       "as host memory (set OPTIREDUCE_MIN_BYTES above the call's size to keep it away)",
                       missing.c_str());
        delete driver;
        return nullptr;
    }
    g_driver.store(driver, std::memory_order_release);
    OPTIREDUCE_LOG(info, "the application loaded the CUDA driver: GPU buffers of eligible calls are recognised");
    return driver;
}

bool CudaDriver::classify(const void *p, PointerInfo *info, std::string *error) const {
    int attributes[3] = {cuda::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, cuda::CU_POINTER_ATTRIBUTE_IS_MANAGED,
                         cuda::CU_POINTER_ATTRIBUTE_CONTEXT};
    unsigned memory_type = 0;
    unsigned managed = 0;
    cuda::CUcontext context = nullptr;
    void *data[3] = {&memory_type, &managed, &context};
    const cuda::CUresult rc = pointer_get_attributes(3, attributes, data, reinterpret_cast<cuda::CUdeviceptr>(p));
    // Before cuInit no device memory can exist.
    if (rc == cuda::CUDA_ERROR_NOT_INITIALIZED) {
        *info = PointerInfo{};
        return true;
    }
    if (rc != cuda::CUDA_SUCCESS) {
        *error = describe("cuPointerGetAttributes", rc);
        return false;
    }
    // Managed memory counts as device memory: the host may touch it, but each touch migrates pages
    // and stalls the GPU's work on them; one bulk copy each way does not.
    info->managed = managed != 0;
    info->device = info->managed || memory_type == cuda::CU_MEMORYTYPE_DEVICE ||
                   memory_type == cuda::CU_MEMORYTYPE_ARRAY || memory_type == cuda::CU_MEMORYTYPE_UNIFIED;
    info->context = context;
    return true;
}

std::string CudaDriver::describe(const char *call, cuda::CUresult rc) const {
    const char *name = nullptr;
    if (!get_error_name || get_error_name(rc, &name) != cuda::CUDA_SUCCESS || !name) name = "CUDA error";
    return std::string(call) + ": " + name + " (" + std::to_string(rc) + ")";
}

CudaContextScope::CudaContextScope(const CudaDriver &cuda, cuda::CUcontext context)
    : cuda_(cuda), status_(cuda.ctx_push_current(context)) {}

CudaContextScope::~CudaContextScope() {
    if (status_ != cuda::CUDA_SUCCESS) return;
    cuda::CUcontext popped = nullptr;
    cuda_.ctx_pop_current(&popped);
}

}  // namespace optireduce
