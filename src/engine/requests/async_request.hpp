// SPDX-License-Identifier: BSD-3-Clause
// Nonblocking engine allreduces as genuine MPI requests (docs/architecture.md, "Threads, and
// which may call MPI").
//
// Each eligible MPI_Iallreduce gets a standard generalized request (MPI_Grequest_start), so the
// handle works wherever an application puts it: alone or in arrays with ordinary requests, in
// every completion call. The operation itself runs on the communicator's executor thread
// (engine/requests/comm_executor.hpp), which calls no MPI; MPI learns that it finished
// (MPI_Grequest_complete) only from inside a completion call the application makes, on the
// application's thread, which is legal at every thread level. The wrappers of the completion
// family call the functions below first and then the PMPI call itself, which then finds the
// request complete and fills the status through the request's query callback.
//
// While no engine request is outstanding (live() is false), the wrappers go straight to PMPI:
// that test is the whole cost of the interception for ordinary requests.
#pragma once

#include <mpi.h>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

namespace optireduce {

class CommState;

namespace async_detail {
// Engine requests MPI has not yet been told are complete, freed ones included.
inline std::atomic<int> g_live{0};
// Bumped each time an engine operation finishes: what Waitany and Waitsome sleep on.
inline std::atomic<std::uint64_t> g_finished_epoch{0};
}  // namespace async_detail

inline bool live() { return async_detail::g_live.load(std::memory_order_relaxed) != 0; }

// Starts an eligible nonblocking allreduce on comm's executor; *request gets its handle.
// Returns an MPI error code (raised through the communicator's handler, as MPI would).
int start_iallreduce(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count, MPI_Request *request);

// One turn of MPI's progress engine (an MPI_Iprobe, which consumes nothing), made while the
// application's thread waits inside an MPI call for an engine operation: MPI's own waits
// progress everything the program has outstanding, and a peer may need one of our sends (a
// rendezvous one moves only while we are inside MPI) before it can join the operation.
void poke_mpi_progress();
constexpr auto kPokeEvery = std::chrono::microseconds(200);

// MPI_Wait, MPI_Waitall: waits until each engine operation in reqs has finished and completes
// its request in MPI, so that the PMPI call that follows returns at once for it.
void finish_requests(const MPI_Request *reqs, int n);
// The test family, MPI_Request_get_status: completes, in MPI, the engine requests in reqs whose
// operations have finished, without waiting.
void complete_finished(const MPI_Request *reqs, int n);
// Before MPI_Request_free: an engine request may be freed before its operation finished (its
// buffers are then the application's again only when it knows otherwise, as for any freed
// request); MPI is told it is complete once it is, at the next completion call or at
// MPI_Finalize.
void prepare_free(MPI_Request request);
// MPI_Finalize: waits for every engine operation still running and completes its request.
void complete_all_requests();

// MPI_Waitany, MPI_Waitsome: these must return as soon as any request completes, engine or
// ordinary, so they run as a loop over their test form. `handles()` gives the requests' C
// handles as they are now (Fortran's must be converted afresh each time: completed ones become
// null); `test(done)` calls the test form (PMPI_Testany or PMPI_Testsome, or Open MPI's Fortran
// routine) and sets done when it reported something. While every active request is an engine
// one, the loop sleeps until an operation finishes; otherwise it yields between tests, as MPI
// itself does while it polls.
bool all_active_are_engine(const MPI_Request *reqs, int n);
// Returns when an engine operation finished since `epoch` was read, or after a short while in
// which MPI was asked to progress the application's other communication (see wait_finished).
void wait_for_any_finish(std::uint64_t epoch);
template <class Handles, class Test>
int wait_through_test(Handles handles, Test test) {
    for (;;) {
        const std::uint64_t epoch = async_detail::g_finished_epoch.load(std::memory_order_acquire);
        std::span<const MPI_Request> reqs = handles();
        complete_finished(reqs.data(), static_cast<int>(reqs.size()));
        bool done = false;
        const int rc = test(done);
        if (rc != MPI_SUCCESS || done) return rc;
        reqs = handles();
        if (all_active_are_engine(reqs.data(), static_cast<int>(reqs.size())))
            wait_for_any_finish(epoch);
        else
            sched_yield();
    }
}

}  // namespace optireduce
