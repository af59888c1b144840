/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU buffers under the library, on the fake CUDA driver (fake_cuda.c), whose device memory is
 * mapped PROT_NONE: a library that reads or writes a device buffer as host memory kills the rank.
 * Like a PyTorch or CuPy job, the program loads the driver at run time (dlopen, found through
 * LD_LIBRARY_PATH), so a rank can also stay free of CUDA. Each case prints "PASS <case>".
 *
 * usage: device_check CASE, CASE one of
 *   device    send and receive buffers in device memory, several sizes and calls
 *   inplace   MPI_IN_PLACE on device memory
 *   managed   managed (unified) memory
 *   mixed     even ranks device memory (and both mixes of device and host), odd ranks host
 *             memory without loading CUDA at all
 *   iallreduce  three MPI_Iallreduce on device memory outstanding at once
 *   late      CUDA loaded after the communicator was set up
 *   fallback  a rank's staging fails (FAKECUDA_FAIL_* in the environment): every call still right
 *   passthrough  OPTIREDUCE_DEVICE=passthrough: device calls go to the (fake CUDA-aware) MPI
 *   cpu_only  never loads CUDA: nor may the library (checked in /proc/self/maps)
 *   bench     64 MiB calls, device buffers against host buffers, timed side by side: prints
 *             "BENCH ..." with their ratio and the copies' share (on the fake driver the copies
 *             are plain memcpy: only their cost means something there)
 * The fake's own hooks (fakecuda_get_stats) are optional, so every case but copy_fails,
 * hostalloc_fails and passthrough (which need a CUDA-aware MPI) also runs on a real GPU
 * (scripts/gpu-check.sh). */
#include "../bounded/check_util.h"
#include "fake_cuda.h"

/* The driver's entry points this program uses, from the library dlopen gave. */
static struct {
    void *lib;
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*ctx_create)(CUcontext *, unsigned, CUdevice);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_alloc_managed)(CUdeviceptr *, size_t, unsigned);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    void (*get_stats)(struct fakecuda_stats *);
} cu;

#define RESOLVE(field, name) *(void **)&cu.field = dlsym(cu.lib, name)

static void load_cuda(void) {
    cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!cu.lib) {
        printf("FAIL [rank %d] dlopen libcuda.so.1: %s (is LD_LIBRARY_PATH the fake's directory?)\n", g_rank,
               dlerror());
        exit(1);
    }
    RESOLVE(init, "cuInit");
    RESOLVE(device_get, "cuDeviceGet");
    RESOLVE(ctx_create, "cuCtxCreate_v2");
    RESOLVE(mem_alloc, "cuMemAlloc_v2");
    RESOLVE(mem_alloc_managed, "cuMemAllocManaged");
    RESOLVE(mem_free, "cuMemFree_v2");
    RESOLVE(htod, "cuMemcpyHtoD_v2");
    RESOLVE(dtoh, "cuMemcpyDtoH_v2");
    RESOLVE(get_stats, "fakecuda_get_stats");
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    if (cu.init(0) != CUDA_SUCCESS || cu.device_get(&dev, 0) != CUDA_SUCCESS ||
        cu.ctx_create(&ctx, 0, dev) != CUDA_SUCCESS) {
        printf("FAIL [rank %d] the fake driver did not start\n", g_rank);
        exit(1);
    }
}

static int cuda_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && fgets(line, sizeof line, f)) found |= strstr(line, "libcuda") != NULL;
    if (f) fclose(f);
    return found;
}

/* A buffer of n floats where the case wants it: device, managed or host memory. */
enum where { HOST, DEVICE, MANAGED };
static float *alloc_floats(enum where w, size_t n) {
    if (w == HOST) return malloc(n * sizeof(float));
    CUdeviceptr p = 0;
    CUresult rc = w == DEVICE ? cu.mem_alloc(&p, n * sizeof(float))
                              : cu.mem_alloc_managed(&p, n * sizeof(float), CU_MEM_ATTACH_GLOBAL);
    CHECK(rc == CUDA_SUCCESS, "allocating %zu floats of device memory: %d", n, rc);
    return (float *)p;
}
static void free_floats(enum where w, float *p) {
    if (w == HOST) free(p);
    else cu.mem_free((CUdeviceptr)p);
}
static void put(enum where w, float *dst, const float *src, size_t n) {
    if (w == HOST) memcpy(dst, src, n * sizeof(float));
    else CHECK(cu.htod((CUdeviceptr)dst, src, n * sizeof(float)) == CUDA_SUCCESS, "cuMemcpyHtoD");
}
static void get(enum where w, float *dst, const float *src, size_t n) {
    if (w == HOST) memcpy(dst, src, n * sizeof(float));
    else CHECK(cu.dtoh(dst, (CUdeviceptr)src, n * sizeof(float)) == CUDA_SUCCESS, "cuMemcpyDtoH");
}

/* Rank r's element i of call `op`, and the exact sum over ranks (small multiples of 1/64: exact
 * in float, so only the transform's rounding separates the engine's result from it). */
static float value(size_t i, int op, int rank) { return op_value(i, op) + (float)rank; }
static double want(size_t i, int op) { return g_size * (double)op_value(i, op) + g_size * (g_size - 1) / 2.0; }

static void check_result(const char *what, const float *got, size_t n, int op) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (fabs(got[i] - want(i, op)) > 1e-3 * (1.0 + fabs(want(i, op))) && bad++ == 0) first = i;
    CHECK(bad == 0, "%s, call %d: %zu of %zu entries wrong, first [%zu] = %g, want %g", what, op, bad, n, first,
          bad ? got[first] : 0.0, bad ? want(first, op) : 0.0);
}

/* One blocking allreduce with the send buffer in `ws` (or MPI_IN_PLACE) and the receive buffer
 * in `wr`, checked; returns MPI's code. */
static int one_call(enum where ws, enum where wr, int in_place, size_t n, int op) {
    float *host = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; ++i) host[i] = value(i, op, g_rank);
    float *send = in_place ? NULL : alloc_floats(ws, n);
    float *recv = alloc_floats(wr, n);
    put(in_place ? wr : ws, in_place ? recv : send, host, n);
    const int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "MPI_Allreduce returned %d", rc);
    get(wr, host, recv, n);
    char what[64];
    snprintf(what, sizeof what, "%s%s -> %s", in_place ? "in place " : "",
             in_place ? "" : (ws == HOST ? "host" : "device"), wr == HOST ? "host" : "device");
    check_result(what, host, n, op);
    if (!in_place) free_floats(ws, send);
    free_floats(wr, recv);
    free(host);
    return rc;
}

static const size_t kSizes[] = {1000, 65536, 300001};

/* Calls of every size with buffers in `ws`/`wr`; checks that each went through the engine,
 * staged (on ranks with device memory), with one copy each way at most. */
static void staged_calls(enum where ws, enum where wr, int in_place) {
    const optireduce_stats_t s0 = stats();
    struct fakecuda_stats f0 = {0}, f1 = {0};
    if (cu.get_stats) cu.get_stats(&f0);
    int calls = 0;
    for (size_t k = 0; k < sizeof kSizes / sizeof kSizes[0]; ++k)
        for (int op = 0; op < 2; ++op, ++calls) one_call(ws, wr, in_place, kSizes[k], op + (int)k * 2);
    const optireduce_stats_t s1 = stats();
    CHECK(s1.engine_calls - s0.engine_calls == (uint64_t)calls, "engine took %llu of %d calls",
          (unsigned long long)(s1.engine_calls - s0.engine_calls), calls);
    const int on_device = (!in_place && ws != HOST) || wr != HOST;
    CHECK(s1.device_calls - s0.device_calls == (uint64_t)(on_device ? calls : 0), "device_calls %llu, want %d",
          (unsigned long long)(s1.device_calls - s0.device_calls), on_device ? calls : 0);
    if (!cu.get_stats) return;
    cu.get_stats(&f1);
    /* The program's own copies are synchronous; the library's are the async ones. */
    const uint64_t in = f1.async_dtoh - f0.async_dtoh, out = f1.async_htod - f0.async_htod;
    const int copies_in = in_place ? wr != HOST : ws != HOST, copies_out = wr != HOST;
    CHECK(in == (uint64_t)(copies_in * calls) && out == (uint64_t)(copies_out * calls),
          "%llu copies in and %llu out for %d calls: want %d and %d per call", (unsigned long long)in,
          (unsigned long long)out, calls, copies_in, copies_out);
    CHECK(f1.async_unpinned == f0.async_unpinned, "%llu copies through unpinned host memory",
          (unsigned long long)(f1.async_unpinned - f0.async_unpinned));
}

static void case_iallreduce(void) {
    enum { kOps = 3 };
    const size_t n = 200000;
    float *send[kOps], *recv[kOps], *host = malloc(n * sizeof(float));
    MPI_Request req[kOps];
    const optireduce_stats_t s0 = stats();
    for (int op = 0; op < kOps; ++op) {
        for (size_t i = 0; i < n; ++i) host[i] = value(i, op, g_rank);
        send[op] = alloc_floats(DEVICE, n);
        recv[op] = alloc_floats(DEVICE, n);
        put(DEVICE, send[op], host, n);
        CHECK(MPI_Iallreduce(send[op], recv[op], (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req[op]) ==
                  MPI_SUCCESS, "MPI_Iallreduce");
    }
    CHECK(MPI_Waitall(kOps, req, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "MPI_Waitall");
    for (int op = 0; op < kOps; ++op) {
        get(DEVICE, host, recv[op], n);
        check_result("MPI_Iallreduce", host, n, op);
        free_floats(DEVICE, send[op]);
        free_floats(DEVICE, recv[op]);
    }
    const optireduce_stats_t s1 = stats();
    CHECK(s1.nonblocking_calls - s0.nonblocking_calls == kOps && s1.device_calls - s0.device_calls == kOps,
          "nonblocking_calls +%llu, device_calls +%llu, want %d each",
          (unsigned long long)(s1.nonblocking_calls - s0.nonblocking_calls),
          (unsigned long long)(s1.device_calls - s0.device_calls), kOps);
    free(host);
}

/* Device calls whose staging fails on one rank (FAKECUDA_FAULT_RANK with FAKECUDA_FAIL_COPY_AT
 * or FAKECUDA_FAIL_HOSTALLOC): every rank hands exactly `expect_fallbacks` of them to the
 * underlying MPI, agreed, and every result is right. */
static void failing_staging(int calls, int expect_fallbacks) {
    const optireduce_stats_t s0 = stats();
    for (int op = 0; op < calls; ++op) one_call(DEVICE, DEVICE, 0, 100000, op);
    const optireduce_stats_t s1 = stats();
    const uint64_t fell = s1.device_fallback_calls - s0.device_fallback_calls;
    CHECK(fell == (uint64_t)expect_fallbacks, "%llu calls handed to MPI, want %d", (unsigned long long)fell,
          expect_fallbacks);
    CHECK(s1.engine_calls - s0.engine_calls == (uint64_t)(calls - expect_fallbacks), "engine took %llu calls",
          (unsigned long long)(s1.engine_calls - s0.engine_calls));
}

/* OPTIREDUCE_DEVICE=passthrough: a device call on any rank takes the call to MPI on every rank
 * (blocking: agreed per call; nonblocking: all of them on this communicator), host calls stay. */
static void case_passthrough(void) {
    const int device_rank = g_size - 1;  /* only one rank's buffers are on the GPU */
    optireduce_stats_t s0 = stats();
    one_call(g_rank == device_rank ? DEVICE : HOST, g_rank == device_rank ? DEVICE : HOST, 0, 100000, 0);
    optireduce_stats_t s1 = stats();
    CHECK(s1.device_fallback_calls - s0.device_fallback_calls == 1 && s1.engine_calls == s0.engine_calls,
          "a device call on rank %d: %llu to MPI, %llu in the engine; want 1 and 0", device_rank,
          (unsigned long long)(s1.device_fallback_calls - s0.device_fallback_calls),
          (unsigned long long)(s1.engine_calls - s0.engine_calls));
    s0 = s1;
    one_call(HOST, HOST, 0, 100000, 1);
    s1 = stats();
    CHECK(s1.engine_calls - s0.engine_calls == 1, "a host call everywhere did not run in the engine");
    s0 = s1;
    const size_t n = 100000;
    float *host = malloc(n * sizeof(float)), *buf = alloc_floats(DEVICE, n);
    for (size_t i = 0; i < n; ++i) host[i] = value(i, 2, g_rank);
    put(DEVICE, buf, host, n);
    MPI_Request req;
    CHECK(MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req) == MPI_SUCCESS,
          "MPI_Iallreduce");
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait");
    get(DEVICE, host, buf, n);
    check_result("passthrough MPI_Iallreduce", host, n, 2);
    s1 = stats();
    CHECK(s1.engine_calls == s0.engine_calls && s1.fallback_calls - s0.fallback_calls == 1,
          "a nonblocking device call went to the engine");
    free_floats(DEVICE, buf);
    free(host);
}

/* Median milliseconds of `reps` 64 MiB allreduces with buffers in `w` (in place). */
static double timed_calls(enum where w, size_t n, int reps, double *copy_ms) {
    float *buf = alloc_floats(w, n), *host = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; ++i) host[i] = value(i, 0, g_rank) / (float)(1 << 20);
    double t[64];
    const uint64_t c0 = stats().device_copy_ns;
    for (int r = 0; r < reps + 2; ++r) {
        put(w, buf, host, n);
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_ms();
        MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double dt = now_ms() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 2) t[r - 2] = dt;  /* the first two grow staging */
    }
    *copy_ms = (double)(stats().device_copy_ns - c0) / 1e6 / (reps + 2);
    for (int i = 1; i < reps; ++i)
        for (int j = i; j > 0 && t[j] < t[j - 1]; --j) {
            const double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    free_floats(w, buf);
    free(host);
    return t[reps / 2];
}

static void case_bench(void) {
    const size_t n = 16u << 20;  /* 64 MiB of floats */
    const int reps = 15;
    double host_copy = 0, device_copy = 0;
    /* Alternated, so that a slow spell of the host hits both. */
    const double host1 = timed_calls(HOST, n, reps, &host_copy);
    const double dev1 = timed_calls(DEVICE, n, reps, &device_copy);
    const double host2 = timed_calls(HOST, n, reps, &host_copy);
    const double dev2 = timed_calls(DEVICE, n, reps, &device_copy);
    const double host = host1 < host2 ? host1 : host2, dev = dev1 < dev2 ? dev1 : dev2;
    if (g_rank == 0)
        printf("BENCH 64MiB ranks=%d host_ms=%.2f device_ms=%.2f ratio=%.3f device_copy_ms_per_call=%.2f\n", g_size,
               host, dev, dev / host, device_copy);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *c = argc > 1 ? argv[1] : "";
    const int mixed = strcmp(c, "mixed") == 0, late = strcmp(c, "late") == 0, cpu_only = strcmp(c, "cpu_only") == 0;
    if (!(late || cpu_only || (mixed && g_rank % 2 == 1))) load_cuda();
    if (strcmp(c, "device") == 0) {
        staged_calls(DEVICE, DEVICE, 0);
    } else if (strcmp(c, "inplace") == 0) {
        staged_calls(DEVICE, DEVICE, 1);
    } else if (strcmp(c, "managed") == 0) {
        staged_calls(MANAGED, MANAGED, 0);
        staged_calls(MANAGED, MANAGED, 1);
    } else if (mixed) {
        const enum where d = g_rank % 2 == 0 ? DEVICE : HOST;
        staged_calls(d, d, 0);
        staged_calls(d, HOST, 0);
        staged_calls(HOST, d, 0);
        staged_calls(d, d, 1);
        if (g_rank % 2 == 1) CHECK(!cuda_mapped(), "a rank that never loaded CUDA has libcuda mapped");
    } else if (strcmp(c, "iallreduce") == 0) {
        case_iallreduce();
    } else if (late) {
        staged_calls(HOST, HOST, 0);
        load_cuda();
        staged_calls(DEVICE, DEVICE, 0);
        staged_calls(DEVICE, DEVICE, 1);
    } else if (strcmp(c, "copy_fails") == 0) {
        failing_staging(4, 1);
    } else if (strcmp(c, "hostalloc_fails") == 0) {
        failing_staging(3, 3);
    } else if (strcmp(c, "passthrough") == 0) {
        case_passthrough();
    } else if (strcmp(c, "bench") == 0) {
        case_bench();
    } else if (cpu_only) {
        staged_calls(HOST, HOST, 0);
        staged_calls(HOST, HOST, 1);
        CHECK(!cuda_mapped(), "the library loaded libcuda into a process that never did");
    } else {
        CHECK(0, "unknown case '%s'", c);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!g_failed) printf("PASS %s\n", c);
    fflush(stdout);
    MPI_Finalize();
    return g_failed;
}
