// SPDX-License-Identifier: BSD-3-Clause
// Collective setup of a communicator's engine state (docs/architecture.md, "Per-communicator
// setup and fallback"): all members agree on the configuration, on setup success and on a
// communicator id, or all fall back together.
#include "device/cuda_driver.hpp"
#include "engine/setup/comm_hints.hpp"
#include "engine/setup/comm_registry.hpp"
#include "engine/setup/comm_state.hpp"
#include "engine/setup/context.hpp"
#include "engine/setup/rank_agreement.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"
#include "transport/fabric/provider_choice.hpp"
#include "transport/tag.hpp"
#include "transport/wire_header.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace optireduce {
namespace {

constexpr std::size_t kIdWords = tag::kMaxCommIds / 64;

void disable(CommState &st, std::string reason) {
    st.enabled = false;
    st.fallback_reason = std::move(reason);
}

// What bounded mode agrees on beyond the common setup: the job nonce that tells this job's
// datagrams from anything else on the port, the datagram size every member can receive, and
// the world ranks that per-peer lateness is reported by.
void setup_bounded(CommState &st, ProcessContext &ctx, DgramChannel &channel) {
    auto b = std::make_unique<CommState::Bounded>();
    b->channel = &channel;
    const Config &cfg = ctx.config;
    // Rank 0 draws the nonce, and the seed of the transform's random signs: the nonce too, unless
    // a test fixed OPTIREDUCE_FAULT_SEED, so that its runs repeat. Everyone takes rank 0's.
    std::uint64_t words[2] = {0, 0};
    if (st.rank == 0) {
        std::random_device rd;
        words[0] = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
        const bool seed_fixed = cfg.value_of(&Config::fault_seed).source == Source::environment;
        words[1] = seed_fixed ? cfg.fault_seed : words[0];
    }
    PMPI_Bcast(words, 2, MPI_UINT64_T, 0, st.comm);
    const std::uint64_t nonce = words[0];
    b->sign_seed = words[1];
    // Bounded mode runs here over the datagram channel, where data can be lost: auto means on.
    b->hadamard = cfg.hadamard != Hadamard::off;
    b->identical_replicas = cfg.identical_replicas;
    b->scatter_repair = cfg.scatter_repair;
    b->key = {nonce, st.comm_id};
    // The largest datagram that reaches every member from every member: each rank's limit
    // towards its peers (the path MTU for the kernel channel), the smallest of them all.
    // How many entries that is depends on the codec, which hints may change: apply_comm_hints.
    std::uint64_t payload = channel.endpoint->max_datagram(st.peers) - wire::kHeaderBytes;
    PMPI_Allreduce(MPI_IN_PLACE, &payload, 1, MPI_UINT64_T, MPI_MIN, st.comm);
    b->payload_bytes = static_cast<std::size_t>(payload);
    b->peers = std::move(st.peers);
    // Registered before the last collective of setup: no member can send its first datagram
    // before every member is ready to take it.
    channel.router.add_comm(b->key, st.rank, st.size, b->peers);
    b->world_ranks.resize(static_cast<std::size_t>(st.size));
    PMPI_Allgather(&ctx.world_rank, 1, MPI_INT, b->world_ranks.data(), 1, MPI_INT, st.comm);
    // On a node with more ranks than cores a sender's datagrams are delivered on whichever core
    // sent them, and a run sent later can overtake an earlier one that waits behind a busy core
    // for milliseconds: its tail arrives first. A silence shorter than that would close phases
    // on data that is only late.
    b->deadlines = DeadlineController(DeadlineSettings{cfg.target_loss, cfg.timeout_min_ms, cfg.timeout_max_ms,
                                                       cfg.timeout_ms, ctx.oversubscribed ? 2.0 : 0.05});
    b->stragglers = StragglerBound(StragglerSettings{cfg.straggler_max_ms});
    b->pacer = SendPacer(st.size);
    b->faults = FaultRng(cfg.fault_seed, static_cast<std::uint64_t>(ctx.world_rank) << 20 | st.comm_id);
    st.bounded = std::move(b);
}

// A communicator id free on every member, reserved on each. Under MPI_THREAD_MULTIPLE two
// communicators may be set up at once on different threads, each with its own collectives, and
// the lowest id free everywhere would then be the same for both: their operations' traffic would
// mix. So the search starts where the communicator's rank 0 says (at random), each member
// reserves the id found, and all check that none had it taken meanwhile by a concurrent setup; a
// clash (rare) releases it and draws again. nullopt: every id is in use.
std::optional<std::size_t> reserve_comm_id(MPI_Comm comm, int rank, ProcessContext &ctx) {
    std::random_device rd;
    for (;;) {
        std::vector<std::uint64_t> used(kIdWords + 1, 0);
        {
            std::lock_guard lock(ctx.mutex);
            for (std::size_t i = 0; i < tag::kMaxCommIds; ++i)
                if (ctx.used_comm_ids.test(i)) used[i / 64] |= std::uint64_t{1} << (i % 64);
        }
        used[kIdWords] = rank == 0 ? rd() % tag::kMaxCommIds : 0;  // BOR with zeros: rank 0's start
        PMPI_Allreduce(MPI_IN_PLACE, used.data(), static_cast<int>(used.size()), MPI_UINT64_T, MPI_BOR, comm);
        std::optional<std::size_t> id;
        for (std::size_t k = 0; k < tag::kMaxCommIds && !id; ++k) {
            const std::size_t i = (used[kIdWords] + k) % tag::kMaxCommIds;
            if (!(used[i / 64] >> (i % 64) & 1u)) id = i;
        }
        if (!id) return std::nullopt;  // the same on every member: all saw the same union
        int clash = 0;
        {
            std::lock_guard lock(ctx.mutex);
            clash = ctx.used_comm_ids.test(*id) ? 1 : 0;
            if (!clash) ctx.used_comm_ids.set(*id);
        }
        const bool mine = clash == 0;
        PMPI_Allreduce(MPI_IN_PLACE, &clash, 1, MPI_INT, MPI_MAX, comm);
        if (!clash) return id;
        if (mine) {
            std::lock_guard lock(ctx.mutex);
            ctx.used_comm_ids.reset(*id);
        }
    }
}

// Steps 2-4 of setup, on a communicator every rank has reached with a float SUM call.
// A collective step failed on some rank (`code`: the MAX of every rank's failure_code): that rank
// says why, and every rank disables the communicator with the same reason.
void disable_after_failure(CommState &st, std::uint64_t code, const std::string &error, const char *advice,
                           const char *step) {
    const int who = failed_rank(code, st.size);
    if (who == st.rank)
        OPTIREDUCE_LOG(warn,
                       "engine setup failed on rank %d of a %d-rank communicator (%s); "
                       "falling back to MPI on it.%s",
                       st.rank, st.size, error.c_str(), advice);
    disable(st, std::string(step) + " failed on rank " + std::to_string(who));
}

// Step 1, on this rank alone: the channel this communicator's mode and layout call for. Exact
// mode runs over the reliable channel, bounded mode over the datagram channel, except on a single
// node with OPTIREDUCE_DGRAM_PROVIDER=auto (see dgram_provider_for); shm only if every member is
// on this node, which every member sees alike.
struct LocalChannel {
    RdmEndpoint *endpoint = nullptr;
    DgramChannel *dgram = nullptr;
    std::string error;
    bool ok(Mode mode) const { return mode == Mode::off || endpoint || dgram; }
};

LocalChannel open_local_channel(const CommState &st, ProcessContext &ctx) {
    const Config &cfg = ctx.config;
    MPI_Comm node = MPI_COMM_NULL;
    PMPI_Comm_split_type(st.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size = 0;
    PMPI_Comm_size(node, &node_size);
    PMPI_Comm_free(&node);
    const bool one_node = node_size == st.size;
    const std::string dgram =
        cfg.mode == Mode::bounded
            ? dgram_provider_for(cfg.dgram_provider, one_node, one_node ? std::string() : hardware_dgram_provider())
            : "";
    LocalChannel local;
    if (cfg.mode == Mode::exact || (cfg.mode == Mode::bounded && dgram.empty()))
        local.endpoint = ctx.endpoint_for(rdm_provider_for(cfg.provider, one_node), &local.error);
    else if (cfg.mode == Mode::bounded)
        local.dgram = ctx.dgram_for(dgram, &local.error);
    return local;
}

// After a mismatch of must-agree knobs (`which`, indices into agreement_names()): rank 0's
// values are broadcast, and each rank whose value differs says both, so the fix is in the log.
// Only on this rare path: one broadcast of a few short strings.
void name_both_values(const CommState &st, const Config &cfg, const std::vector<std::size_t> &which) {
    std::vector<std::string> mine;
    for (const KnobValue &v : cfg.values)
        if (v.spec->must_agree) mine.push_back(v.text);
    std::string packed;
    for (const std::size_t i : which) packed += mine[i] + '\0';
    int len = static_cast<int>(packed.size());
    PMPI_Bcast(&len, 1, MPI_INT, 0, st.comm);
    std::string theirs(static_cast<std::size_t>(len), '\0');
    if (st.rank == 0) theirs = packed;
    PMPI_Bcast(theirs.data(), len, MPI_CHAR, 0, st.comm);
    const auto names = Config::agreement_names();
    std::size_t at = 0;
    for (const std::size_t i : which) {
        const std::string zero(theirs.c_str() + std::min(at, theirs.size()));
        at += zero.size() + 1;
        if (zero != mine[i])
            OPTIREDUCE_LOG(warn, "%s is '%s' on this rank but '%s' on rank 0 of the communicator", names[i],
                           mine[i].c_str(), zero.c_str());
    }
}

// Step 2, collective: every rank has the same must-agree configuration, the engine is on, and
// every rank opened its channel. One MAX reduction checks it all: each must-agree knob's hash and
// its complement (max of ~h is ~min h, so min == max means all equal), and who failed. False:
// the communicator is disabled, with the reason, on every rank alike.
bool agree_on_setup(CommState &st, const Config &cfg, const LocalChannel &local) {
    std::vector<std::uint64_t> hashes = cfg.agreement_hashes();
    const std::size_t k = hashes.size();
    std::vector<std::uint64_t> agree(2 * k + 2);
    for (std::size_t i = 0; i < k; ++i) {
        agree[i] = hashes[i];
        agree[k + i] = ~hashes[i];
    }
    agree[2 * k] = failure_code(local.ok(cfg.mode), st.rank, st.size);
    // Whether any member can hold GPU buffers: then its calls agree on their route one by one
    // (engine/device/device_call.hpp), a price only jobs that loaded CUDA pay.
    agree[2 * k + 1] = CudaDriver::loaded() ? 1 : 0;
    PMPI_Allreduce(MPI_IN_PLACE, agree.data(), static_cast<int>(agree.size()), MPI_UINT64_T, MPI_MAX, st.comm);

    const auto names = Config::agreement_names();
    std::string differing;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < k; ++i)
        if (agree[i] != ~agree[k + i]) {
            differing += (differing.empty() ? "" : ", ") + std::string(names[i]);
            which.push_back(i);
        }
    if (!differing.empty()) {
        if (st.rank == 0)
            OPTIREDUCE_LOG(warn,
                           "%s differs across the %d ranks of a communicator; falling back to "
                           "MPI on it. Set %s identically on every rank.",
                           differing.c_str(), st.size, differing.c_str());
        name_both_values(st, cfg, which);
        disable(st, differing + " differs across ranks");
        return false;
    }
    if (cfg.mode == Mode::off) {
        disable(st, "OPTIREDUCE_MODE=off");
        return false;
    }
    st.device_capable = agree[2 * k + 1] != 0;
    if (agree[2 * k] == 0) return true;
    disable_after_failure(st, agree[2 * k], local.error, " Check OPTIREDUCE_PROVIDER and optireduce-info.", "setup");
    return false;
}

// Step 4, collective: every member's channel address, over the user's communicator in
// fixed-size slots in rank order, resolved by every member, and agreed to have worked.
bool exchange_addresses(CommState &st, LocalChannel &local) {
    static_assert(RdmEndpoint::kNameSlot == DgramEndpoint::kNameSlot);
    constexpr int kSlot = RdmEndpoint::kNameSlot;
    std::vector<std::byte> names_all(kSlot * static_cast<std::size_t>(st.size));
    RdmEndpoint *ep = local.endpoint;
    PMPI_Allgather(ep ? ep->name().data() : local.dgram->endpoint->name().data(), kSlot, MPI_BYTE, names_all.data(),
                   kSlot, MPI_BYTE, st.comm);
    bool connected;
    if (ep) {
        std::lock_guard lock(ep->mutex());
        connected = ep->resolve(names_all, st.size, st.peers, &local.error);
    } else {
        connected = local.dgram->endpoint->resolve(names_all, st.size, st.peers, &local.error);
    }
    std::uint64_t failed = failure_code(connected, st.rank, st.size);
    PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_UINT64_T, MPI_MAX, st.comm);
    if (failed == 0) return true;
    disable_after_failure(st, failed, local.error, "", "address exchange");
    return false;
}

// Step 5: the communicator runs on the engine from its next eligible call.
void enable(CommState &st, ProcessContext &ctx, std::size_t id, const LocalChannel &local) {
    const Config &cfg = ctx.config;
    st.enabled = true;
    st.comm_id = static_cast<std::uint32_t>(id);
    st.endpoint = local.endpoint;
    if (local.dgram) setup_bounded(st, ctx, *local.dgram);
    st.segment_floats = cfg.segment_bytes / sizeof(float);
    // Exact mode tags each message with its segment's index within the shard, in 20 bits: more
    // segments per shard would alias another segment's tag. (Bounded mode's datagrams carry a
    // 32-bit chunk index of at least 144 floats each, beyond any count MPI can pass.) Every
    // member computes the same value from agreed settings, so every rank routes alike.
    if (!st.bounded) st.max_count = static_cast<std::uint64_t>(st.size) * tag::kMaxSegments * st.segment_floats;
    // The minimum size, deadlines and loss budget: the communicator's MPI_Info hints where it
    // has them (agreed when they were set), else the environment's values.
    apply_comm_hints(st);
}

// The collective setup of a communicator's engine state: each step either succeeds on every rank
// or disables the communicator on every rank with the same reason.
void agree_and_connect(CommState &st, ProcessContext &ctx) {
    LocalChannel local = open_local_channel(st, ctx);
    if (!agree_on_setup(st, ctx.config, local)) return;
    // Step 3, collective: a communicator id no member uses yet.
    const std::optional<std::size_t> id = reserve_comm_id(st.comm, st.rank, ctx);
    if (!id) {
        if (st.rank == 0)
            OPTIREDUCE_LOG(warn,
                           "all %u engine communicator ids are in use; falling back to MPI "
                           "on a new communicator. Free communicators you no longer need.",
                           tag::kMaxCommIds);
        return disable(st, "no free communicator id");
    }
    // The agreement says every rank, this one included, has its channel; said again for the
    // reader (and the static analyzer), which cannot follow it through the allreduce.
    if (!local.endpoint && !local.dgram) return disable(st, "no channel on this rank");
    if (!exchange_addresses(st, local)) {
        std::lock_guard lock(ctx.mutex);
        ctx.used_comm_ids.reset(*id);
        return;
    }
    enable(st, ctx, *id, local);
}

// The job summary's record of a communicator just set up, kept by its rank 0 only (so each
// communicator is listed once); the caller holds ctx.mutex.
void list_in_summary(CommState &st, ProcessContext &ctx) {
    int rank = 0;
    PMPI_Comm_rank(st.comm, &rank);  // an intercommunicator is listed once per group
    if (rank != 0) return;
    if (ctx.comm_summaries.size() >= ProcessContext::kMaxCommSummaries) {
        ++ctx.comm_summaries_unlisted;
        return;
    }
    CommSummary s;
    PMPI_Comm_size(st.comm, &s.ranks);  // an intercommunicator's local group, like its rank
    s.mode = to_string(ctx.config.mode);
    s.fallback = st.enabled ? "" : st.fallback_reason;
    s.channel = !st.enabled ? "mpi" : st.bounded ? st.bounded->channel->endpoint->provider() : st.endpoint->provider();
    // Exact mode's reliable channel always carries fp32.
    s.codec = !st.enabled ? "" : st.bounded ? to_string(st.bounded->codec) : "fp32";
    st.summary_slot = static_cast<int>(ctx.comm_summaries.size());
    ctx.comm_summaries.push_back(std::move(s));
}

}  // namespace

CommState *comm_state_for(MPI_Comm comm) {
    ProcessContext &ctx = context();
    void *attr = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, ctx.comm_keyval, &attr, &found);
    if (found) return static_cast<CommState *>(attr);

    auto st = std::make_unique<CommState>();
    st->comm = comm;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    st->intracomm = !inter;
    // Intercommunicators and single-rank communicators pass through; every member sees the
    // same, so no collective is needed to decide that.
    if (inter) {
        PMPI_Comm_remote_size(comm, &st->size);
        disable(*st, "intercommunicator");
    } else {
        PMPI_Comm_rank(comm, &st->rank);
        PMPI_Comm_size(comm, &st->size);
        if (st->size < 2)
            disable(*st, "single rank");
        else if (static_cast<std::uint32_t>(st->size) > tag::kMaxRanks)
            disable(*st, "more ranks than the engine tags address");
        else
            agree_and_connect(*st, ctx);
    }
    auto &stats = process_stats();
    (st->enabled ? stats.comms_enabled : stats.comms_fallback).fetch_add(1, std::memory_order_relaxed);
    OPTIREDUCE_LOG(debug, "communicator of %d ranks: %s%s", st->size,
                   st->enabled ? "engine on" : "engine off: ", st->fallback_reason.c_str());

    CommState *raw = st.release();
    {
        std::lock_guard lock(ctx.mutex);
        ctx.comms.push_back(raw);
        list_in_summary(*raw, ctx);
    }
    PMPI_Comm_set_attr(comm, ctx.comm_keyval, raw);
    return raw;
}

int delete_comm_state_attr(MPI_Comm, int, void *attr, void *) {
    auto *st = static_cast<CommState *>(attr);
    // MPI_Comm_free with nonblocking operations pending is legal: they run to their end first
    // (their requests complete as usual), while the channel still knows the communicator.
    st->executor.reset();
    ProcessContext &ctx = context();
    {
        std::lock_guard lock(ctx.mutex);
        ctx.comms.erase(std::remove(ctx.comms.begin(), ctx.comms.end(), st), ctx.comms.end());
        if (st->summary_slot >= 0) ctx.comm_summaries[static_cast<std::size_t>(st->summary_slot)].calls = st->next_seq;
        if (st->enabled) ctx.used_comm_ids.reset(st->comm_id);
    }
    if (st->bounded) st->bounded->channel->router.remove_comm(st->bounded->key);
    delete st;
    return MPI_SUCCESS;
}

}  // namespace optireduce
