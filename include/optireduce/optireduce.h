/* optireduce public C API.
 *
 * Programs do not need this header: the library works when preloaded into unmodified MPI jobs.
 * It is for programs and tools that want to read what the library did, or switch it off and on
 * for one communicator. The functions are plain C with no MPI types, so a program that was never
 * linked against optireduce can still find them at run time with
 * dlsym(RTLD_DEFAULT, "optireduce_get_stats") when the library is preloaded. */
#ifndef OPTIREDUCE_OPTIREDUCE_H
#define OPTIREDUCE_OPTIREDUCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPTIREDUCE_VERSION_MAJOR 0
#define OPTIREDUCE_VERSION_MINOR 1
#define OPTIREDUCE_VERSION_PATCH 0

/* Process-wide counters since MPI_Init (this process only; the OPTIREDUCE_STATS summary adds
 * them over all ranks, so there a communicator of N ranks counts N times in comms_*).
 * Every field only grows. */
typedef struct optireduce_stats {
    uint64_t engine_calls;      /* allreduce calls completed by the optireduce engine */
    uint64_t engine_bytes;      /* payload bytes of those calls (count * element size) */
    uint64_t passthrough_calls; /* calls handed unchanged to the underlying MPI, all reasons */
    uint64_t fallback_calls;    /* of those: float SUM calls the engine did not take, because
                                   they were below OPTIREDUCE_MIN_BYTES or the engine is off on
                                   their communicator (setup failed, configuration differs
                                   across ranks, mode=off, intercommunicator, one rank) */
    uint64_t comms_enabled;     /* communicators on which the engine was set up */
    uint64_t comms_fallback;    /* communicators that fell back to the underlying MPI */

    /* Bounded mode (OPTIREDUCE_MODE=bounded). An entry is one float of the vector; "rs" is the
     * reduce-scatter phase (contributions to the shard this rank owns), "ag" the all-gather
     * phase (reduced shards of the other ranks). Lost entries were estimated, not received. */
    uint64_t bounded_calls;        /* of engine_calls: those that ran with deadlines */
    uint64_t entries_expected_rs;
    uint64_t entries_lost_rs;
    uint64_t entries_expected_ag;
    uint64_t entries_lost_ag;
    uint64_t phases_complete;      /* phases that ended because everything arrived */
    uint64_t phases_early_close;   /* ... because every sender's last datagram arrived and the
                                      link went quiet, with something still missing */
    uint64_t phases_deadline;      /* ... because their deadline passed */
    uint64_t datagrams_sent;
    uint64_t datagrams_late;       /* arrived after this rank closed their operation or phase */
    uint64_t datagrams_duplicate;
    uint64_t datagrams_invalid;    /* failed a check of the wire protocol: dropped unread */
    uint64_t datagrams_held;       /* arrived before this rank started their operation */
    uint64_t datagrams_held_dropped; /* ... too far ahead to be held */
    uint64_t datagrams_fault_dropped; /* discarded by OPTIREDUCE_FAULT_DROP (tests only) */

    /* Accuracy under loss (bounded mode). The error estimate of an operation is this rank's
     * estimate of ||result - exact sum|| / ||result|| (see optireduce_last_op). */
    uint64_t hadamard_calls;      /* of bounded_calls: those that ran the randomized Hadamard
                                     transform */
    uint64_t excess_loss_calls;   /* ... that lost more than OPTIREDUCE_MAX_LOSS of their entries */
    uint64_t reliable_calls;      /* calls run through the underlying MPI because of
                                     OPTIREDUCE_ON_EXCESS_LOSS=exact */
    double error_estimate_sum;    /* over bounded_calls: divide by it for the mean */
    double error_estimate_max;
    double drift_estimate_max;    /* largest part of an estimate that this rank alone had (its
                                     phase-2 fills): how far replicas may have drifted apart */

    /* Compute skew (bounded mode). */
    uint64_t stragglers_written_off; /* (phase, peer) pairs whose peer had not started sending
                                        when the phase closed at the straggler bound
                                        (OPTIREDUCE_STRAGGLER_MAX_MS) */
    /* Phase-2 repair (bounded mode): all-gather chunks this rank asked their owners to send
     * again, chunks it sent again when asked, and chunks asked of it that it no longer had
     * (the request came after its next operation's shard replaced them). */
    uint64_t repair_chunks_requested;
    uint64_t repair_chunks_sent;
    uint64_t repair_chunks_unavailable;

    /* Nonblocking calls: of engine_calls, those that came as MPI_Iallreduce (their requests
     * complete through MPI_Wait, MPI_Test and the rest of that family as usual). */
    uint64_t nonblocking_calls;

    /* Engine staging memory that could not be allocated or registered on this rank (the
     * operation then failed on every rank of the communicator, in step, with MPI_ERR_NO_MEM). */
    uint64_t staging_failures;

    /* Datagrams of bounded operations given up because the datagram channel failed their send
     * (an error, not a full queue): lost to their receivers, who estimate them like any other
     * loss, so the operation still returns alike on every rank. */
    uint64_t datagrams_send_failed;

    /* Resource exhaustion, handled where it happens and only counted here: rounds of datagram
     * sends that stopped at a full send queue (-FI_EAGAIN, or EAGAIN/ENOBUFS from the kernel;
     * the rest goes in the next round), and error completions read from a libfabric completion
     * queue (-FI_EAVAIL: the datagram channel reposts the buffer and counts the datagram lost;
     * on the reliable channel the transfer failed, and the job is aborted with the reason, since
     * the peers cannot complete the call without it). */
    uint64_t send_queue_full;
    uint64_t completion_errors;
} optireduce_stats_t;

/* What the last allreduce the engine ran on one communicator did, as this rank saw it. */
typedef struct optireduce_op_report {
    uint64_t ops;              /* engine operations on this communicator so far (0: none yet) */
    uint64_t count;            /* floats of the last one */
    uint64_t entries_expected; /* entries this rank was to receive, both phases */
    uint64_t entries_lost;     /* ... that missed their deadline and were estimated */
    double loss;               /* entries_lost / entries_expected */
    /* Estimated relative error ||result - exact|| / ||result|| of this rank's result: 0 when
     * nothing was lost anywhere this rank heard of. An estimate from the loss map and the data's
     * spread across ranks, not a bound: it came within 3 - 6% of the measured error on the
     * emulated cloud (docs/benchmarks.md 9.2) and is designed to be within a factor of 2. */
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

/* Copies the counters into *out. Returns 0, or -1 if out is NULL. Safe to call at any time. */
int optireduce_get_stats(optireduce_stats_t *out);

/* The report of the last engine operation on a communicator, given by its Fortran handle so
 * that this header needs no MPI types: pass MPI_Comm_c2f(comm) from C, comm.py2f() from mpi4py.
 * Returns 0; -1 if out is NULL, MPI is not initialised, or the engine has not run an operation
 * on that communicator (then *out is zeroed). Safe from any thread. */
int optireduce_last_op(int comm_fortran_handle, optireduce_op_report_t *out);

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
