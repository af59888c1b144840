// SPDX-License-Identifier: BSD-3-Clause
// Checks that the fake CUDA driver (fake_cuda.c) is as strict as the device-buffer tests rely on:
// if it let the host touch device memory, or performed async copies early, those tests could
// pass for a library that would fail on a GPU. Prints "FAIL ..." for every violated check and
// "PASS fake_cuda" when there is none.
//
// The knobs are read at cuInit, so each injection case runs in a child forked before this
// process calls cuInit, with its own environment.
#define _POSIX_C_SOURCE 200809L
#include "fake_cuda.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static int g_failures;

static void fail(int line, const char *what, long got, long want) {
  printf("FAIL fake_cuda_selftest.c:%d: %s: got %ld, expected %ld\n", line, what, got, want);
  fflush(stdout);
  g_failures++;
}

#define EXPECT_RC(call, want)                                   \
  do {                                                          \
    CUresult rc_ = (call);                                      \
    if (rc_ != (want)) fail(__LINE__, #call, rc_, (long)(want)); \
  } while (0)
#define EXPECT(cond)                                       \
  do {                                                     \
    if (!(cond)) fail(__LINE__, #cond " is false", 0, 1); \
  } while (0)

static struct fakecuda_stats stats(void) {
  struct fakecuda_stats s;
  fakecuda_get_stats(&s);
  return s;
}

// Runs fn in a child and returns how it ended (waitpid's status); the child's own failures make
// it exit 1. The child neither flushes the parent's buffers nor runs its exit handlers.
static int in_child(int (*fn)(const void *), const void *arg) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // the crashes asked for are not worth a core file
    int failures = fn(arg);
    fflush(stdout);
    _exit(failures ? 1 : 0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) {
    fail(__LINE__, "fork/waitpid", pid, 0);
    return -1;
  }
  return status;
}

static void expect_child_ok(int line, int (*fn)(const void *), const void *arg, const char *what) {
  int status = in_child(fn, arg);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail(line, what, status, 0);
}

static void expect_child_signal(int line, int (*fn)(const void *), const void *arg, int sig, const char *what) {
  int status = in_child(fn, arg);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != sig) fail(line, what, status, sig);
}

// --- children ------------------------------------------------------------------------------

struct access {
  const void *p;
  int write;
};

static int touch(const void *arg) {
  const struct access *a = arg;
  // A sanitizer's handler would turn the fault into an exit code: the test wants the signal.
  signal(SIGSEGV, SIG_DFL);
  if (a->write)
    *(volatile unsigned char *)(uintptr_t)a->p = 1;
  else
    (void)*(const volatile unsigned char *)a->p;
  return 0;
}

static CUcontext setup_child(const char *const *env) {
  for (; env[0] != NULL; env += 2) {
    if (env[1] != NULL)
      setenv(env[0], env[1], 1);
    else
      unsetenv(env[0]);
  }
  CUcontext ctx = NULL;
  EXPECT_RC(cuInit(0), CUDA_SUCCESS);
  EXPECT_RC(cuCtxCreate_v2(&ctx, 0, 0), CUDA_SUCCESS);
  return ctx;
}

// FAKECUDA_FAIL_COPY_AT=2: copies 1, 3 and 4 work, the second (an async one) fails and queues
// nothing.
static int copy_fault(const void *arg) {
  (void)arg;
  static const char *const env[] = {"FAKECUDA_FAIL_COPY_AT", "2", "FAKECUDA_FAULT_RANK", NULL, NULL};
  setup_child(env);
  CUdeviceptr dev = 0;
  CUstream stream = NULL;
  char host[64] = "payload";
  char back[64] = {0};
  EXPECT_RC(cuMemAlloc_v2(&dev, sizeof host), CUDA_SUCCESS);
  EXPECT_RC(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_RC(cuMemcpyHtoD_v2(dev, host, sizeof host), CUDA_SUCCESS);
  EXPECT_RC(cuMemcpyDtoHAsync_v2(back, dev, sizeof back, stream), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT(stats().pending_copies == 0 && stats().failed_copies == 1 && stats().async_dtoh == 0);
  EXPECT_RC(cuMemcpyDtoHAsync_v2(back, dev, sizeof back, stream), CUDA_SUCCESS);
  EXPECT_RC(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_RC(cuMemcpyDtoH_v2(back, dev, sizeof back), CUDA_SUCCESS);
  EXPECT(strcmp(back, "payload") == 0);
  return g_failures;
}

// FAKECUDA_FAULT_RANK picks the process by OMPI_COMM_WORLD_RANK, else PMI_RANK.
struct rank_case {
  CUresult want;  // of the first copy, which FAKECUDA_FAIL_COPY_AT=1 fails where it applies
  const char *env[9];
};

static int copy_fault_rank(const void *arg) {
  const struct rank_case *c = arg;
  setup_child(c->env);
  CUdeviceptr dev = 0;
  char host[8] = {0};
  EXPECT_RC(cuMemAlloc_v2(&dev, sizeof host), CUDA_SUCCESS);
  EXPECT_RC(cuMemcpyHtoD_v2(dev, host, sizeof host), c->want);
  return g_failures;
}

static int hostalloc_fault(const void *arg) {
  (void)arg;
  static const char *const env[] = {"FAKECUDA_FAIL_HOSTALLOC", "1", "FAKECUDA_FAULT_RANK", NULL, NULL};
  setup_child(env);
  void *pinned = NULL;
  CUdeviceptr dev = 0;
  EXPECT_RC(cuMemHostAlloc(&pinned, 4096, CU_MEMHOSTALLOC_PORTABLE), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_RC(cuMemAlloc_v2(&dev, 4096), CUDA_SUCCESS);
  return g_failures;
}

// Freeing pinned memory that a queued copy still writes must stop the process.
static int free_pending(const void *arg) {
  const CUdeviceptr *dev = arg;
  void *pinned = NULL;
  CUstream stream = NULL;
  EXPECT_RC(cuMemHostAlloc(&pinned, 64, 0), CUDA_SUCCESS);
  EXPECT_RC(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  EXPECT_RC(cuMemcpyDtoHAsync_v2(pinned, *dev, 64, stream), CUDA_SUCCESS);
  fflush(stdout);
  cuMemFreeHost(pinned);
  printf("FAIL fake_cuda_selftest.c:%d: cuMemFreeHost with a queued copy returned\n", __LINE__);
  return 1;
}

// --- a thread of its own -------------------------------------------------------------------

struct thread_arg {
  CUcontext ctx;
  CUdeviceptr dev;
};

static void *other_thread(void *p) {
  const struct thread_arg *arg = p;
  CUcontext cur = (CUcontext)(uintptr_t)1;
  CUdeviceptr dev = 0;
  char host[16] = {0};
  EXPECT_RC(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  EXPECT(cur == NULL);
  EXPECT_RC(cuMemAlloc_v2(&dev, 64), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_RC(cuMemcpyDtoH_v2(host, arg->dev, sizeof host), CUDA_ERROR_INVALID_CONTEXT);
  // Pointer queries need no context: the library asks before it pushes one.
  unsigned type = 0;
  EXPECT_RC(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, arg->dev), CUDA_SUCCESS);
  EXPECT(type == CU_MEMORYTYPE_DEVICE);
  EXPECT_RC(cuCtxPushCurrent_v2(arg->ctx), CUDA_SUCCESS);
  EXPECT_RC(cuMemAlloc_v2(&dev, 64), CUDA_SUCCESS);
  EXPECT_RC(cuMemcpyDtoH_v2(host, arg->dev, sizeof host), CUDA_SUCCESS);
  EXPECT_RC(cuMemFree_v2(dev), CUDA_SUCCESS);
  EXPECT_RC(cuCtxPopCurrent_v2(&cur), CUDA_SUCCESS);
  EXPECT(cur == arg->ctx);
  EXPECT_RC(cuMemAlloc_v2(&dev, 64), CUDA_ERROR_INVALID_CONTEXT);
  return NULL;
}

// --- the checks ----------------------------------------------------------------------------

static void check_before_init(void) {
  int n = 0;
  CUcontext ctx = NULL;
  CUdeviceptr dev = 0;
  void *p = NULL;
  CUstream stream = NULL;
  int attr = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  unsigned type = 0;
  void *data[] = {&type};
  char host[8] = {0};
  EXPECT_RC(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_RC(cuCtxGetCurrent(&ctx), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_RC(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_RC(cuMemAlloc_v2(&dev, 64), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_RC(cuMemHostAlloc(&p, 64, 0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_RC(cuStreamCreate(&stream, 0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_RC(cuPointerGetAttributes(1, &attr, data, (CUdeviceptr)host), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_RC(cuMemcpyHtoD_v2(dev, host, sizeof host), CUDA_ERROR_NOT_INITIALIZED);
  const char *name = NULL;
  EXPECT_RC(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &name), CUDA_SUCCESS);
  EXPECT(name != NULL && strcmp(name, "CUDA_ERROR_ILLEGAL_ADDRESS") == 0);
  EXPECT_RC(cuGetErrorName(12345, &name), CUDA_ERROR_INVALID_VALUE);
}

static void check_injections(void) {
  expect_child_ok(__LINE__, copy_fault, NULL, "FAKECUDA_FAIL_COPY_AT=2 child");
  static const struct rank_case other_rank = {CUDA_SUCCESS,
      {"FAKECUDA_FAIL_COPY_AT", "1", "FAKECUDA_FAULT_RANK", "1", "OMPI_COMM_WORLD_RANK", "0", "PMI_RANK", "1", NULL}};
  static const struct rank_case ompi_rank = {CUDA_ERROR_ILLEGAL_ADDRESS,
      {"FAKECUDA_FAIL_COPY_AT", "1", "FAKECUDA_FAULT_RANK", "1", "OMPI_COMM_WORLD_RANK", "1", "PMI_RANK", NULL, NULL}};
  static const struct rank_case pmi_rank = {CUDA_ERROR_ILLEGAL_ADDRESS,
      {"FAKECUDA_FAIL_COPY_AT", "1", "FAKECUDA_FAULT_RANK", "1", "OMPI_COMM_WORLD_RANK", NULL, "PMI_RANK", "1", NULL}};
  static const struct rank_case no_rank = {CUDA_SUCCESS,
      {"FAKECUDA_FAIL_COPY_AT", "1", "FAKECUDA_FAULT_RANK", "1", "OMPI_COMM_WORLD_RANK", NULL, "PMI_RANK", NULL, NULL}};
  expect_child_ok(__LINE__, copy_fault_rank, &other_rank, "FAKECUDA_FAULT_RANK=1 on OMPI rank 0");
  expect_child_ok(__LINE__, copy_fault_rank, &ompi_rank, "FAKECUDA_FAULT_RANK=1 on OMPI rank 1");
  expect_child_ok(__LINE__, copy_fault_rank, &pmi_rank, "FAKECUDA_FAULT_RANK=1 on PMI rank 1");
  expect_child_ok(__LINE__, copy_fault_rank, &no_rank, "FAKECUDA_FAULT_RANK=1 without a rank");
  expect_child_ok(__LINE__, hostalloc_fault, NULL, "FAKECUDA_FAIL_HOSTALLOC=1 child");
}

static void check_no_context(void) {
  CUdeviceptr dev = 0;
  void *p = NULL;
  CUstream stream = NULL;
  CUcontext cur = (CUcontext)(uintptr_t)1;
  CUdevice device = -1;
  int n = 0;
  EXPECT_RC(cuDeviceGetCount(&n), CUDA_SUCCESS);
  EXPECT(n == 1);
  EXPECT_RC(cuDeviceGet(&device, 0), CUDA_SUCCESS);
  EXPECT(device == 0);
  EXPECT_RC(cuDeviceGet(&device, 1), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_RC(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  EXPECT(cur == NULL);
  EXPECT_RC(cuMemAlloc_v2(&dev, 64), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_RC(cuMemAllocManaged(&dev, 64, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_RC(cuMemHostAlloc(&p, 64, 0), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_RC(cuStreamCreate(&stream, 0), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_RC(cuStreamSynchronize(NULL), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_RC(cuCtxPopCurrent_v2(&cur), CUDA_ERROR_INVALID_CONTEXT);
}

// Every kind of memory the library may be handed: what the driver says about it, and what the
// host may do with it.
struct buffers {
  CUcontext ctx;
  CUdeviceptr dev, managed;
  void *pinned;
  char *heap;
  size_t bytes;
};

static void check_attributes(const struct buffers *b) {
  struct {
    uintptr_t p;
    CUcontext ctx;
    unsigned type, managed;
    int ordinal;
  } cases[] = {
      {b->dev, b->ctx, CU_MEMORYTYPE_DEVICE, 0, 0},
      {b->dev + b->bytes - 1, b->ctx, CU_MEMORYTYPE_DEVICE, 0, 0},  // interior (last byte)
      {b->dev + b->bytes, NULL, 0, 0, -2},                          // one past the end
      {b->managed + 100, b->ctx, CU_MEMORYTYPE_DEVICE, 1, 0},
      {(uintptr_t)b->pinned, b->ctx, CU_MEMORYTYPE_HOST, 0, 0},
      {(uintptr_t)b->pinned + 5, b->ctx, CU_MEMORYTYPE_HOST, 0, 0},
      {(uintptr_t)b->heap, NULL, 0, 0, -2},
      {0, NULL, 0, 0, -2},
  };
  uint64_t queries = stats().pointer_queries;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int attrs[] = {CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    CUcontext ctx = (CUcontext)(uintptr_t)1;
    unsigned type = 99, managed = 99;
    int ordinal = 99;
    void *data[] = {&ctx, &type, &managed, &ordinal};
    EXPECT_RC(cuPointerGetAttributes(4, attrs, data, cases[i].p), CUDA_SUCCESS);
    if (ctx != cases[i].ctx) fail(__LINE__, "CU_POINTER_ATTRIBUTE_CONTEXT of case", (long)i, -1);
    if (type != cases[i].type) fail(__LINE__, "CU_POINTER_ATTRIBUTE_MEMORY_TYPE", type, cases[i].type);
    if (managed != cases[i].managed) fail(__LINE__, "CU_POINTER_ATTRIBUTE_IS_MANAGED", managed, cases[i].managed);
    if (ordinal != cases[i].ordinal) fail(__LINE__, "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL", ordinal, cases[i].ordinal);
    unsigned one = 0;
    EXPECT_RC(cuPointerGetAttribute(&one, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, cases[i].p),
              cases[i].type ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
  }
  EXPECT(stats().pointer_queries == queries + sizeof cases / sizeof cases[0]);
  int bad = 3;  // CU_POINTER_ATTRIBUTE_DEVICE_POINTER: not one the fake knows
  void *bad_data[] = {&bad};
  EXPECT_RC(cuPointerGetAttributes(1, &bad, bad_data, b->dev), CUDA_ERROR_INVALID_VALUE);
}

static void check_host_access(const struct buffers *b) {
  struct access dev_read = {(const void *)b->dev, 0}, dev_write = {(const void *)(b->dev + 100), 1},
                managed_read = {(const void *)b->managed, 0}, managed_write = {(const void *)b->managed, 1},
                pinned_write = {b->pinned, 1};
  expect_child_signal(__LINE__, touch, &dev_read, SIGSEGV, "host read of device memory");
  expect_child_signal(__LINE__, touch, &dev_write, SIGSEGV, "host write of device memory");
  expect_child_signal(__LINE__, touch, &managed_read, SIGSEGV, "host read of managed memory");
  expect_child_signal(__LINE__, touch, &managed_write, SIGSEGV, "host write of managed memory");
  expect_child_ok(__LINE__, touch, &pinned_write, "host write of pinned memory");
  EXPECT(fakecuda_shadow((const void *)(b->dev + 10)) != NULL);
  EXPECT(fakecuda_shadow((const void *)b->managed) != NULL);
  EXPECT(fakecuda_shadow(b->pinned) == NULL);
  EXPECT(fakecuda_shadow(b->heap) == NULL);
}

static void check_copies(const struct buffers *b) {
  size_t n = b->bytes;
  CUstream stream = NULL, blocking = NULL;
  unsigned char *pinned = b->pinned;
  const unsigned char *shadow = fakecuda_shadow((const void *)b->dev);
  for (size_t i = 0; i < n; i++) b->heap[i] = (char)(i * 7 + 1);
  EXPECT_RC(cuMemcpyHtoD_v2(b->dev, b->heap, n), CUDA_SUCCESS);
  EXPECT(memcmp(shadow, b->heap, n) == 0);

  // Device to pinned host, deferred until the stream is synchronized.
  EXPECT_RC(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  memset(pinned, 0, n);
  struct fakecuda_stats before = stats();
  EXPECT_RC(cuMemcpyDtoHAsync_v2(pinned, b->dev, n, stream), CUDA_SUCCESS);
  EXPECT(pinned[0] == 0 && pinned[n - 1] == 0);
  EXPECT_RC(cuStreamQuery(stream), CUDA_ERROR_NOT_READY);
  struct fakecuda_stats queued = stats();
  EXPECT(queued.pending_copies == 1 && queued.async_dtoh == before.async_dtoh + 1 &&
         queued.async_bytes_dtoh == before.async_bytes_dtoh + n && queued.async_unpinned == before.async_unpinned);
  EXPECT_RC(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT(memcmp(pinned, b->heap, n) == 0);
  EXPECT_RC(cuStreamQuery(stream), CUDA_SUCCESS);

  // In stream order: pinned -> device, then device -> heap (pageable: counted as unpinned).
  memset(pinned, 0xab, n);
  memset(b->heap, 0, n);
  before = stats();
  EXPECT_RC(cuMemcpyAsync(b->dev, (CUdeviceptr)pinned, n, stream), CUDA_SUCCESS);
  EXPECT_RC(cuMemcpyAsync((CUdeviceptr)b->heap, b->dev, n, stream), CUDA_SUCCESS);
  EXPECT(shadow[0] != 0xab && b->heap[0] == 0);
  struct fakecuda_stats after = stats();
  EXPECT(after.async_htod == before.async_htod + 1 && after.async_dtoh == before.async_dtoh + 1 &&
         after.async_unpinned == before.async_unpinned + 1);
  EXPECT_RC(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT(memcmp(b->heap, pinned, n) == 0);

  // The legacy stream (NULL) waits for earlier work of blocking streams, and a synchronous copy
  // for both; work on the non-blocking stream stays queued.
  EXPECT_RC(cuStreamCreate(&blocking, 0), CUDA_SUCCESS);
  memset(pinned, 0x11, n);
  EXPECT_RC(cuMemcpyHtoDAsync_v2(b->dev, pinned, n, blocking), CUDA_SUCCESS);
  EXPECT_RC(cuMemcpyDtoHAsync_v2(b->heap, b->dev, n, stream), CUDA_SUCCESS);
  unsigned char first = 0;
  EXPECT_RC(cuMemcpyDtoH_v2(&first, b->dev, 1), CUDA_SUCCESS);
  EXPECT(first == 0x11 && (unsigned char)b->heap[0] == 0xab);
  EXPECT_RC(cuStreamQuery(blocking), CUDA_SUCCESS);
  EXPECT_RC(cuStreamQuery(stream), CUDA_ERROR_NOT_READY);
  EXPECT_RC(cuStreamDestroy_v2(stream), CUDA_SUCCESS);  // performs what it had queued
  EXPECT((unsigned char)b->heap[0] == 0x11);
  EXPECT_RC(cuStreamSynchronize(stream), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_RC(cuStreamDestroy_v2(blocking), CUDA_SUCCESS);

  // Ranges must lie inside one allocation; the directions of the typed copies must hold.
  EXPECT_RC(cuMemcpyDtoH_v2(b->heap, b->dev + n - 8, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC(cuMemcpyDtoH_v2(b->heap, b->dev + n - 8, 8), CUDA_SUCCESS);
  EXPECT_RC(cuMemcpyHtoD_v2(b->dev, (const void *)b->managed, 8), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC(cuMemcpyDtoH_v2(pinned, (CUdeviceptr)b->heap, 8), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC(cuMemcpy(b->managed, b->dev, n), CUDA_SUCCESS);  // device to device
  EXPECT(memcmp(fakecuda_shadow((const void *)b->managed), shadow, n) == 0);

  // A stream is used in its own context only.
  CUcontext other = NULL, popped = NULL;
  EXPECT_RC(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  EXPECT_RC(cuCtxCreate_v2(&other, 0, 0), CUDA_SUCCESS);
  EXPECT_RC(cuMemcpyDtoHAsync_v2(pinned, b->dev, n, stream), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_RC(cuCtxPopCurrent_v2(&popped), CUDA_SUCCESS);
  EXPECT(popped == other);
  EXPECT_RC(cuCtxDestroy_v2(other), CUDA_SUCCESS);
  EXPECT_RC(cuCtxPushCurrent_v2(other), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_RC(cuStreamDestroy_v2(stream), CUDA_SUCCESS);

  expect_child_signal(__LINE__, free_pending, &b->dev, SIGABRT, "cuMemFreeHost with a queued copy");
}

static void check_use_after_free(struct buffers *b) {
  EXPECT_RC(cuMemFree_v2(b->dev + 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC(cuMemFree_v2(b->dev), CUDA_SUCCESS);
  EXPECT_RC(cuMemFree_v2(b->dev), CUDA_ERROR_INVALID_VALUE);
  unsigned type = 99;
  int attr = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  void *data[] = {&type};
  EXPECT_RC(cuPointerGetAttributes(1, &attr, data, b->dev), CUDA_SUCCESS);
  EXPECT(type == 0);
  struct access stale = {(const void *)b->dev, 0};
  expect_child_signal(__LINE__, touch, &stale, SIGSEGV, "host read of freed device memory");
  EXPECT_RC(cuMemcpyHtoD_v2(b->dev, b->heap, 8), CUDA_ERROR_INVALID_VALUE);
  // The freed range stays reserved: a new allocation never reuses it.
  CUdeviceptr again = 0;
  EXPECT_RC(cuMemAlloc_v2(&again, b->bytes), CUDA_SUCCESS);
  EXPECT(again != 0 && (again + b->bytes <= b->dev || again >= b->dev + b->bytes));
  EXPECT_RC(cuMemFree_v2(again), CUDA_SUCCESS);
  EXPECT_RC(cuMemFree_v2(b->managed), CUDA_SUCCESS);
  EXPECT_RC(cuMemFreeHost(b->heap), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC(cuMemFreeHost(b->pinned), CUDA_SUCCESS);
  struct access stale_pinned = {b->pinned, 0};
  expect_child_signal(__LINE__, touch, &stale_pinned, SIGSEGV, "host read of freed pinned memory");
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  check_before_init();
  check_injections();  // before this process's cuInit: see the top of the file

  EXPECT_RC(cuInit(0), CUDA_SUCCESS);
  check_no_context();

  struct buffers b = {.bytes = 4096 + 100};  // not a whole number of pages
  EXPECT_RC(cuDevicePrimaryCtxRetain(&b.ctx, 0), CUDA_SUCCESS);
  EXPECT_RC(cuCtxSetCurrent(b.ctx), CUDA_SUCCESS);
  EXPECT_RC(cuMemAlloc_v2(&b.dev, b.bytes), CUDA_SUCCESS);
  EXPECT_RC(cuMemAllocManaged(&b.managed, b.bytes, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  EXPECT_RC(cuMemHostAlloc(&b.pinned, b.bytes, CU_MEMHOSTALLOC_PORTABLE), CUDA_SUCCESS);
  EXPECT_RC(cuMemAlloc_v2(&b.dev, 0), CUDA_ERROR_INVALID_VALUE);
  b.heap = malloc(b.bytes);
  if (b.dev == 0 || b.managed == 0 || b.pinned == NULL || b.heap == NULL) {
    printf("FAIL fake_cuda_selftest.c: could not allocate the test buffers\n");
    return 1;
  }
  // Fresh memory is not zeros: see fake_cuda.c.
  EXPECT(*(const unsigned char *)fakecuda_shadow((const void *)(b.dev + b.bytes - 1)) == 0xff);
  EXPECT(*(const unsigned char *)fakecuda_shadow((const void *)b.managed) == 0xff);
  EXPECT(*(const unsigned char *)b.pinned == 0xff);
  struct fakecuda_stats s = stats();
  EXPECT(s.live_device_allocs == 2 && s.live_host_allocs == 1 && s.host_allocs == 1 && s.host_alloc_bytes == b.bytes);

  check_attributes(&b);
  check_host_access(&b);
  check_copies(&b);

  struct thread_arg arg = {b.ctx, b.dev};
  pthread_t thread;
  if (pthread_create(&thread, NULL, other_thread, &arg) != 0 || pthread_join(thread, NULL) != 0)
    fail(__LINE__, "pthread_create/join", 1, 0);

  check_use_after_free(&b);
  s = stats();
  EXPECT(s.live_device_allocs == 0 && s.live_host_allocs == 0 && s.live_streams == 0 && s.pending_copies == 0);
  EXPECT_RC(cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS);
  EXPECT_RC(cuStreamSynchronize(NULL), CUDA_ERROR_INVALID_CONTEXT);  // the released context is current
  EXPECT_RC(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
  free(b.heap);

  if (g_failures) {
    printf("FAIL fake_cuda: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("PASS fake_cuda\n");
  return 0;
}
