// SPDX-License-Identifier: BSD-3-Clause
// The test-only OPTIREDUCE_FAULT_* knobs, decided in one place (docs/configuration.md, "Test-only
// knobs"): each function says whether, or does what, the fault asks for at that point, and is a
// no-op unless the knob names this rank. The datagram drop (OPTIREDUCE_FAULT_DROP) and
// duplication (_DUPLICATE) are not here: they act on the channel itself, as an endpoint that
// wraps the real one when the channel opens (transport/faulty_dgram_endpoint.hpp).
#pragma once

#include "transport/fault_rng.hpp"

namespace optireduce {

// OPTIREDUCE_FAULT_SEND_*: whether this rank's next send fails (as if the channel returned
// -FI_EIO), one decision for every sender of the engine (bounded mode's datagram rounds, exact
// mode's transfers), so both fail alike; each call its own draw.
bool injected_send_failure();

// OPTIREDUCE_FAULT_ALLOC_*: whether this growth of the engine's staging memory fails (once per
// process, at its OPTIREDUCE_FAULT_ALLOC_NTH growth).
bool injected_alloc_failure();

// OPTIREDUCE_FAULT_DELAY_*: the straggler, sleeping before it enters an operation, with the
// probability drawn from the communicator's fault sequence.
void injected_delay(FaultRng &faults);
// OPTIREDUCE_FAULT_VOTE_DELAY_MS: the same rank sleeping before it sends its hole vote (a vote
// that comes late), with the same probability.
void injected_vote_delay(FaultRng &faults);

// OPTIREDUCE_FAULT_EXIT_RANK: makes this rank abort (SIGABRT) when the process exits, after
// MPI_Finalize returned and the program's checks are done. Armed from the library's finalize
// step, which every path to PMPI_Finalize runs (our wrapper, or MPI_COMM_SELF's attribute callback
// for bindings that call PMPI_Finalize themselves, such as MPICH's mpi_f08).
void arm_exit_fault();

}  // namespace optireduce
