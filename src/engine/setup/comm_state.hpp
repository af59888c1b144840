// SPDX-License-Identifier: BSD-3-Clause
// Per-communicator engine state: created collectively on the first float SUM call on a
// communicator (comm_setup.cpp), cached as an MPI attribute, destroyed by the attribute's
// delete callback on MPI_Comm_free or at MPI_Finalize.
#pragma once

#include "codec/wire_codec.hpp"
#include "device/staging_copies.hpp"
#include "engine/deadlines/deadline_controller.hpp"
#include "engine/deadlines/send_pacer.hpp"
#include "engine/deadlines/straggler_bound.hpp"
#include "engine/dgram/dgram_router.hpp"
#include "engine/requests/comm_executor.hpp"
#include "engine/setup/carry_store.hpp"
#include "engine/setup/op_report.hpp"
#include "engine/setup/staging.hpp"
#include "policy/eligibility.hpp"
#include "transport/fabric/rdm_endpoint.hpp"
#include "transport/fault_rng.hpp"

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace optireduce {

struct DgramChannel;

class CommState {
public:
    MPI_Comm comm = MPI_COMM_NULL;  // the user's handle; not owned
    int rank = 0;
    int size = 0;
    bool intracomm = false;
    bool enabled = false;
    std::string fallback_reason;  // why enabled is false

    // Valid when enabled.
    std::uint32_t comm_id = 0;
    RdmEndpoint *endpoint = nullptr;  // owned by the process context
    std::vector<fi_addr_t> peers;     // by communicator rank
    std::size_t segment_floats = 0;
    std::uint64_t min_bytes = 0;
    std::uint64_t max_count = UINT64_MAX;  // CommFacts::max_count
    std::uint32_t next_seq = 0;            // eligible calls so far; identical on every rank
    int summary_slot = -1;                 // in ProcessContext::comm_summaries, if listed there
    // Some member had loaded the CUDA driver at setup: each blocking call then agrees on its route
    // (engine/device/device_call.hpp). Agreed, so identical on every rank.
    bool device_capable = false;
    // Pinned host memory and a stream for this rank's GPU buffers, made at its first such call.
    // Calls on one communicator run one at a time (a blocking one waits for the nonblocking
    // ones before it), so one set serves them all.
    std::unique_ptr<StagingCopies> device_staging;

    // Bounded mode (endpoint is then nullptr): the datagram channel and what it needs.
    struct Bounded {
        DgramChannel *channel = nullptr;      // owned by the process context
        DgramRouter::CommKey key{};           // job nonce from rank 0, and comm_id
        std::vector<fi_addr_t> peers;         // datagram addresses, by communicator rank
        std::vector<int> world_ranks;         // of each member, for per-peer lateness
        std::size_t payload_bytes = 0;        // agreed: the smallest max datagram of all members, less the header
        Codec codec = Codec::fp32;            // OPTIREDUCE_CODEC or the optireduce_codec hint (agreed)
        std::size_t floats_per_datagram = 0;  // entries per datagram: what payload_bytes holds under codec
        DeadlineController deadlines{DeadlineSettings{}};
        StragglerBound stragglers;
        SendPacer pacer{0};
        double host_drain_rate = 0;  // bytes/s our host's queue drained at in the last phase (QueueBudget)
        std::uint8_t loss_hint = 0;  // our receive loss on the previous operation, for peers
        bool waited = false;         // our previous operation wrote a peer off (wire::kWaited), for peers
        FaultRng faults;             // OPTIREDUCE_FAULT_DELAY decisions
        // Accuracy under loss: agreed at setup.
        bool hadamard = false;           // OPTIREDUCE_HADAMARD resolved for this communicator
        bool identical_replicas = true;  // OPTIREDUCE_IDENTICAL_REPLICAS (agreed)
        bool scatter_repair = true;      // OPTIREDUCE_SCATTER_REPAIR (ours: a rank answers either way)
        std::uint64_t sign_seed = 0;     // rank 0's: the job seed of the random signs
        // OPTIREDUCE_ON_EXCESS_LOSS=exact: operations still to run through the underlying MPI, and
        // how many the next excess asks for (doubles while loss stays high). Set only from
        // agreed outcomes, so identical on every rank.
        int reliable_left = 0;
        int reliable_run = 0;
        std::uint64_t excess_warnings = 0;
        // OPTIREDUCE_MAX_LOSS, or the communicator's optireduce_max_loss hint (apply_comm_hints).
        double max_loss = 0;
        // OPTIREDUCE_CARRY, or the optireduce_carry hint, on: the residuals (apply_comm_hints).
        std::unique_ptr<CarryStore> carry;
    };
    std::unique_ptr<Bounded> bounded;

    // The last operation's report, written by the thread that ran it, read by any thread.
    mutable std::mutex report_mutex;
    OpReport last_op;

    CommFacts facts() const { return {intracomm, size, enabled, min_bytes, max_count}; }

    // A free set of staging buffers big enough for n floats, or nullptr with *error set.
    // *grew (if given): memory had to be allocated (or registered), the only step that can fail.
    Staging *acquire_staging(std::size_t n, std::string *error, bool *grew = nullptr);
    // The same for bounded mode's layout: a result (wire) vector, one shard per rank for the
    // reduce-scatter, `wire` floats for the transformed input (0: none) and `coded` bytes of
    // coded payloads (0: the codec is fp32).
    Staging *acquire_staging(std::size_t result, std::size_t shard, std::size_t wire, std::size_t coded,
                             std::string *error, bool *grew = nullptr);
    void release_staging(Staging *s) { s->busy = false; }

private:
    std::vector<std::unique_ptr<Staging>> staging_;

public:
    // The source and tag MPI's own nonblocking collectives on this communicator complete with
    // (MPI leaves them undefined; Open MPI says 0, MPICH MPI_ANY_*): engine requests report the
    // same. Learnt at the first nonblocking call.
    int request_source = MPI_ANY_SOURCE, request_tag = MPI_ANY_TAG;
    // Runs the nonblocking operations (MPI_Iallreduce), started by the first one. Declared
    // last so that it is destroyed first: its operations use everything above.
    std::unique_ptr<CommExecutor> executor;
};

}  // namespace optireduce
