// SPDX-License-Identifier: BSD-3-Clause
#include "engine/requests/async_request.hpp"

#include "engine/engine.hpp"
#include "engine/requests/comm_executor.hpp"
#include "engine/setup/comm_state.hpp"
#include "engine/setup/context.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace optireduce {
namespace {

using async_detail::g_finished_epoch;
using async_detail::g_live;

// One engine-owned nonblocking allreduce. Two owners: MPI (until the request's free callback)
// and the engine (until MPI was told it is complete); the last one deletes it.
struct AsyncOp {
    MPI_Request handle = MPI_REQUEST_NULL;
    int source = MPI_ANY_SOURCE, tag = MPI_ANY_TAG;  // what the status says (query_fn)
    int rc = MPI_SUCCESS;                            // the operation's outcome; written before `finished`
    std::atomic<bool> finished{false};               // the executor ran it
    std::atomic<bool> completing{false};             // someone took the job of calling MPI_Grequest_complete
    std::atomic<int> owners{2};
};

void release(AsyncOp *op) {
    if (op->owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete op;
}

// The requests MPI has not been told are complete. `active` are the application's handles; a
// request freed before its operation finished moves to `detached`, because MPI may give its
// handle value to a new request from then on.
struct Table {
    std::mutex mutex;
    std::vector<AsyncOp *> active;
    std::vector<AsyncOp *> detached;
};
Table &table() {
    static Table *t = new Table();  // never destroyed: the free callback may run at exit
    return *t;
}

AsyncOp *find(Table &t, MPI_Request r) {
    for (AsyncOp *op : t.active)
        if (op->handle == r) return op;
    return nullptr;
}

// Tells MPI the finished operation is complete, once, whoever gets here first.
void complete(AsyncOp *op) {
    if (op->completing.exchange(true, std::memory_order_acq_rel)) return;
    {
        Table &t = table();
        std::lock_guard lock(t.mutex);
        std::erase(t.active, op);
        std::erase(t.detached, op);
    }
    g_live.fetch_sub(1, std::memory_order_relaxed);
    PMPI_Grequest_complete(op->handle);
    release(op);  // the engine's share; MPI's goes in free_fn
}

// The detached requests whose operations finished: MPI completes them now, so that their free
// callbacks run and nothing stays held for the rest of the job.
void sweep_detached() {
    std::vector<AsyncOp *> done;
    {
        Table &t = table();
        std::lock_guard lock(t.mutex);
        for (AsyncOp *op : t.detached)
            if (op->finished.load(std::memory_order_acquire)) done.push_back(op);
    }
    for (AsyncOp *op : done) complete(op);
}

// What MPI_Wait and friends report for the request: a collective has no source, tag or count,
// so the status is the empty one the MPI gives its own collective requests, with the
// operation's outcome; the return value is what the completion call returns.
int query_fn(void *extra, MPI_Status *status) {
    const auto *op = static_cast<const AsyncOp *>(extra);
    status->MPI_SOURCE = op->source;
    status->MPI_TAG = op->tag;
    status->MPI_ERROR = op->rc;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    return op->rc;
}

int free_fn(void *extra) {
    release(static_cast<AsyncOp *>(extra));
    return MPI_SUCCESS;
}

// Cancelling a collective operation is erroneous in MPI; the operation runs to its end (its
// deadlines bound it) and the request completes normally.
int cancel_fn(void *, int) { return MPI_SUCCESS; }

// Where completion calls sleep while an engine operation runs.
struct FinishSignal {
    std::mutex mutex;
    std::condition_variable cv;
};
FinishSignal &finish_signal() {
    static FinishSignal *s = new FinishSignal();  // never destroyed, like the table
    return *s;
}

void finish(AsyncOp *op, int rc) {
    op->rc = rc;
    FinishSignal &s = finish_signal();
    {
        // Under the mutex, so that a waiter between its check and its sleep cannot miss it.
        std::lock_guard lock(s.mutex);
        op->finished.store(true, std::memory_order_release);
        g_finished_epoch.fetch_add(1, std::memory_order_acq_rel);
    }
    s.cv.notify_all();
}

// Waits for the operation, waking every kPokeEvery to let MPI progress the rest.
void wait_finished(const AsyncOp *op) {
    FinishSignal &s = finish_signal();
    for (;;) {
        {
            std::unique_lock lock(s.mutex);
            if (s.cv.wait_for(lock, kPokeEvery, [op] { return op->finished.load(std::memory_order_acquire); })) return;
        }
        poke_mpi_progress();
    }
}

// The first nonblocking call on a communicator: what MPI's own collective requests report in
// their status, from one of them. Every rank makes the same call at the same point of the
// communicator's collective order, so the probe matches.
void learn_request_status(CommState &comm) {
    int one = 1, out = 0;
    MPI_Request r;
    MPI_Status st;
    if (PMPI_Iallreduce(&one, &out, 1, MPI_INT, MPI_MAX, comm.comm, &r) != MPI_SUCCESS) return;
    if (PMPI_Wait(&r, &st) != MPI_SUCCESS) return;
    comm.request_source = st.MPI_SOURCE;
    comm.request_tag = st.MPI_TAG;
}

}  // namespace

void poke_mpi_progress() {
    int flag = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

int start_iallreduce(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count, MPI_Request *request) {
    if (g_live.load(std::memory_order_relaxed) != 0) sweep_detached();
    if (!comm.executor) {
        learn_request_status(comm);
        comm.executor = std::make_unique<CommExecutor>(context().no_spare_core);
        OPTIREDUCE_LOG(debug, "nonblocking executor of a %d-rank communicator: %s", comm.size,
                       comm.executor->placement().c_str());
    }
    auto *op = new AsyncOp;
    op->source = comm.request_source;
    op->tag = comm.request_tag;
    const int rc = PMPI_Grequest_start(&query_fn, &free_fn, &cancel_fn, op, request);
    if (rc != MPI_SUCCESS) {
        // Every other rank runs the operation: taking part is the only way not to hang them,
        // and without a request there is no way to tell the application when it is done.
        delete op;
        OPTIREDUCE_LOG(error, "MPI_Grequest_start failed (%d): cannot return a request for an allreduce of %zu floats",
                       rc, count);
        PMPI_Comm_call_errhandler(comm.comm, rc);
        return rc;
    }
    op->handle = *request;
    {
        Table &t = table();
        std::lock_guard lock(t.mutex);
        t.active.push_back(op);
    }
    g_live.fetch_add(1, std::memory_order_relaxed);
    bump(process_stats().nonblocking_calls);
    comm.executor->submit(
        [&comm, op, sendbuf, recvbuf, count] { finish(op, engine_run(comm, sendbuf, recvbuf, count, false)); });
    return MPI_SUCCESS;
}

void finish_requests(const MPI_Request *reqs, int n) {
    for (int i = 0; i < n; ++i) {
        AsyncOp *op;
        {
            Table &t = table();
            std::lock_guard lock(t.mutex);
            op = find(t, reqs[i]);
        }
        if (!op) continue;
        wait_finished(op);
        complete(op);
    }
    sweep_detached();
}

void complete_finished(const MPI_Request *reqs, int n) {
    std::vector<AsyncOp *> done;
    {
        Table &t = table();
        std::lock_guard lock(t.mutex);
        for (int i = 0; i < n; ++i)
            if (AsyncOp *op = find(t, reqs[i]); op && op->finished.load(std::memory_order_acquire)) done.push_back(op);
    }
    for (AsyncOp *op : done) complete(op);
    sweep_detached();
}

void wait_for_any_finish(std::uint64_t epoch) {
    FinishSignal &s = finish_signal();
    {
        std::unique_lock lock(s.mutex);
        if (s.cv.wait_for(lock, kPokeEvery,
                          [epoch] { return g_finished_epoch.load(std::memory_order_acquire) != epoch; }))
            return;
    }
    poke_mpi_progress();
}

bool all_active_are_engine(const MPI_Request *reqs, int n) {
    Table &t = table();
    std::lock_guard lock(t.mutex);
    for (int i = 0; i < n; ++i)
        if (reqs[i] != MPI_REQUEST_NULL && !find(t, reqs[i])) return false;
    return true;
}

void prepare_free(MPI_Request request) {
    AsyncOp *op = nullptr;
    {
        Table &t = table();
        std::lock_guard lock(t.mutex);
        op = find(t, request);
        if (op && !op->finished.load(std::memory_order_acquire)) {
            std::erase(t.active, op);
            t.detached.push_back(op);
            op = nullptr;  // completed later, by sweep_detached
        }
    }
    if (op) complete(op);
}

void complete_all_requests() {
    std::vector<AsyncOp *> all;
    {
        Table &t = table();
        std::lock_guard lock(t.mutex);
        all = t.active;
        all.insert(all.end(), t.detached.begin(), t.detached.end());
    }
    for (AsyncOp *op : all) {
        wait_finished(op);
        complete(op);
    }
}

}  // namespace optireduce
