/* SPDX-License-Identifier: BSD-3-Clause */
/* optireduce public C API.
 *
 * Programs do not need this header: the library works when preloaded into unmodified MPI jobs.
 * It is for programs and tools that want to read what the library did, or switch it off and on
 * for one communicator. The functions are plain C with no MPI types, so a program that was never
 * linked against optireduce can still find them at run time with
 * dlsym(RTLD_DEFAULT, "optireduce_get_stats_sized") when the library is preloaded. */
#ifndef OPTIREDUCE_OPTIREDUCE_H
#define OPTIREDUCE_OPTIREDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "stats_fields.h" /* OPTIREDUCE_STATS_FIELDS: the counters */

#ifdef __cplusplus
extern "C" {
#endif

#define OPTIREDUCE_VERSION_MAJOR 0
#define OPTIREDUCE_VERSION_MINOR 1
#define OPTIREDUCE_VERSION_PATCH 0

/* Process-wide counters since MPI_Init: one field per entry of OPTIREDUCE_STATS_FIELDS, in its
 * order (optireduce/stats_fields.h lists them with what each counts). uint64_t counters only
 * grow; the three double fields are error estimates. New fields are only ever added at the end. */
/* NOLINTBEGIN(bugprone-macro-parentheses): the arguments are member names. */
#define OPTIREDUCE_STATS_U64_FIELD_(name, doc) uint64_t name;
#define OPTIREDUCE_STATS_F64_FIELD_(name, doc) double name;
/* NOLINTEND(bugprone-macro-parentheses) */
typedef struct optireduce_stats {
    OPTIREDUCE_STATS_FIELDS(OPTIREDUCE_STATS_U64_FIELD_, OPTIREDUCE_STATS_F64_FIELD_)
} optireduce_stats_t;
#undef OPTIREDUCE_STATS_U64_FIELD_
#undef OPTIREDUCE_STATS_F64_FIELD_

/* What the last allreduce the engine ran on one communicator did, as this rank saw it. */
typedef struct optireduce_op_report {
    uint64_t ops;              /* engine operations on this communicator so far (0: none yet) */
    uint64_t count;            /* floats of the last one */
    uint64_t entries_expected; /* entries this rank was to receive, both phases, and those of its
                                  own shard it zeroed because a peer missed them (identical
                                  replicas: the hole vote) */
    uint64_t entries_lost;     /* ... that missed their deadline and were estimated, or zeroed */
    double loss;               /* entries_lost / entries_expected, at most 1 */
    /* Estimated relative error ||result - exact|| / ||result|| of this rank's result: 0 when
     * nothing was lost anywhere this rank heard of. An estimate from the loss map and the data's
     * spread across ranks, not a bound: it came within 3 - 6% of the measured error on the
     * emulated cloud (docs/notes/2026-12-02-hadamard-accuracy.md) and is designed to be within a factor of 2. */
    double error_estimate;
    /* The part of error_estimate from this rank's own fills of lost phase-2 chunks: the only
     * part in which ranks' results differ. 0 means this rank filled nothing; the ranks hold the
     * same bits only if every rank reports 0 (a rank cannot see the others' fills). */
    double drift_estimate;
    int hadamard;              /* 1: the randomized Hadamard transform ran */
    int excess;                /* 1: loss > OPTIREDUCE_MAX_LOSS; with OPTIREDUCE_ON_EXCESS_LOSS=error
                                  or exact on any rank (agreed), with warn on this rank */
    int path;                  /* 0 bounded (deadlines), 1 reliable (through the underlying MPI,
                                  OPTIREDUCE_ON_EXCESS_LOSS=exact), 2 exact mode */
} optireduce_op_report_t;

/* "0.1.0" */
const char *optireduce_version(void);

/* The MPI ABI this build of the library was compiled for: "Open MPI" or "MPICH". */
const char *optireduce_mpi_abi(void);

/* Copies the counters into *out: the first min(size, sizeof(optireduce_stats_t)) bytes of the
 * library's struct, nothing past size. Pass sizeof *out: a program compiled against an older
 * header, whose struct is shorter, gets the fields it knows and nothing is written past them; a
 * program compiled against a newer header than the library's gets the library's fields and the
 * rest of its struct left as it was. Returns the size of the library's struct in bytes (compare
 * it with size to tell which fields were filled), or -1 if out is NULL and size is not 0.
 * optireduce_get_stats_sized(NULL, 0) returns the size alone. Safe to call at any time.
 *
 *     optireduce_stats_t s = {0};
 *     int have = optireduce_get_stats_sized(&s, sizeof s);  // -1 on error */
int optireduce_get_stats_sized(optireduce_stats_t *out, size_t size);

/* The call before optireduce_get_stats_sized: copies sizeof(optireduce_stats_t) bytes, the size
 * of this library's struct, into *out. Returns 0, or -1 if out is NULL. Kept for programs
 * already built with it; new code should call optireduce_get_stats_sized, which never writes
 * past what the caller passes. */
int optireduce_get_stats(optireduce_stats_t *out);

/* The fields of optireduce_stats_t as the library has them, for programs that read the struct
 * without this header (Python through ctypes): their number, and for 0 <= i < that number the
 * name of field i and its C type, "uint64_t" or "double", in the order of the struct. Out of
 * range: NULL. Build the struct from these, then read it with optireduce_get_stats_sized. */
int optireduce_stats_field_count(void);
const char *optireduce_stats_field_name(int i);
const char *optireduce_stats_field_type(int i);

/* The report of the last engine operation on a communicator, given by its Fortran handle so
 * that this header needs no MPI types: pass MPI_Comm_c2f(comm) from C, comm.py2f() from mpi4py.
 * Returns 0; -1 if out is NULL, MPI is not initialised, or the engine has not run an operation
 * on that communicator (then *out is zeroed). Safe from any thread. */
int optireduce_last_op(int comm_fortran_handle, optireduce_op_report_t *out);

/* optireduce_last_op with the caller's struct size, as optireduce_get_stats_sized does for the
 * counters: writes the first min(size, sizeof(optireduce_op_report_t)) bytes of the report and
 * nothing past size, so a program built against an older or newer header is safe (fields are
 * only ever appended). Returns the size of the library's struct in bytes; -1 (with those bytes
 * zeroed) in the cases where optireduce_last_op returns -1. optireduce_last_op_sized(h, NULL, 0)
 * returns the size alone. */
int optireduce_last_op_sized(int comm_fortran_handle, optireduce_op_report_t *out, size_t size);

/* Switches the engine on (on != 0) or off (on == 0) for one communicator, given by its Fortran
 * handle like optireduce_last_op. Off: every float SUM MPI_Allreduce / MPI_Iallreduce on it goes
 * to the underlying MPI (counted in fallback_calls); on: the engine takes eligible calls again.
 * The same switch as the communicator's "optireduce" MPI_Info hint (docs/configuration.md,
 * "Per-communicator hints"), and like that hint it is copied by MPI_Comm_dup.
 *
 * Call it like a collective: every rank of the communicator, with the same value, at the same
 * point between two of its allreduce calls. The library cannot check that without a collective
 * of its own; ranks that disagree would run the next call on different paths and hang. Not
 * while another thread has an MPI_Allreduce on the communicator in progress. Engine
 * MPI_Iallreduce requests already started complete as usual.
 *
 * Switching on does not override a communicator that falls back for another reason
 * (OPTIREDUCE_MODE=off, configuration or hints differing across ranks, an invalid hint, a
 * failed setup). Returns the previous value of the switch (1 on, 0 off), so that a library can
 * restore what it found; -1 if MPI is not initialised (or already finalised) or the handle is
 * MPI_COMM_NULL's. Any other handle must be a valid communicator, as for an MPI call.
 *
 *     int was = optireduce_comm_enable(MPI_Comm_c2f(comm), 0);  // exact MPI for this part
 *     MPI_Allreduce(MPI_IN_PLACE, metrics, n, MPI_FLOAT, MPI_SUM, comm);
 *     if (was >= 0) optireduce_comm_enable(MPI_Comm_c2f(comm), was);
 *
 * From mpi4py: pass comm.py2f(). Under LD_PRELOAD, find it with dlsym as the other functions. */
int optireduce_comm_enable(int comm_fortran_handle, int on);

#ifdef __cplusplus
}
#endif

#endif /* OPTIREDUCE_OPTIREDUCE_H */
