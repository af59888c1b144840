// SPDX-License-Identifier: BSD-3-Clause
#include "engine/setup/context.hpp"

#include "engine/requests/async_request.hpp"
#include "engine/setup/comm_hints.hpp"
#include "engine/setup/comm_registry.hpp"
#include "engine/setup/comm_state.hpp"
#include "engine/setup/faults.hpp"
#include "telemetry/job_summary.hpp"
#include "telemetry/log.hpp"
#include "transport/faulty_dgram_endpoint.hpp"

#include <unistd.h>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace optireduce {
namespace {

std::mutex g_init_mutex;

// Ranks of this job on this node, as the launcher announces it (Open MPI, MPICH hydra); read
// from the environment because the lazy initialisation path cannot run a collective.
long local_ranks() {
    for (const char *var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
        if (const char *v = std::getenv(var)) return std::atol(v);
    return 0;
}

int self_delete(MPI_Comm, int, void *, void *) {
    on_mpi_finalize();
    return MPI_SUCCESS;
}

// Keyvals, the finalize hook and logging: everything after the configuration is known good.
void finish_init(ProcessContext &c, Config config, const std::vector<std::string> &unknown) {
    c.config = std::move(config);
    const long ranks = local_ranks(), cpus = sysconf(_SC_NPROCESSORS_ONLN);
    c.oversubscribed = ranks > cpus;
    c.no_spare_core = ranks >= cpus;
    log_configure(c.config.log, c.world_rank, c.config.log_limit);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &delete_comm_state_attr, &c.comm_keyval, nullptr);
    // Hints, unlike engine state, are copied by MPI_Comm_dup, as MPI copies info hints.
    PMPI_Comm_create_keyval(&copy_comm_hints_attr, &delete_comm_hints_attr, &c.hints_keyval, nullptr);
    // MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still works: our
    // finalize hook for programs whose MPI_Finalize we do not see (e.g. other bindings).
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &self_delete, &c.self_keyval, nullptr);
    PMPI_Comm_set_attr(MPI_COMM_SELF, c.self_keyval, nullptr);
    if (c.world_rank == 0)
        for (const auto &name : unknown)
            OPTIREDUCE_LOG(warn, "unknown variable %s ignored (optireduce-info lists the valid ones)", name.c_str());
    OPTIREDUCE_LOG(info, "optireduce ready: mode %s, provider %s, min bytes %llu", to_string(c.config.mode),
                   c.config.provider.c_str(), static_cast<unsigned long long>(c.config.min_bytes));
    c.ready.store(true, std::memory_order_release);
}

}  // namespace

ProcessContext &context() {
    // Never destroyed: endpoints are closed at MPI_Finalize, and nothing here may run after
    // libfabric's own destructors at exit.
    static ProcessContext *c = new ProcessContext();
    return *c;
}

RdmEndpoint *ProcessContext::endpoint_for(const std::string &provider, std::string *error) {
    std::lock_guard lock(mutex);
    auto it = endpoints.find(provider);
    if (it != endpoints.end()) return it->second.get();
    auto ep = RdmEndpoint::open(provider, error);
    if (!ep) return nullptr;
    return endpoints.emplace(provider, std::move(ep)).first->second.get();
}

DgramChannel *ProcessContext::dgram_for(const std::string &provider, std::string *error) {
    std::lock_guard lock(mutex);
    if (dgram) return dgram.get();
    auto ch = std::make_unique<DgramChannel>();
    const DgramOptions options{config.iface, config.mtu, config.udp_gso(), config.udp_gro()};
    const DgramFaults faults{config.fault_drop, config.fault_duplicate,
                             config.fault_seed + static_cast<std::uint64_t>(world_rank)};
    ch->endpoint = with_faults(open_dgram_endpoint(provider, options, error), faults);
    if (!ch->endpoint) return nullptr;
    ch->progress = std::make_unique<ProgressThread>(*ch->endpoint, ch->router);
    OPTIREDUCE_LOG(info, "datagram progress thread: %s", ch->progress->placement().c_str());
    dgram = std::move(ch);
    return dgram.get();
}

void on_mpi_initialized() {
    ProcessContext &c = context();
    std::lock_guard lock(g_init_mutex);
    if (c.ready.load(std::memory_order_acquire)) return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &c.world_rank);
    ParseResult parsed = parse_environment();
    // Every rank learns whether any rank has a bad value, so all stop together; only the lowest
    // such rank prints, so the job shows one message instead of one per rank.
    int first_bad = parsed.error ? c.world_rank : INT_MAX;
    PMPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_bad != INT_MAX) {
        if (first_bad == c.world_rank)
            std::fprintf(stderr, "optireduce[%d] error: %s\n", c.world_rank, parsed.error->message.c_str());
        PMPI_Finalize();
        std::exit(1);
    }
    finish_init(c, std::move(*parsed.config), parsed.unknown);
}

bool ensure_ready() {
    ProcessContext &c = context();
    if (c.ready.load(std::memory_order_acquire)) return !c.finalized;
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized) return false;
    std::lock_guard lock(g_init_mutex);
    if (!c.ready.load(std::memory_order_acquire)) {
        // MPI was initialised without passing through our wrappers: no collective is possible
        // here (we may be inside a call on a sub-communicator), so a bad value aborts.
        PMPI_Comm_rank(MPI_COMM_WORLD, &c.world_rank);
        ParseResult parsed = parse_environment();
        if (parsed.error) {
            std::fprintf(stderr, "optireduce[%d] error: %s\n", c.world_rank, parsed.error->message.c_str());
            PMPI_Abort(MPI_COMM_WORLD, 1);
        }
        finish_init(c, std::move(*parsed.config), parsed.unknown);
    }
    return !c.finalized;
}

void on_mpi_finalize() {
    ProcessContext &c = context();
    if (!ensure_ready()) return;
    // Nonblocking operations still running (a request the application freed, or never waited
    // for) finish first: they count in the summary, and MPI_Finalize must see their requests
    // complete.
    complete_all_requests();
    arm_exit_fault();
    std::vector<CommSummary> comms;
    std::uint64_t unlisted = 0;
    {
        std::lock_guard lock(c.mutex);
        for (const CommState *st : c.comms)
            if (st->summary_slot >= 0)
                c.comm_summaries[static_cast<std::size_t>(st->summary_slot)].calls = st->next_seq;
        comms = c.comm_summaries;
        unlisted = c.comm_summaries_unlisted;
    }
    write_job_summary(c.config, c.world_rank, comms, unlisted);
    // Deleting the attribute runs delete_comm_state_attr, which unregisters the state.
    std::vector<CommState *> live;
    {
        std::lock_guard lock(c.mutex);
        live = c.comms;
    }
    for (CommState *st : live) PMPI_Comm_delete_attr(st->comm, c.comm_keyval);
    {
        std::lock_guard lock(c.mutex);
        c.endpoints.clear();
        c.dgram.reset();
    }
    PMPI_Comm_free_keyval(&c.comm_keyval);
    // Communicators still holding hints keep them until MPI deletes them; the keyval goes then.
    PMPI_Comm_free_keyval(&c.hints_keyval);
    // MPI_COMM_SELF still holds an attribute with this keyval; MPI releases the keyval once
    // PMPI_Finalize deleted it (whose callback then finds us finalized and returns).
    c.finalized = true;
    PMPI_Comm_free_keyval(&c.self_keyval);
}

}  // namespace optireduce
