// Per-communicator engine state: created collectively on the first float SUM call on a
// communicator (comm_setup.cpp), cached as an MPI attribute, destroyed by the attribute's
// delete callback on MPI_Comm_free or at MPI_Finalize.
#pragma once

#include "engine/staging.hpp"
#include "policy/eligibility.hpp"
#include "transport/rdm_endpoint.hpp"

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace optireduce {

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
    std::vector<fi_addr_t> peers;      // by communicator rank
    std::size_t segment_floats = 0;
    std::uint64_t min_bytes = 0;
    std::uint32_t next_seq = 0;  // eligible calls so far; identical on every rank

    CommFacts facts() const { return {intracomm, size, enabled, min_bytes}; }

    // A free set of staging buffers big enough for n floats, or nullptr with *error set.
    Staging *acquire_staging(std::size_t n, std::string *error);
    void release_staging(Staging *s) { s->busy = false; }

private:
    std::vector<std::unique_ptr<Staging>> staging_;
};

}  // namespace optireduce
