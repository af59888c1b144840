// SPDX-License-Identifier: BSD-3-Clause
// The one process context (docs/architecture.md, "Threads, and which may call MPI"): parsed
// configuration, the attribute keyvals, the libfabric endpoints shared by communicators, and
// the registry of live communicator states.
#pragma once

#include "config/config.hpp"
#include "engine/dgram/dgram_channel.hpp"
#include "telemetry/job_summary.hpp"
#include "transport/fabric/rdm_endpoint.hpp"
#include "transport/tag.hpp"

#include <mpi.h>

#include <atomic>
#include <bitset>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace optireduce {

class CommState;

struct ProcessContext {
    std::atomic<bool> ready{false};  // configuration parsed and keyvals created
    std::atomic<bool> finalized{false};
    Config config;
    int world_rank = -1;
    int comm_keyval = MPI_KEYVAL_INVALID;
    int self_keyval = MPI_KEYVAL_INVALID;
    int hints_keyval = MPI_KEYVAL_INVALID;  // per-communicator hints (engine/setup/comm_hints.hpp)
    bool oversubscribed = false;            // more ranks of this job on this node than online CPUs
    bool no_spare_core = false;             // at least as many ranks of this job on this node as online CPUs

    std::mutex mutex;                                               // everything below
    std::map<std::string, std::unique_ptr<RdmEndpoint>> endpoints;  // by provider name
    std::vector<CommState *> comms;                                 // live, set up
    std::bitset<tag::kMaxCommIds> used_comm_ids;
    // The job summary's list of communicators this rank is rank 0 of, freed ones included; a
    // program that creates communicators without end gets the first kMaxCommSummaries listed
    // and the rest counted, so the list's memory stays bounded.
    static constexpr std::size_t kMaxCommSummaries = 256;
    std::vector<CommSummary> comm_summaries;
    std::uint64_t comm_summaries_unlisted = 0;

    std::unique_ptr<DgramChannel> dgram;  // bounded mode's, opened on first use

    // The endpoint for a provider, opened on first use. nullptr and *error on failure.
    RdmEndpoint *endpoint_for(const std::string &provider, std::string *error);
    // The datagram channel (endpoint, router, progress thread), opened on first use.
    DgramChannel *dgram_for(const std::string &provider, std::string *error);
};

ProcessContext &context();

// After PMPI_Init / PMPI_Init_thread returned MPI_SUCCESS (C and Fortran wrappers). Parses the
// configuration; an invalid value stops the job here with one message naming the variable.
void on_mpi_initialized();

// Before PMPI_Finalize (and from the MPI_COMM_SELF attribute callback inside it, for callers
// that reach PMPI_Finalize without our wrapper). Idempotent. Writes the job summary, frees every
// communicator state and closes the endpoints while MPI is still usable.
void on_mpi_finalize();

// True when the engine can be used now: MPI initialised and not finalised, configuration
// parsed (lazily, if MPI_Init was not seen). Cheap after the first call.
bool ensure_ready();

}  // namespace optireduce
