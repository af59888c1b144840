/* SPDX-License-Identifier: BSD-3-Clause */
/* optireduce's process counters: the one list of them.
 *
 * Everything that names the counters is generated from OPTIREDUCE_STATS_FIELDS: the public
 * struct optireduce_stats_t (optireduce.h), the library's atomics, the copy into the struct, the
 * names and values of the OPTIREDUCE_STATS summary and its JSON file, and the names that
 * optireduce_stats_field_name() gives programs that read the struct without this header (Python
 * through ctypes). A new counter is one line here, at the end of the list.
 *
 * OPTIREDUCE_STATS_FIELDS(U64, F64) calls U64(name, doc) for each uint64_t field and F64(name,
 * doc) for each double field, in the order of the struct; doc is a one-line description.
 *
 * Never reorder, remove or retype an entry: optireduce_stats_t's layout is ABI, and programs
 * compiled against an older, shorter struct read its first bytes (optireduce_get_stats_sized).
 *
 * Process-wide counters since MPI_Init (this process only; the OPTIREDUCE_STATS summary adds
 * them over all ranks, so there a communicator of N ranks counts N times in comms_*). Every
 * uint64_t field only grows.
 *
 * Bounded mode (OPTIREDUCE_MODE=bounded): an entry is one float of the vector; "rs" is the
 * reduce-scatter phase (contributions to the shard this rank owns), "ag" the all-gather phase
 * (reduced shards of the other ranks). Lost entries were estimated, not received. The error
 * estimate of an operation is this rank's estimate of ||result - exact sum|| / ||result|| (see
 * optireduce_last_op). Phase-2 repair: all-gather chunks this rank asked their owners to send
 * again, chunks it sent again when asked, and chunks asked of it that it no longer had (the
 * request came after its next operation's shard replaced them).
 *
 * Plain C (C99 and later) and C++. */
#ifndef OPTIREDUCE_STATS_FIELDS_H
#define OPTIREDUCE_STATS_FIELDS_H

/* clang-format off */
#define OPTIREDUCE_STATS_FIELDS(U64, F64) \
    U64(engine_calls,            "allreduce calls completed by the optireduce engine") \
    U64(engine_bytes,            "payload bytes of those calls (count * element size)") \
    U64(passthrough_calls,       "calls handed unchanged to the underlying MPI, all reasons") \
    U64(fallback_calls,          "of those: float SUM calls the engine did not take, because they were below " \
                                 "OPTIREDUCE_MIN_BYTES or the engine is off on their communicator (setup " \
                                 "failed, configuration differs across ranks, mode=off, intercommunicator, " \
                                 "one rank)") \
    U64(comms_enabled,           "communicators on which the engine was set up") \
    U64(comms_fallback,          "communicators that fell back to the underlying MPI") \
    U64(bounded_calls,           "bounded mode: of engine_calls, those that ran with deadlines") \
    U64(entries_expected_rs,     "bounded mode: entries this rank was to receive in the reduce-scatter") \
    U64(entries_lost_rs,         "bounded mode: ... of those, lost (estimated, not received)") \
    U64(entries_expected_ag,     "bounded mode: entries this rank was to receive in the all-gather") \
    U64(entries_lost_ag,         "bounded mode: ... of those, lost (estimated, not received)") \
    U64(phases_complete,         "phases that ended because everything arrived") \
    U64(phases_early_close,      "... because every sender's last datagram arrived and the link went quiet, " \
                                 "with something still missing") \
    U64(phases_deadline,         "... because their deadline passed") \
    U64(datagrams_sent,          "datagrams this rank sent") \
    U64(datagrams_late,          "datagrams that arrived after this rank closed their operation or phase") \
    U64(datagrams_duplicate,     "datagrams that arrived twice") \
    U64(datagrams_invalid,       "datagrams that failed a check of the wire protocol: dropped unread") \
    U64(datagrams_held,          "datagrams that arrived before this rank started their operation") \
    U64(datagrams_held_dropped,  "... too far ahead to be held") \
    U64(datagrams_fault_dropped, "datagrams discarded by OPTIREDUCE_FAULT_DROP (tests only)") \
    U64(hadamard_calls,          "of bounded_calls: those that ran the randomized Hadamard transform") \
    U64(excess_loss_calls,       "... that lost more than OPTIREDUCE_MAX_LOSS of their entries") \
    U64(reliable_calls,          "calls run through the underlying MPI because of " \
                                 "OPTIREDUCE_ON_EXCESS_LOSS=exact") \
    F64(error_estimate_sum,      "sum of the error estimates over bounded_calls: divide by it for the mean") \
    F64(error_estimate_max,      "largest error estimate of a bounded call") \
    F64(drift_estimate_max,      "largest part of an estimate that this rank alone had (its phase-2 fills): " \
                                 "how far replicas may have drifted apart") \
    U64(stragglers_written_off,  "(phase, peer) pairs whose peer had not started sending when the phase " \
                                 "closed at the straggler bound (OPTIREDUCE_STRAGGLER_MAX_MS)") \
    U64(repair_chunks_requested, "phase-2 repair: all-gather chunks this rank asked their owners to send again") \
    U64(repair_chunks_sent,      "phase-2 repair: chunks this rank sent again when asked") \
    U64(repair_chunks_unavailable, "phase-2 repair: chunks asked of this rank that it no longer had") \
    U64(nonblocking_calls,       "of engine_calls: those that came as MPI_Iallreduce (their requests complete " \
                                 "through MPI_Wait, MPI_Test and the rest of that family as usual)") \
    U64(staging_failures,        "engine staging memory that could not be allocated or registered on this rank " \
                                 "(the operation then failed on every rank of the communicator, in step, " \
                                 "with MPI_ERR_NO_MEM)") \
    U64(datagrams_send_failed,   "datagrams of bounded operations given up because the datagram channel failed " \
                                 "their send (an error, not a full queue): lost to their receivers, who " \
                                 "estimate them like any other loss") \
    U64(send_queue_full,         "rounds of datagram sends that stopped at a full send queue (-FI_EAGAIN, or " \
                                 "EAGAIN/ENOBUFS from the kernel); the rest goes in the next round") \
    U64(completion_errors,       "error completions read from a libfabric completion queue (-FI_EAVAIL): the " \
                                 "datagram channel reposts the buffer and counts the datagram lost; on the " \
                                 "reliable channel the transfer failed and the job is aborted with the reason") \
    U64(datagrams_given_up,      "datagrams of bounded operations not sent because their receivers had stopped " \
                                 "waiting for them (the phase's deadline for this sender had passed): a slow " \
                                 "link's own late data, given up so the next operation does not queue behind it") \
    U64(entries_zeroed_for_peers, "OPTIREDUCE_IDENTICAL_REPLICAS: entries this rank had but set to 0 because a " \
                                 "peer missed them, so that every rank's result is the same (also counted in " \
                                 "entries_lost_ag)") \
    U64(hole_votes_missing,      "OPTIREDUCE_IDENTICAL_REPLICAS: bounded calls whose wait for a peer's hole vote " \
                                 "reached OPTIREDUCE_VOTE_TIMEOUT_MS (the job is then aborted: no call ends " \
                                 "without every vote, so replicas never differ)") \
    U64(phases_waited_flowing,   "phases that waited past a sender's deadline because its data were still " \
                                 "arriving, fast enough to finish within half a deadline more (a sender that " \
                                 "lost its core for a while, not a slow path); each is also counted by how it closed") \
    U64(hole_votes_late,         "OPTIREDUCE_IDENTICAL_REPLICAS: bounded calls that waited for a peer's hole vote " \
                                 "past the call's deadlines and the straggler bound's cap (a peer descheduled, " \
                                 "stopped or behind its own queue); the vote was still waited for") \
    U64(scatter_repair_chunks_requested, "reduce-scatter repair: chunks of its peers' contributions this rank " \
                                 "asked them to send again (OPTIREDUCE_SCATTER_REPAIR)") \
    U64(scatter_repair_chunks_sent, "reduce-scatter repair: chunks this rank sent again when asked") \
    U64(scatter_repair_chunks_unavailable, "reduce-scatter repair: chunks asked of this rank after it had " \
                                 "finished their operation (or before it had started it)") \
    U64(phases_cut_slow_path,    "bounded phases closed before a sender's end because its data, at the rate " \
                                 "they came, could not arrive by then (a slow path); each is also counted as " \
                                 "closed at the deadline") \
    U64(device_calls,            "of engine_calls: those with a buffer in GPU memory, staged through pinned host " \
                                 "memory (OPTIREDUCE_DEVICE=stage)") \
    U64(device_fallback_calls,   "float SUM calls handed to the underlying MPI because some rank's buffer was in GPU " \
                                 "memory and OPTIREDUCE_DEVICE=passthrough, or its staging failed (also counted in " \
                                 "fallback_calls)") \
    U64(device_copy_ns,          "nanoseconds this rank spent copying GPU buffers to and from host staging, " \
                                 "both ways") \
    U64(entries_carried,         "OPTIREDUCE_CARRY: entries of this rank's input that its bounded calls dropped " \
                                 "(agreed holes, and reduce-scatter losses made holes) and kept as a residual " \
                                 "for the next call on the same buffer and count") \
    U64(entries_carried_in,      "OPTIREDUCE_CARRY: entries of residuals added into a call's input") \
    U64(carry_dropped_entries,   "OPTIREDUCE_CARRY: residual entries dropped for good: no call on their buffer " \
                                 "and count within OPTIREDUCE_CARRY_IDLE_CALLS calls, beyond " \
                                 "OPTIREDUCE_CARRY_MAX_MB, or their communicator freed") \
    U64(carry_bytes,             "OPTIREDUCE_CARRY: bytes the residuals (and their scratch) hold now, all " \
                                 "communicators") \
    U64(carry_capped_calls,      "OPTIREDUCE_CARRY: calls whose residual was larger than their input and was " \
                                 "scaled down to its norm before it was added (the rest dropped)") \
    U64(carry_spell_calls,       "OPTIREDUCE_CARRY: calls whose agreed holes held more than a quarter of the " \
                                 "vector (a host slow for a while): rescaled as without carry, nothing carried")
/* clang-format on */

#endif /* OPTIREDUCE_STATS_FIELDS_H */
