// SPDX-License-Identifier: BSD-3-Clause
// A fake CUDA driver (libcuda.so.1) for testing the library's device-buffer path on machines
// without a GPU. It must be at least as strict as a real driver wherever the library could go
// wrong, because a test that passes here stands in for a run on a GPU:
//
// - Device memory (cuMemAlloc_v2) is a memfd mapped twice: the address handed out is PROT_NONE,
//   so any host load or store through it, by the library or by anyone, dies with SIGSEGV; only
//   the fake's copies (and fakecuda_shadow, for test checks and the fake CUDA-aware MPI) use the
//   second, read-write mapping. The handed-out mapping is never made accessible, not even during
//   a copy, so no other thread can slip through while one runs.
// - Managed memory (cuMemAllocManaged) is made the same way. A GPU would let the host touch it;
//   here it is device memory like any other, because the library must never touch a buffer the
//   driver calls device memory, managed or not.
// - Asynchronous copies are only queued; cuStreamSynchronize performs them, in stream order. A
//   caller that reads a copy's destination, reuses its source or frees either before it has
//   synchronized sees stale data (as it may on a GPU) or is stopped: freeing memory that a
//   queued copy still uses aborts the process with a message (a real driver would synchronize
//   implicitly, which hides a library that frees its staging too early). cuStreamQuery reports
//   CUDA_ERROR_NOT_READY for as long as work is queued, because it never runs any.
// - Freed device and pinned memory stays reserved as PROT_NONE, so a use after free faults
//   instead of reaching whatever the address would be reused for. Allocations are page-aligned
//   and followed by an inaccessible guard page, and a copy must lie inside the bytes asked for.
// - New device, managed and pinned memory is filled with 0xff bytes (NaN as floats), not the
//   zeros fresh pages would give, so a result computed from memory nobody copied into shows.
// - An asynchronous copy needs the context of its stream to be current, so a library that
//   pushes one context and copies on a stream of another is caught.
// Everything the driver holds is behind one mutex, so the library may call from any thread; the
// context stack is per thread, as in the real driver (a new thread has none).
//
// Test knobs, read once at the first cuInit: FAKECUDA_FAIL_COPY_AT=N fails the N-th copy call
// of the process (sync or async, counted from 1 after cuInit, whatever their outcome) with
// CUDA_ERROR_ILLEGAL_ADDRESS; FAKECUDA_FAIL_HOSTALLOC=1 fails every pinned host allocation with
// CUDA_ERROR_OUT_OF_MEMORY. With FAKECUDA_FAULT_RANK=r they apply only in the process whose
// OMPI_COMM_WORLD_RANK (or PMI_RANK) is r.
#define _GNU_SOURCE
#include "fake_cuda.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAKECUDA_API __attribute__((visibility("default")))

// The driver's legacy default stream, under the handle cuda.h names CU_STREAM_LEGACY; NULL means
// the same. The per-thread default stream (0x2) is not modelled and is refused.
#define FAKE_STREAM_LEGACY ((CUstream)(uintptr_t)0x1)

enum alloc_kind { ALLOC_DEVICE, ALLOC_MANAGED, ALLOC_PINNED };

struct alloc {
  struct alloc *next;
  enum alloc_kind kind;
  uintptr_t base;          // the address the program got
  size_t bytes;            // what it asked for: copies and lookups stop here
  size_t mapped;           // bytes rounded up to pages; a guard page follows
  unsigned char *shadow;   // the read-write alias (device and managed); base for pinned memory
  CUcontext ctx;
};

struct CUctx_st {
  struct CUctx_st *next;   // every context ever made: handles stay valid to compare against
  int primary;
  int live;                // created and not destroyed; for the primary context, retained
  unsigned retains;
  struct CUstream_st *legacy;
  int legacy_marked;       // scratch of drain(): see there
  int blocking_marked;
};

struct CUstream_st {
  struct CUstream_st *next;  // every stream ever made, for the same reason as contexts
  CUcontext ctx;
  int legacy;
  int non_blocking;
  int live;
  int marked;              // scratch of drain()
  size_t pending;
};

struct op {
  struct op *prev, *next;
  struct CUstream_st *stream;
  unsigned char *dst;
  const unsigned char *src;
  size_t bytes;
  struct alloc *dst_alloc, *src_alloc;  // NULL for memory the driver does not know
  int needed;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_initialized;
static struct alloc *g_allocs;
static struct CUctx_st *g_contexts;
static struct CUctx_st *g_primary;
static struct CUstream_st *g_streams;
static struct op *g_ops_head, *g_ops_tail;  // every queued copy, in the order it was queued
static struct fakecuda_stats g_stats;
static unsigned long g_fail_copy_at;        // 0: no injected copy failure
static int g_fail_hostalloc;
static unsigned long g_copy_calls;

#define CTX_STACK_MAX 64
static _Thread_local CUcontext tls_stack[CTX_STACK_MAX];
static _Thread_local unsigned tls_depth;

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static int is_initialized(void) { return atomic_load(&g_initialized) != 0; }

// --- test knobs ----------------------------------------------------------------------------

static long env_long(const char *name, const char *value) {
  char *end = NULL;
  errno = 0;
  long v = strtol(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || v < 0) {
    // A mistyped knob would silently test nothing.
    fprintf(stderr, "fake_cuda: %s='%s' is not a non-negative integer\n", name, value);
    abort();
  }
  return v;
}

static int fault_rank_selected(void) {
  const char *want = getenv("FAKECUDA_FAULT_RANK");
  if (want == NULL || *want == '\0') return 1;
  const char *rank = getenv("OMPI_COMM_WORLD_RANK");
  if (rank == NULL) rank = getenv("PMI_RANK");
  if (rank == NULL) return 0;
  return env_long("FAKECUDA_FAULT_RANK", want) == env_long("OMPI_COMM_WORLD_RANK/PMI_RANK", rank);
}

static void read_knobs(void) {
  if (!fault_rank_selected()) return;
  const char *at = getenv("FAKECUDA_FAIL_COPY_AT");
  if (at != NULL && *at != '\0') g_fail_copy_at = (unsigned long)env_long("FAKECUDA_FAIL_COPY_AT", at);
  const char *host = getenv("FAKECUDA_FAIL_HOSTALLOC");
  g_fail_hostalloc = host != NULL && strcmp(host, "1") == 0;
}

// --- contexts (callers hold g_lock unless noted) -------------------------------------------

static int ctx_valid(CUcontext c) {
  for (struct CUctx_st *it = g_contexts; it != NULL; it = it->next)
    if (it == c) return it->live;
  return 0;
}

static struct CUstream_st *stream_new(CUcontext ctx, int legacy, int non_blocking) {
  struct CUstream_st *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->ctx = ctx;
  s->legacy = legacy;
  s->non_blocking = non_blocking;
  s->live = 1;
  s->next = g_streams;
  g_streams = s;
  return s;
}

static struct CUctx_st *ctx_new(int primary) {
  struct CUctx_st *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->primary = primary;
  c->next = g_contexts;
  g_contexts = c;
  c->legacy = stream_new(c, 1, 0);
  if (c->legacy == NULL) return NULL;  // c stays listed, never live: harmless
  return c;
}

// The calling thread's current context if it is still usable. No lock needed for the stack.
static CUcontext tls_current(void) { return tls_depth ? tls_stack[tls_depth - 1] : NULL; }

static CUresult need_current(CUcontext *out) {
  CUcontext c = tls_current();
  if (c == NULL || !ctx_valid(c)) return CUDA_ERROR_INVALID_CONTEXT;
  *out = c;
  return CUDA_SUCCESS;
}

// --- queued copies -------------------------------------------------------------------------

static void mark_stream(struct CUstream_st *s) {
  s->marked = 1;
  if (s->legacy)
    s->ctx->legacy_marked = 1;
  else if (!s->non_blocking)
    s->ctx->blocking_marked = 1;
}

// Performs the queued work that stream s must wait for, in queue order: its own copies and,
// transitively, what they are ordered after by the legacy stream's rules (legacy-stream work
// waits for earlier work of the context's blocking streams, and theirs for earlier legacy
// work; non-blocking streams wait for nothing else). With after_all, s is treated as if one more
// copy had just been queued on it: what a synchronous copy on the legacy stream waits for.
static void drain(struct CUstream_st *s, int after_all) {
  if (after_all) mark_stream(s);
  for (struct op *o = g_ops_tail; o != NULL; o = o->prev) {
    struct CUstream_st *t = o->stream;
    int need = t == s || t->marked ||
               (t->legacy ? t->ctx->blocking_marked : (!t->non_blocking && t->ctx->legacy_marked));
    if (need) {
      o->needed = 1;
      mark_stream(t);
    }
  }
  struct op *next;
  for (struct op *o = g_ops_head; o != NULL; o = next) {
    next = o->next;
    if (!o->needed) continue;
    if (o->bytes) memmove(o->dst, o->src, o->bytes);
    if (o->prev) o->prev->next = o->next; else g_ops_head = o->next;
    if (o->next) o->next->prev = o->prev; else g_ops_tail = o->prev;
    o->stream->pending--;
    free(o);
  }
  for (struct CUstream_st *it = g_streams; it != NULL; it = it->next) it->marked = 0;
  for (struct CUctx_st *it = g_contexts; it != NULL; it = it->next) it->legacy_marked = it->blocking_marked = 0;
}

static void die_if_pending(const struct alloc *a, const char *call) {
  for (const struct op *o = g_ops_head; o != NULL; o = o->next) {
    if (o->dst_alloc == a || o->src_alloc == a) {
      fprintf(stderr, "fake_cuda: %s frees %p while a queued copy (%p -> %p, %zu bytes) still uses it: "
              "synchronize the stream first\n", call, (void *)a->base, (const void *)o->src,
              (void *)o->dst, o->bytes);
      abort();
    }
  }
}

// --- memory --------------------------------------------------------------------------------

static struct alloc *find_alloc(uintptr_t p) {
  for (struct alloc *a = g_allocs; a != NULL; a = a->next)
    if (p >= a->base && p - a->base < a->bytes) return a;
  return NULL;
}

// Whether [p, p + n) touches any allocation's reserved range (guard page included).
static int overlaps_any(uintptr_t p, size_t n) {
  for (struct alloc *a = g_allocs; a != NULL; a = a->next) {
    uintptr_t end = a->base + a->mapped + page_size();
    if (p < end && (p >= a->base || a->base - p < n)) return 1;
  }
  return 0;
}

static int round_pages(size_t bytes, size_t *out) {
  size_t page = page_size();
  if (bytes == 0 || bytes > SIZE_MAX - 2 * page) return 0;
  *out = (bytes + page - 1) / page * page;
  return 1;
}

// Address space of mapped + a guard page, inaccessible; the caller maps over the first part.
static void *reserve(size_t mapped) {
  void *p = mmap(NULL, mapped + page_size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

// Never handing the range back keeps a stale pointer into it faulting for the life of the
// process (adjacent PROT_NONE anonymous ranges merge, so this costs little).
static void quarantine(uintptr_t base, size_t mapped) {
  if (mmap((void *)base, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) ==
      MAP_FAILED)
    munmap((void *)base, mapped);
}

// Fills in a new allocation and puts it in the table (the caller holds the lock).
static void record_alloc(struct alloc *a, enum alloc_kind kind, void *base, size_t bytes, size_t mapped,
                         void *shadow, CUcontext ctx) {
  a->kind = kind;
  a->base = (uintptr_t)base;
  a->bytes = bytes;
  a->mapped = mapped;
  a->shadow = shadow;
  a->ctx = ctx;
  a->next = g_allocs;
  g_allocs = a;
}

static CUresult map_device(size_t bytes, enum alloc_kind kind, CUcontext ctx, CUdeviceptr *out) {
  size_t mapped;
  if (!round_pages(bytes, &mapped)) return bytes ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
  struct alloc *a = calloc(1, sizeof *a);
  int fd = memfd_create("fakecuda-device", MFD_CLOEXEC);
  void *dev = reserve(mapped), *shadow = reserve(mapped);
  int ok = a != NULL && fd >= 0 && dev != NULL && shadow != NULL && ftruncate(fd, (off_t)mapped) == 0 &&
           mmap(dev, mapped, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED &&
           mmap(shadow, mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
  if (fd >= 0) close(fd);  // the mappings keep the memory alive
  if (ok) memset(shadow, 0xff, mapped);
  if (!ok) {
    if (dev != NULL) munmap(dev, mapped + page_size());
    if (shadow != NULL) munmap(shadow, mapped + page_size());
    free(a);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  record_alloc(a, kind, dev, bytes, mapped, shadow, ctx);
  g_stats.live_device_allocs++;
  *out = a->base;
  return CUDA_SUCCESS;
}

static CUresult map_pinned(size_t bytes, CUcontext ctx, void **out) {
  size_t mapped;
  if (!round_pages(bytes, &mapped)) return bytes ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
  struct alloc *a = calloc(1, sizeof *a);
  void *p = reserve(mapped);
  if (a == NULL || p == NULL || mprotect(p, mapped, PROT_READ | PROT_WRITE) != 0) {
    if (p != NULL) munmap(p, mapped + page_size());
    free(a);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  memset(p, 0xff, mapped);
  record_alloc(a, ALLOC_PINNED, p, bytes, mapped, p, ctx);
  g_stats.live_host_allocs++;
  g_stats.host_allocs++;
  g_stats.host_alloc_bytes += bytes;
  *out = p;
  return CUDA_SUCCESS;
}

static void unmap_alloc(struct alloc *a) {
  for (struct alloc **it = &g_allocs; *it != NULL; it = &(*it)->next) {
    if (*it == a) {
      *it = a->next;
      break;
    }
  }
  quarantine(a->base, a->mapped);
  if (a->kind == ALLOC_PINNED) {
    g_stats.live_host_allocs--;
  } else {
    munmap(a->shadow, a->mapped + page_size());
    g_stats.live_device_allocs--;
  }
  free(a);
}

// What a destroyed context (or a primary context released for the last time) takes with it:
// its queued work is finished first, as the driver does, then its streams and memory go.
static void ctx_teardown(CUcontext c) {
  for (struct CUstream_st *s = g_streams; s != NULL; s = s->next)
    if (s->ctx == c && s->live && s->pending) drain(s, 0);
  for (struct CUstream_st *s = g_streams; s != NULL; s = s->next) {
    if (s->ctx == c && s->live && !s->legacy) {
      s->live = 0;
      g_stats.live_streams--;
    }
  }
  struct alloc *next;
  for (struct alloc *a = g_allocs; a != NULL; a = next) {
    next = a->next;
    if (a->ctx == c) {
      die_if_pending(a, "destroying its context");  // a copy queued in another context
      unmap_alloc(a);
    }
  }
}

// --- entry points: initialization and devices -----------------------------------------------

FAKECUDA_API CUresult cuInit(unsigned flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  if (!is_initialized()) {
    read_knobs();
    atomic_store(&g_initialized, 1);
  }
  pthread_mutex_unlock(&g_lock);
  return CUDA_SUCCESS;
}

FAKECUDA_API CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (device == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

FAKECUDA_API CUresult cuDeviceGetCount(int *count) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (count == NULL) return CUDA_ERROR_INVALID_VALUE;
  *count = 1;
  return CUDA_SUCCESS;
}

// --- entry points: contexts ------------------------------------------------------------------

FAKECUDA_API CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned flags, CUdevice device) {
  (void)flags;
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  if (tls_depth == CTX_STACK_MAX) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&g_lock);
  struct CUctx_st *c = ctx_new(0);
  if (c != NULL) c->live = 1;
  pthread_mutex_unlock(&g_lock);
  if (c == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  tls_stack[tls_depth++] = c;
  *ctx = c;
  return CUDA_SUCCESS;
}

FAKECUDA_API CUresult cuCtxDestroy_v2(CUcontext ctx) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  CUresult r = CUDA_ERROR_INVALID_CONTEXT;
  if (ctx != NULL && ctx_valid(ctx) && !ctx->primary) {
    ctx_teardown(ctx);
    ctx->live = 0;
    r = CUDA_SUCCESS;
  }
  pthread_mutex_unlock(&g_lock);
  // Only the calling thread's top entry is popped, as documented for the driver: other threads
  // (and deeper entries) keep a dead handle, which every call then refuses.
  if (r == CUDA_SUCCESS && tls_current() == ctx) tls_depth--;
  return r;
}

FAKECUDA_API CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx == NULL) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  int valid = ctx_valid(ctx);
  pthread_mutex_unlock(&g_lock);
  if (!valid) return CUDA_ERROR_INVALID_CONTEXT;
  if (tls_depth == CTX_STACK_MAX) return CUDA_ERROR_OUT_OF_MEMORY;
  tls_stack[tls_depth++] = ctx;
  return CUDA_SUCCESS;
}

FAKECUDA_API CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (tls_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  CUcontext top = tls_stack[--tls_depth];
  if (ctx != NULL) *ctx = top;
  return CUDA_SUCCESS;
}

FAKECUDA_API CUresult cuCtxGetCurrent(CUcontext *ctx) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx == NULL) return CUDA_ERROR_INVALID_VALUE;
  *ctx = tls_current();
  return CUDA_SUCCESS;
}

FAKECUDA_API CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx == NULL) {
    if (tls_depth) tls_depth--;
    return CUDA_SUCCESS;
  }
  pthread_mutex_lock(&g_lock);
  int valid = ctx_valid(ctx);
  pthread_mutex_unlock(&g_lock);
  if (!valid) return CUDA_ERROR_INVALID_CONTEXT;
  if (tls_depth == 0) tls_depth = 1;
  tls_stack[tls_depth - 1] = ctx;
  return CUDA_SUCCESS;
}

FAKECUDA_API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice device) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&g_lock);
  if (g_primary == NULL) g_primary = ctx_new(1);
  CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
  if (g_primary != NULL && g_primary->legacy != NULL) {
    g_primary->retains++;
    g_primary->live = 1;
    *ctx = g_primary;
    r = CUDA_SUCCESS;
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

FAKECUDA_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&g_lock);
  CUresult r = CUDA_ERROR_INVALID_CONTEXT;
  if (g_primary != NULL && g_primary->retains > 0) {
    if (--g_primary->retains == 0) {
      ctx_teardown(g_primary);
      g_primary->live = 0;
    }
    r = CUDA_SUCCESS;
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

// --- entry points: memory --------------------------------------------------------------------

static CUresult alloc_device(CUdeviceptr *dptr, size_t bytes, enum alloc_kind kind) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (dptr == NULL) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  CUcontext ctx;
  CUresult r = need_current(&ctx);
  if (r == CUDA_SUCCESS) r = map_device(bytes, kind, ctx, dptr);
  pthread_mutex_unlock(&g_lock);
  return r;
}

FAKECUDA_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes) {
  return alloc_device(dptr, bytes, ALLOC_DEVICE);
}

FAKECUDA_API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned flags) {
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
    return is_initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return alloc_device(dptr, bytes, ALLOC_MANAGED);
}

FAKECUDA_API CUresult cuMemFree_v2(CUdeviceptr dptr) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  CUcontext ctx;
  CUresult r = need_current(&ctx);
  if (r == CUDA_SUCCESS) {
    struct alloc *a = find_alloc(dptr);
    if (a == NULL || a->base != dptr || a->kind == ALLOC_PINNED) {
      r = CUDA_ERROR_INVALID_VALUE;
    } else {
      die_if_pending(a, "cuMemFree_v2");
      unmap_alloc(a);
    }
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

static CUresult alloc_pinned(void **p, size_t bytes) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (p == NULL) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  CUcontext ctx;
  CUresult r = need_current(&ctx);
  if (r == CUDA_SUCCESS) r = g_fail_hostalloc ? CUDA_ERROR_OUT_OF_MEMORY : map_pinned(bytes, ctx, p);
  pthread_mutex_unlock(&g_lock);
  return r;
}

FAKECUDA_API CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags) {
  if (flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))
    return is_initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return alloc_pinned(p, bytes);
}

FAKECUDA_API CUresult cuMemAllocHost_v2(void **p, size_t bytes) { return alloc_pinned(p, bytes); }

FAKECUDA_API CUresult cuMemFreeHost(void *p) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  CUcontext ctx;
  CUresult r = need_current(&ctx);
  if (r == CUDA_SUCCESS) {
    struct alloc *a = find_alloc((uintptr_t)p);
    if (a == NULL || a->base != (uintptr_t)p || a->kind != ALLOC_PINNED) {
      r = CUDA_ERROR_INVALID_VALUE;
    } else {
      die_if_pending(a, "cuMemFreeHost");
      unmap_alloc(a);
    }
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

// --- entry points: pointer attributes --------------------------------------------------------

static int attribute_known(int attribute) {
  return attribute == CU_POINTER_ATTRIBUTE_CONTEXT || attribute == CU_POINTER_ATTRIBUTE_MEMORY_TYPE ||
         attribute == CU_POINTER_ATTRIBUTE_IS_MANAGED || attribute == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL;
}

// a == NULL: memory the driver does not know, described by the defaults cuPointerGetAttributes
// documents.
static void attribute_value(const struct alloc *a, int attribute, void *data) {
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_CONTEXT:
    *(CUcontext *)data = a ? a->ctx : NULL;
    break;
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    *(unsigned *)data = a == NULL ? 0u : a->kind == ALLOC_PINNED ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    break;
  case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    *(unsigned *)data = a != NULL && a->kind == ALLOC_MANAGED;
    break;
  default:  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    *(int *)data = a ? 0 : -2;
    break;
  }
}

FAKECUDA_API CUresult cuPointerGetAttributes(unsigned n, int *attributes, void **data, CUdeviceptr ptr) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  g_stats.pointer_queries++;
  CUresult r = CUDA_SUCCESS;
  if (n != 0 && (attributes == NULL || data == NULL)) r = CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; r == CUDA_SUCCESS && i < n; i++)
    if (!attribute_known(attributes[i]) || data[i] == NULL) r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS) {
    const struct alloc *a = find_alloc(ptr);
    for (unsigned i = 0; i < n; i++) attribute_value(a, attributes[i], data[i]);
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

FAKECUDA_API CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (data == NULL || !attribute_known(attribute)) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  const struct alloc *a = find_alloc(ptr);
  if (a != NULL) attribute_value(a, attribute, data);
  pthread_mutex_unlock(&g_lock);
  return a != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// --- entry points: streams -------------------------------------------------------------------

// The stream a handle names; NULL and CU_STREAM_LEGACY are the legacy stream of the current
// context, which must then exist.
static CUresult lookup_stream(CUstream handle, struct CUstream_st **out) {
  if (handle == NULL || handle == FAKE_STREAM_LEGACY) {
    CUcontext ctx;
    CUresult r = need_current(&ctx);
    if (r == CUDA_SUCCESS) *out = ctx->legacy;
    return r;
  }
  for (struct CUstream_st *s = g_streams; s != NULL; s = s->next) {
    if (s == handle && !s->legacy) {
      if (!s->live) break;
      *out = s;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_HANDLE;
}

FAKECUDA_API CUresult cuStreamCreate(CUstream *stream, unsigned flags) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (stream == NULL || (flags & ~CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  CUcontext ctx;
  CUresult r = need_current(&ctx);
  if (r == CUDA_SUCCESS) {
    struct CUstream_st *s = stream_new(ctx, 0, (flags & CU_STREAM_NON_BLOCKING) != 0);
    if (s == NULL) {
      r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      g_stats.live_streams++;
      *stream = s;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

FAKECUDA_API CUresult cuStreamDestroy_v2(CUstream stream) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (stream == NULL || stream == FAKE_STREAM_LEGACY) return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&g_lock);
  struct CUstream_st *s;
  CUresult r = lookup_stream(stream, &s);
  if (r == CUDA_SUCCESS) {
    // The driver lets queued work finish after the handle is gone.
    drain(s, 0);
    s->live = 0;
    g_stats.live_streams--;
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

FAKECUDA_API CUresult cuStreamSynchronize(CUstream stream) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  struct CUstream_st *s;
  CUresult r = lookup_stream(stream, &s);
  if (r == CUDA_SUCCESS) {
    drain(s, 0);
    g_stats.stream_syncs++;
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

FAKECUDA_API CUresult cuStreamQuery(CUstream stream) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  struct CUstream_st *s;
  CUresult r = lookup_stream(stream, &s);
  if (r == CUDA_SUCCESS && s->pending) r = CUDA_ERROR_NOT_READY;
  pthread_mutex_unlock(&g_lock);
  return r;
}

// --- entry points: copies --------------------------------------------------------------------

// One end of a copy: where the fake reads or writes it, and what it is.
struct side {
  unsigned char *addr;
  struct alloc *alloc;
  int device;
  int pinned;
};

static CUresult resolve(uintptr_t p, size_t n, struct side *s) {
  struct alloc *a = find_alloc(p);
  if (a != NULL) {
    if (n > a->bytes - (p - a->base)) return CUDA_ERROR_INVALID_VALUE;
    s->alloc = a;
    s->device = a->kind != ALLOC_PINNED;
    s->pinned = a->kind == ALLOC_PINNED;
    s->addr = a->shadow + (p - a->base);
    return CUDA_SUCCESS;
  }
  // Host memory the driver does not know (unified addressing accepts it), which must not run
  // into any allocation or guard page either.
  if (n != 0 && (p == 0 || overlaps_any(p, n) || p > UINTPTR_MAX - n)) return CUDA_ERROR_INVALID_VALUE;
  s->alloc = NULL;
  s->device = 0;
  s->pinned = 0;
  s->addr = (unsigned char *)p;
  return CUDA_SUCCESS;
}

enum direction { DIR_ANY, DIR_HTOD, DIR_DTOH };

static CUresult copy(uintptr_t dst, uintptr_t src, size_t bytes, enum direction dir, int async, CUstream stream) {
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  int inject = ++g_copy_calls == g_fail_copy_at;
  CUcontext ctx;
  struct CUstream_st *s = NULL;
  struct side d, f;
  CUresult r = need_current(&ctx);
  if (r == CUDA_SUCCESS && async) {
    r = lookup_stream(stream, &s);
    if (r == CUDA_SUCCESS && s->ctx != ctx) r = CUDA_ERROR_INVALID_CONTEXT;
  }
  if (r == CUDA_SUCCESS) r = resolve(dst, bytes, &d);
  if (r == CUDA_SUCCESS) r = resolve(src, bytes, &f);
  if (r == CUDA_SUCCESS && ((dir == DIR_HTOD && (!d.device || f.device)) || (dir == DIR_DTOH && (!f.device || d.device))))
    r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS && inject) {
    g_stats.failed_copies++;
    r = CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  if (r == CUDA_SUCCESS && !async) {
    drain(ctx->legacy, 1);
    if (bytes) memmove(d.addr, f.addr, bytes);
    g_stats.sync_copies++;
  } else if (r == CUDA_SUCCESS) {
    struct op *o = calloc(1, sizeof *o);
    if (o == NULL) {
      r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      o->stream = s;
      o->dst = d.addr;
      o->src = f.addr;
      o->bytes = bytes;
      o->dst_alloc = d.alloc;
      o->src_alloc = f.alloc;
      o->prev = g_ops_tail;
      if (g_ops_tail) g_ops_tail->next = o; else g_ops_head = o;
      g_ops_tail = o;
      s->pending++;
      if (d.device && f.device) {
        g_stats.async_dtod++;
      } else if (d.device) {
        g_stats.async_htod++;
        g_stats.async_bytes_htod += bytes;
      } else if (f.device) {
        g_stats.async_dtoh++;
        g_stats.async_bytes_dtoh += bytes;
      } else {
        g_stats.async_htoh++;
      }
      if ((!d.device && !d.pinned) || (!f.device && !f.pinned)) g_stats.async_unpinned++;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

FAKECUDA_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return copy(dst, src, bytes, DIR_ANY, 1, stream);
}

FAKECUDA_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) {
  return copy(dst, (uintptr_t)src, bytes, DIR_HTOD, 1, stream);
}

FAKECUDA_API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return copy((uintptr_t)dst, src, bytes, DIR_DTOH, 1, stream);
}

FAKECUDA_API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  return copy(dst, src, bytes, DIR_ANY, 0, NULL);
}

FAKECUDA_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  return copy(dst, (uintptr_t)src, bytes, DIR_HTOD, 0, NULL);
}

FAKECUDA_API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  return copy((uintptr_t)dst, src, bytes, DIR_DTOH, 0, NULL);
}

// --- entry points: errors (like the driver's, usable before cuInit) ---------------------------

static const struct {
  CUresult code;
  const char *name;
  const char *text;
} k_errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
};

static CUresult error_lookup(CUresult error, const char **out, int text) {
  if (out == NULL) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof k_errors / sizeof k_errors[0]; i++) {
    if (k_errors[i].code == error) {
      *out = text ? k_errors[i].text : k_errors[i].name;
      return CUDA_SUCCESS;
    }
  }
  *out = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

FAKECUDA_API CUresult cuGetErrorName(CUresult error, const char **name) { return error_lookup(error, name, 0); }

FAKECUDA_API CUresult cuGetErrorString(CUresult error, const char **text) { return error_lookup(error, text, 1); }

// --- test hooks ------------------------------------------------------------------------------

FAKECUDA_API void fakecuda_get_stats(struct fakecuda_stats *stats) {
  pthread_mutex_lock(&g_lock);
  *stats = g_stats;
  stats->pending_copies = 0;
  for (const struct op *o = g_ops_head; o != NULL; o = o->next) stats->pending_copies++;
  pthread_mutex_unlock(&g_lock);
}

FAKECUDA_API void *fakecuda_shadow(const void *device_ptr) {
  pthread_mutex_lock(&g_lock);
  const struct alloc *a = find_alloc((uintptr_t)device_ptr);
  void *shadow = a != NULL && a->kind != ALLOC_PINNED ? a->shadow + ((uintptr_t)device_ptr - a->base) : NULL;
  pthread_mutex_unlock(&g_lock);
  return shadow;
}
