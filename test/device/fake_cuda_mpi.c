// SPDX-License-Identifier: BSD-3-Clause
// A fake CUDA-aware MPI for tests: preloaded after the optireduce library, it stands between the
// library and Open MPI's PMPI_Allreduce / PMPI_Iallreduce and hands MPI the host alias of any
// buffer in the fake driver's device memory (fake_cuda.c), as a CUDA-aware MPI reads and writes
// device buffers itself. So a device buffer the library passes through to MPI works, and one it
// touches on its own faults. An MPI that is not CUDA-aware would fault on it too: tests that want
// that leave this library out.
//
// The fake driver is looked up only once the process has loaded it, never loaded from here:
// whether libcuda.so.1 is in the process is what the library under test decides on, and this
// shim must not change it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*shadow_fn)(const void *);
typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*iallreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *);

static _Atomic(shadow_fn) g_shadow;

// Found lazily and never cached as absent: the program may load the driver after its first call.
static shadow_fn find_shadow(void) {
  shadow_fn fn = atomic_load(&g_shadow);
  if (fn != NULL) return fn;
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (handle == NULL) return NULL;
  // A real driver has no such symbol: then there is nothing to translate.
  void *sym = dlsym(handle, "fakecuda_shadow");
  dlclose(handle);  // drops only the reference RTLD_NOLOAD took
  if (sym == NULL) return NULL;
  // POSIX guarantees data and function pointers convert; ISO C does not, hence the copy.
  memcpy(&fn, &sym, sizeof fn);
  atomic_store(&g_shadow, fn);
  return fn;
}

// The MPI's own function: the next definition after this library in the lookup order.
static void next_symbol(const char *name, void *fn, size_t size) {
  void *sym = dlsym(RTLD_NEXT, name);
  if (sym == NULL) {
    fprintf(stderr, "fake_cuda_mpi: no %s after this library: %s\n", name, dlerror());
    abort();
  }
  memcpy(fn, &sym, size);
}

static const void *translate(const void *buf) {
  if (buf == MPI_IN_PLACE || buf == NULL) return buf;
  shadow_fn shadow = find_shadow();
  if (shadow == NULL) return buf;
  void *alias = shadow(buf);
  return alias != NULL ? alias : buf;
}

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  static _Atomic(allreduce_fn) next;
  allreduce_fn fn = atomic_load(&next);
  if (fn == NULL) {
    next_symbol("PMPI_Allreduce", &fn, sizeof fn);
    atomic_store(&next, fn);
  }
  return fn(translate(sendbuf), (void *)translate(recvbuf), count, datatype, op, comm);
}

int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request *request) {
  static _Atomic(iallreduce_fn) next;
  iallreduce_fn fn = atomic_load(&next);
  if (fn == NULL) {
    next_symbol("PMPI_Iallreduce", &fn, sizeof fn);
    atomic_store(&next, fn);
  }
  return fn(translate(sendbuf), (void *)translate(recvbuf), count, datatype, op, comm, request);
}
