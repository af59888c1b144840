// SPDX-License-Identifier: BSD-3-Clause
// The datagram router against crafted input: each check of docs/protocol.md ("Validation")
// drops what it must and counts it, nothing outside an open operation's staging is written,
// datagrams for operations not started yet are held and replayed, late ones never land.
// Links the engine objects (no MPI call is made), as a network peer would see the router.
#include "engine/deadlines/queue_budget.hpp"
#include "engine/dgram/dgram_router.hpp"
#include "scripted_endpoint.hpp"
#include "telemetry/stats.hpp"
#include "transport/wire_header.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

namespace optireduce {
namespace {

constexpr std::uint64_t kNonce = 0xfeedfacecafebeefull;
constexpr std::uint32_t kComm = 7;
constexpr std::size_t kF = 4;  // floats per datagram in these tests

// A float vector as the stream of fp32 datagrams it is sent as (the vector must outlive it).
CodedStream floats(const std::vector<float> &v, std::size_t per_chunk) {
    return CodedStream::floats(v.data(), v.size(), per_chunk);
}

// Our fp32 contribution `wire`, offered for reduce-scatter repair, shard p at shards[p].
ScatterSource offer(const float *wire, const std::vector<Range> &shards, std::size_t per_chunk) {
    ScatterSource s{true, {}, {}};
    for (const Range &r : shards) s.streams.push_back(CodedStream::floats(wire + r.offset, r.count, per_chunk));
    return s;
}
const DgramRouter::CommKey kKey{kNonce, kComm};

std::vector<std::byte> datagram(std::uint32_t seq, std::uint32_t src, std::uint32_t chunk, std::size_t floats,
                                float value, wire::Phase phase = wire::Phase::reduce_scatter,
                                std::uint64_t nonce = kNonce, std::uint32_t comm = kComm, std::uint8_t flags = 0) {
    wire::Header h;
    h.phase = phase;
    h.flags = flags;
    h.job_nonce = nonce;
    h.comm_id = comm;
    h.seq = seq;
    h.src_rank = src;
    h.chunk = chunk;
    h.payload_len = static_cast<std::uint16_t>(floats * sizeof(float));
    std::vector<std::byte> d(wire::kHeaderBytes + h.payload_len);
    wire::encode(h, std::span<std::byte, wire::kHeaderBytes>(d.data(), wire::kHeaderBytes));
    std::vector<float> payload(floats, value);
    std::memcpy(d.data() + wire::kHeaderBytes, payload.data(), h.payload_len);
    return d;
}

// A repair request from `src` for the chunks `chunks` of operation `seq`: of the all-gather
// (phase-2 repair), or of our reduce-scatter stream to `src` (wire::Phase::scatter_repair).
std::vector<std::byte> repair_request(std::uint32_t seq, std::uint32_t src, const std::vector<std::uint32_t> &chunks,
                                      wire::Phase phase = wire::Phase::repair) {
    wire::Header h;
    h.phase = phase;
    h.job_nonce = kNonce;
    h.comm_id = kComm;
    h.seq = seq;
    h.src_rank = src;
    h.payload_len = static_cast<std::uint16_t>(chunks.size() * sizeof(std::uint32_t));
    std::vector<std::byte> d(wire::kHeaderBytes + h.payload_len);
    wire::encode(h, std::span<std::byte, wire::kHeaderBytes>(d.data(), wire::kHeaderBytes));
    std::memcpy(d.data() + wire::kHeaderBytes, chunks.data(), h.payload_len);
    return d;
}

// Rank 0 of 3; each peer's phase-1 stream is 10 floats (3 chunks: 4, 4, 2) into its own slot.
struct Fixture : ::testing::Test {
    DgramRouter router;
    std::vector<float> slots = std::vector<float>(30, -1.0f);
    OpReceive op;

    void SetUp() override {
        router.add_comm(kKey, 0, 3, {FI_ADDR_NOTAVAIL, 1, 2});
        prepare(op, 5);
    }
    void prepare(OpReceive &o, std::uint32_t seq) {
        o.seq = seq;
        o.floats_per_datagram = kF;
        o.size_for(3);
        const std::vector<std::uint32_t> chunks{0, 3, 3};
        for (int p = 0; p < 2; ++p) {
            o.dest[p] = {nullptr, slots.data() + 10, slots.data() + 20};
            o.length[p] = {0, 10, 10};
            o.map[p].reset(chunks);
        }
    }
    static std::uint64_t invalid() { return process_stats().datagrams_invalid.load(); }
    static std::uint64_t late() { return process_stats().datagrams_late.load(); }
    void feed(const std::vector<std::byte> &d, fi_addr_t src = FI_ADDR_NOTAVAIL) { router.on_datagram(d, src); }
};

TEST_F(Fixture, ValidDatagramsLandAtTheirChunkAndDuplicatesAreDropped) {
    router.open_op(kKey, &op);
    feed(datagram(5, 1, 1, 4, 2.0f));
    feed(datagram(5, 1, 2, 2, 3.0f));  // the short last chunk
    const auto dup_before = process_stats().datagrams_duplicate.load();
    feed(datagram(5, 1, 1, 4, 9.0f));  // duplicate: must not overwrite
    EXPECT_EQ(process_stats().datagrams_duplicate.load(), dup_before + 1);
    EXPECT_EQ(slots[10], -1.0f);  // chunk 0 never came
    for (int i = 14; i < 18; ++i) EXPECT_EQ(slots[static_cast<std::size_t>(i)], 2.0f);
    EXPECT_EQ(slots[18], 3.0f);
    EXPECT_EQ(slots[19], 3.0f);
    EXPECT_EQ(op.map[0].received(1), 2u);
    router.close_op(kKey, &op);
}

TEST_F(Fixture, EveryMalformationIsDroppedUnwritten) {
    router.open_op(kKey, &op);
    const auto before = invalid();
    auto bad_magic = datagram(5, 1, 0, 4, 1.0f);
    bad_magic[0] = std::byte{0};
    feed(bad_magic);
    feed(datagram(5, 1, 0, 4, 1.0f, wire::Phase::reduce_scatter, kNonce + 1));         // other job
    feed(datagram(5, 1, 0, 4, 1.0f, wire::Phase::reduce_scatter, kNonce, kComm + 1));  // other comm
    feed(datagram(5, 3, 0, 4, 1.0f));                                                  // source rank out of range
    feed(datagram(5, 0, 0, 4, 1.0f));                                                  // our own rank
    feed(datagram(5, 1, 3, 4, 1.0f));                                                  // chunk beyond the stream
    feed(datagram(5, 1, 0, 3, 1.0f));                                                  // wrong length for chunk 0
    feed(datagram(5, 1, 2, 4, 1.0f));                                                  // last chunk is 2 floats, not 4
    feed(datagram(5, 1, 0, 4, 1.0f), 2);  // FI_SOURCE says rank 2 sent what claims rank 1
    std::vector<std::byte> tiny(10);
    feed(tiny);
    EXPECT_EQ(invalid(), before + 10);
    for (float v : slots) EXPECT_EQ(v, -1.0f);
    EXPECT_EQ(op.map[0].received_total(), 0u);
    feed(datagram(5, 1, 0, 4, 1.0f), 1);  // the same datagram from the right address lands
    EXPECT_EQ(slots[10], 1.0f);
    router.close_op(kKey, &op);
}

TEST_F(Fixture, EarlyDatagramsAreHeldAndReplayedWithinTheWindow) {
    const auto held = process_stats().datagrams_held.load();
    const auto dropped = process_stats().datagrams_held_dropped.load();
    // A new communicator's first operation is 0: operation 1 is within the window, operation
    // kHeldAheadOps is not.
    prepare(op, 1);
    feed(datagram(1, 2, 0, 4, 4.0f));                           // before the operation opened
    feed(datagram(DgramRouter::kHeldAheadOps, 2, 0, 4, 4.0f));  // too far ahead
    EXPECT_EQ(process_stats().datagrams_held.load(), held + 1);
    EXPECT_EQ(process_stats().datagrams_held_dropped.load(), dropped + 1);
    EXPECT_EQ(slots[20], -1.0f);
    router.open_op(kKey, &op);
    for (int i = 20; i < 24; ++i) EXPECT_EQ(slots[static_cast<std::size_t>(i)], 4.0f);
    EXPECT_EQ(op.map[0].received(2), 1u);
    router.close_op(kKey, &op);
}

// Per-sender clocks: a held datagram starts its sender's clock when it arrived, not when it was
// replayed; in the all-gather an early (pipelined) datagram does not start it, the first one
// sent after the sender's reduce-scatter does, and so does an early tail.
TEST_F(Fixture, SenderClocksStartAtTheirFirstDatagramAndNotOnEarlyOnes) {
    prepare(op, 1);
    feed(datagram(1, 2, 0, 4, 4.0f));  // held: operation 1 is not open yet
    const Clock::time_point held_until = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    router.open_op(kKey, &op);
    EXPECT_NE(op.started[0][2], Clock::time_point{});
    EXPECT_LE(op.started[0][2], held_until);
    EXPECT_EQ(op.started[0][1], Clock::time_point{});  // rank 1 has not sent anything
    const auto ag = wire::Phase::all_gather;
    feed(datagram(1, 1, 0, 4, 1.0f, ag, kNonce, kComm, wire::kEarly));
    EXPECT_EQ(op.started[1][1], Clock::time_point{});
    EXPECT_EQ(op.map[1].received(1), 1u);  // placed all the same
    feed(datagram(1, 1, 1, 4, 1.0f, ag));
    EXPECT_NE(op.started[1][1], Clock::time_point{});
    feed(datagram(1, 2, 2, 2, 1.0f, ag, kNonce, kComm, wire::kEarly | wire::kTail));
    EXPECT_NE(op.started[1][2], Clock::time_point{});
    EXPECT_GE(op.last_from[1][2], op.started[1][2]);
    router.close_op(kKey, &op);
}

// An operation this rank failed before opening (skip_op): what was held for it is dropped and
// counted late, later datagrams for it are late, and the next operation opens and fills normally
// instead of being taken for the skipped one.
TEST_F(Fixture, ASkippedOperationDropsWhatWasHeldAndLetsTheNextOneRun) {
    feed(datagram(0, 1, 0, 4, 1.0f));  // operation 0, not open yet: held
    feed(datagram(0, 2, 0, 4, 1.0f));
    const auto before = late();
    router.skip_op(kKey, 0);
    EXPECT_EQ(late(), before + 2);     // the two held ones
    feed(datagram(0, 1, 1, 4, 1.0f));  // operation 0 again, after the skip
    EXPECT_EQ(late(), before + 3);
    prepare(op, 1);
    feed(datagram(1, 1, 0, 4, 2.0f));  // operation 1 held, then replayed when it opens
    router.open_op(kKey, &op);
    EXPECT_EQ(op.map[0].received(1), 1u);
    EXPECT_EQ(op.map[0].received(2), 0u);  // nothing of operation 0 leaked into it
    for (int i = 10; i < 14; ++i) EXPECT_EQ(slots[static_cast<std::size_t>(i)], 2.0f);
    EXPECT_EQ(slots[20], -1.0f);
    router.close_op(kKey, &op);
}

TEST_F(Fixture, ClosedPhasesAndOperationsTakeNothing) {
    router.open_op(kKey, &op);
    {  // the owner closes phase 1, under the router's mutex as in the engine
        std::unique_lock lock(router.mutex());
        router.close_phase(lock, op, 0, Clock::now(), {}, {});
    }
    const auto l0 = late();
    feed(datagram(5, 1, 0, 4, 5.0f));
    EXPECT_EQ(late(), l0 + 1);
    EXPECT_EQ(slots[10], -1.0f);
    feed(datagram(5, 1, 0, 4, 6.0f, wire::Phase::all_gather));  // phase 2 still open
    EXPECT_EQ(slots[10], 6.0f);
    router.close_op(kKey, &op);
    router.close_op(kKey, &op);  // idempotent
    feed(datagram(5, 2, 0, 4, 7.0f, wire::Phase::all_gather));
    EXPECT_EQ(late(), l0 + 2);
    EXPECT_EQ(slots[20], -1.0f);
    // A freed communicator's stragglers are late, not invalid.
    router.remove_comm(kKey);
    const auto inv = invalid();
    feed(datagram(6, 1, 0, 4, 8.0f));
    EXPECT_EQ(late(), l0 + 3);
    EXPECT_EQ(invalid(), inv);
}

TEST_F(Fixture, NearMissesAreReportedOnceAfterTheirWindow) {
    router.open_op(kKey, &op);
    {
        std::unique_lock lock(router.mutex());
        const Clock::time_point now = Clock::now();
        for (int p = 0; p < 2; ++p) router.close_phase(lock, op, p, now, std::chrono::milliseconds(50), {});
    }
    op.bytes = 4096;
    feed(datagram(5, 1, 0, 4, 1.0f));  // phase 1, just after its close: a near miss
    router.close_op(kKey, &op);
    feed(datagram(5, 2, 0, 4, 1.0f, wire::Phase::all_gather));  // after the operation closed
    EXPECT_TRUE(router.take_near_misses(kKey).empty());         // window not over yet
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    const auto misses = router.take_near_misses(kKey);
    ASSERT_EQ(misses.size(), 1u);
    EXPECT_EQ(misses[0].bytes, 4096u);
    EXPECT_EQ(misses[0].count[0], 1u);
    EXPECT_EQ(misses[0].count[1], 1u);
    EXPECT_EQ(misses[0].expected[0], 6u);
    EXPECT_TRUE(router.take_near_misses(kKey).empty());  // once
}

// A path far slower than the others (typical_paths.hpp) delivers most of its stream after the
// deadline: those datagrams are late, but not near misses, which would widen every deadline
// towards that one path's pace. Another sender's late datagram still is one.
TEST_F(Fixture, ASlowPathsLateDatagramsAreNotNearMisses) {
    router.open_op(kKey, &op);
    const std::vector<std::uint8_t> slow{0, 1, 0};  // sender 1's path was far slower
    {
        std::unique_lock lock(router.mutex());
        const Clock::time_point now = Clock::now();
        for (int p = 0; p < 2; ++p) router.close_phase(lock, op, p, now, std::chrono::milliseconds(50), slow);
    }
    op.bytes = 4096;
    const auto l0 = late();
    feed(datagram(5, 1, 0, 4, 1.0f));  // the slow path's, while the operation is open
    router.close_op(kKey, &op);
    feed(datagram(5, 1, 1, 4, 1.0f));                           // and after it closed
    feed(datagram(5, 2, 0, 4, 1.0f, wire::Phase::all_gather));  // another sender's: a near miss
    EXPECT_EQ(late(), l0 + 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    const auto misses = router.take_near_misses(kKey);
    ASSERT_EQ(misses.size(), 1u);
    EXPECT_EQ(misses[0].count[0], 0u);
    EXPECT_EQ(misses[0].count[1], 1u);
}

// The largest datagram the wire allows (a 65532-byte payload: 16383 floats, plus the header) is
// held whole and replayed whole: the held prefix stores its length in 32 bits, not 16.
TEST(Router, TheLargestDatagramIsHeldAndReplayedWhole) {
    constexpr std::size_t kBig = 16383;
    DgramRouter router;
    router.add_comm(kKey, 0, 3, {FI_ADDR_NOTAVAIL, 1, 2});
    std::vector<float> dest(kBig, -1.0f);
    OpReceive op;
    op.seq = 1;
    op.floats_per_datagram = kBig;
    op.size_for(3);
    const std::vector<std::uint32_t> chunks{0, 1, 0};
    for (int p = 0; p < 2; ++p) {
        op.dest[p] = {nullptr, dest.data(), nullptr};
        op.length[p] = {0, kBig, 0};
        op.map[p].reset(chunks);
    }
    const auto d = datagram(1, 1, 0, kBig, 7.0f);
    ASSERT_GT(d.size(), 65535u);
    const auto held = process_stats().datagrams_held.load();
    router.on_datagram(d, FI_ADDR_NOTAVAIL);  // operation 1 is not open yet
    EXPECT_EQ(process_stats().datagrams_held.load(), held + 1);
    const auto inv = process_stats().datagrams_invalid.load();
    router.open_op(kKey, &op);
    EXPECT_EQ(process_stats().datagrams_invalid.load(), inv);
    EXPECT_EQ(op.map[0].received(1), 1u);
    for (float v : dest) ASSERT_EQ(v, 7.0f);
    router.close_op(kKey, &op);
}

// A peer (or a forger with the job's nonce) flooding datagrams for operations far ahead: what
// is held stays within kHeldAheadOps operations and kHeldBytesPerComm bytes, the rest is dropped
// and counted; the operation then opens with what was held. Repair requests queue at most
// kQueuedRequestsPerComm deep.
TEST_F(Fixture, AFloodOfFutureOperationsStaysBounded) {
    const auto held = process_stats().datagrams_held.load();
    const auto dropped = process_stats().datagrams_held_dropped.load();
    for (std::uint32_t seq = 0; seq < 1000; ++seq) feed(datagram(seq, 1, 0, 4, 1.0f));
    // Operations 0..kHeldAheadOps-1 are within the window, one datagram each.
    EXPECT_EQ(process_stats().datagrams_held.load(), held + DgramRouter::kHeldAheadOps);
    EXPECT_EQ(process_stats().datagrams_held_dropped.load(), dropped + 1000 - DgramRouter::kHeldAheadOps);

    // Bytes: the largest datagrams for operation 2 until well past the cap. Duplicates are held
    // as they come (their check is at replay), so only the byte cap stops them.
    const auto big = datagram(2, 2, 0, 16383, 1.0f);
    const std::size_t fit = (DgramRouter::kHeldBytesPerComm - 4 * (wire::kHeaderBytes + 16)) / big.size();
    const auto held2 = process_stats().datagrams_held.load();
    const auto dropped2 = process_stats().datagrams_held_dropped.load();
    for (std::size_t i = 0; i < fit + 100; ++i) feed(big);
    EXPECT_EQ(process_stats().datagrams_held.load(), held2 + fit);
    EXPECT_EQ(process_stats().datagrams_held_dropped.load(), dropped2 + 100);

    // Skipping the held operations drops what was held for them (counted late) and frees the
    // bytes: a datagram for an operation within the new window is held again.
    router.skip_op(kKey, 0);
    router.skip_op(kKey, 1);
    router.skip_op(kKey, 2);
    const auto held3 = process_stats().datagrams_held.load();
    feed(datagram(6, 1, 0, 4, 1.0f));  // 6 - next_open(3) < kHeldAheadOps
    EXPECT_EQ(process_stats().datagrams_held.load(), held3 + 1);

    // Repair requests: 1000 queued from one peer, at most kQueuedRequestsPerComm survive.
    router.repair().publish(kKey, 9, floats(std::vector<float>(10, 3.0f), kF), 0);
    const auto inv = invalid();
    for (int i = 0; i < 1000; ++i) feed(repair_request(9, 1, {0}));
    EXPECT_EQ(invalid(), inv + 1000 - Phase2Repair::kQueuedRequestsPerComm);  // Phase2Repair::kQueuedRequestsPerComm
    std::vector<RepairJob> jobs;
    router.repair().take(jobs);
    EXPECT_EQ(jobs.size(), Phase2Repair::kQueuedRequestsPerComm);
}

// A peer that missed most of our shard asks for all of it. Behind a slow uplink the answers
// queued a megabyte in front of our hole vote, which every peer waits for: they go only while
// our host's queue holds a few milliseconds of its drain rate (at least
// QueueBudget::kAlwaysQueued), and all of them where the channel cannot tell its queue.
TEST_F(Fixture, RepairAnswersGoOnlyWhileTheHostsQueueIsShort) {
    constexpr std::size_t kChunkFloats = 256, kChunks = 400;
    router.repair().publish(kKey, 9, floats(std::vector<float>(kChunks * kChunkFloats, 3.0f), kChunkFloats), 0);
    std::vector<std::uint32_t> all(kChunks);
    for (std::uint32_t c = 0; c < kChunks; ++c) all[c] = c;
    auto ask_all = [&] { feed(repair_request(9, 1, all)); };
    const std::size_t answer_bytes = wire::kHeaderBytes + kChunkFloats * sizeof(float);

    test::ScriptedEndpoint slow;  // a link that drains next to nothing while we answer
    slow.drain_rate = 1;
    ask_all();
    router.repair().serve(slow);
    EXPECT_GT(slow.sent.size(), 0u);
    EXPECT_LE(slow.sent.size(), static_cast<std::size_t>(QueueBudget::kAlwaysQueued) / answer_bytes + 1);

    test::ScriptedEndpoint unknown;  // queued_bytes() == -1
    ask_all();
    router.repair().serve(unknown);
    EXPECT_EQ(unknown.sent.size(), kChunks);

    // Where our host's queue drains at 1 Gbit/s, a few milliseconds of it may queue: the 400
    // chunks (425 KB) go in one round, where the fixed cap sent 123 per request.
    EXPECT_EQ(Phase2Repair::answer_queue_cap(125e6), 500'000);
    EXPECT_EQ(Phase2Repair::answer_queue_cap(0), QueueBudget::kAlwaysQueued);
    test::ScriptedEndpoint fast;
    fast.drain_rate = 1;  // the link behind the script drains nothing while we answer
    ask_all();
    router.repair().serve(fast, 125e6);
    EXPECT_EQ(fast.sent.size(), kChunks);

    // Behind a link cut to 90 Mbit/s the cap stays at what the queue budget always allows.
    test::ScriptedEndpoint cut;
    cut.drain_rate = 1;
    ask_all();
    router.repair().serve(cut, 11.25e6);
    EXPECT_GT(cut.sent.size(), 0u);
    EXPECT_LE(cut.sent.size(), static_cast<std::size_t>(QueueBudget::kAlwaysQueued) / answer_bytes + 1);
}

// Reduce-scatter repair, the sender's side: a peer that missed chunks of our contribution to its
// shard gets them again from our wire vector while our operation is open, each an ordinary
// reduce-scatter datagram with our phase header; asked before we offered it or after we closed,
// nothing is sent and the chunks count as unavailable; a chunk beyond the shard refuses the
// request whole.
TEST_F(Fixture, ReduceScatterChunksAreSentAgainOnlyWhileTheirOperationIsOpen) {
    // Our wire vector of 30 floats, shard p at 10p: peer 1's shard holds 10..19 (chunks of 4, 4, 2).
    std::vector<float> wire_vector(30);
    for (std::size_t i = 0; i < wire_vector.size(); ++i) wire_vector[i] = static_cast<float>(i);
    ScatterSource offered = offer(wire_vector.data(), {{0, 10}, {10, 10}, {20, 10}}, kF);
    offered.header.phase = wire::Phase::reduce_scatter;
    offered.header.job_nonce = kNonce;
    offered.header.comm_id = kComm;
    offered.header.seq = 5;
    offered.header.flags = wire::kTail | wire::kWaited;
    offered.header.sender_deadline_us = 1234;
    const auto unavailable = [] { return process_stats().scatter_repair_chunks_unavailable.load(); };

    const auto before_open = unavailable();
    feed(repair_request(5, 1, {0, 2}, wire::Phase::scatter_repair));  // not open yet
    EXPECT_EQ(unavailable(), before_open + 2);
    router.open_op(kKey, &op);
    feed(repair_request(5, 1, {0}, wire::Phase::scatter_repair));  // open, nothing offered yet
    EXPECT_EQ(unavailable(), before_open + 3);
    router.offer_scatter(op, offered);

    const auto inv = invalid();
    feed(repair_request(5, 1, {1, 3}, wire::Phase::scatter_repair));  // chunk 3 is beyond the shard
    EXPECT_EQ(invalid(), inv + 1);
    feed(repair_request(5, 1, {2, 0}, wire::Phase::scatter_repair));
    test::ScriptedEndpoint ep;
    const auto sent_before = process_stats().scatter_repair_chunks_sent.load();
    router.repair().serve(ep);
    ASSERT_EQ(ep.sent.size(), 2u) << "the refused request must not be answered in part";
    EXPECT_EQ(process_stats().scatter_repair_chunks_sent.load(), sent_before + 2);
    const std::uint32_t want_chunk[2] = {2, 0};
    const std::size_t want_offset[2] = {18, 10}, want_floats[2] = {2, 4};
    for (std::size_t i = 0; i < 2; ++i) {
        const auto &d = ep.sent[i];
        EXPECT_EQ(d.dest, 1u);
        const wire::Decoded dec = wire::decode(d.bytes);
        ASSERT_TRUE(dec.header.has_value()) << wire::to_string(dec.error);
        const wire::Header &h = *dec.header;
        EXPECT_EQ(h.phase, wire::Phase::reduce_scatter);
        EXPECT_EQ(h.seq, 5u);
        EXPECT_EQ(h.chunk, want_chunk[i]);
        EXPECT_EQ(h.flags, wire::kWaited) << "an answer is never a tail";
        EXPECT_EQ(h.sender_deadline_us, 1234u);
        ASSERT_EQ(h.payload_len, want_floats[i] * sizeof(float));
        std::vector<float> got(want_floats[i]);
        std::memcpy(got.data(), d.bytes.data() + wire::kHeaderBytes, h.payload_len);
        for (std::size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], wire_vector[want_offset[i] + k]);
    }

    // Closed: the owner may write its wire vector again, and nothing is answered from it.
    router.close_op(kKey, &op);
    const auto before_closed = unavailable();
    feed(repair_request(5, 1, {0}, wire::Phase::scatter_repair));
    EXPECT_EQ(unavailable(), before_closed + 1);
    test::ScriptedEndpoint after;
    router.repair().serve(after);
    EXPECT_TRUE(after.sent.empty());
}

// Both phases' answers go out through one queue: the all-gather's first (every rank fills its
// holes and waits for its vote), and the reduce-scatter's under a wider cap of our host's queue,
// since they are asked for while our own reduce-scatter stream still fills it.
TEST_F(Fixture, AllGatherAnswersGoFirstAndReduceScatterAnswersUnderAWiderCap) {
    std::vector<float> wire_vector(30, 1.0f);
    router.open_op(kKey, &op);
    router.offer_scatter(op, offer(wire_vector.data(), {{0, 10}, {10, 10}, {20, 10}}, kF));
    router.repair().publish(kKey, 5, floats(std::vector<float>(10, 3.0f), kF), 0);
    feed(repair_request(5, 1, {0, 1}, wire::Phase::scatter_repair));
    feed(repair_request(5, 2, {2}));
    std::vector<RepairJob> jobs;
    router.repair().take(jobs);
    ASSERT_EQ(jobs.size(), 3u);
    EXPECT_FALSE(jobs[0].scatter);
    EXPECT_TRUE(jobs[1].scatter);
    EXPECT_TRUE(jobs[2].scatter);
    // At 1 Gbit/s: 20 ms of the link (2.5 MB) against the all-gather's 4 ms; behind a link cut to
    // 90 Mbit/s, 225 KB against the 128 KiB always allowed.
    EXPECT_EQ(Phase2Repair::scatter_answer_queue_cap(125e6), 2'500'000);
    EXPECT_EQ(Phase2Repair::scatter_answer_queue_cap(11.25e6), 225'000);
    EXPECT_EQ(Phase2Repair::scatter_answer_queue_cap(0), QueueBudget::kAlwaysQueued);
    router.close_op(kKey, &op);
}

// The answers waiting per communicator are bounded in bytes (each is a copy made under the
// router's lock): a peer asking for far more than that gets the first kQueuedAnswerBytes.
TEST_F(Fixture, ReduceScatterAnswersWaitingAreBounded) {
    constexpr std::size_t kChunkFloats = 2048, kChunks = 400;  // 3.3 MB asked
    std::vector<float> wire_vector(3 * kChunks * kChunkFloats, 1.0f);
    OpReceive big;
    big.seq = 5;
    big.floats_per_datagram = kChunkFloats;
    big.size_for(3);
    router.open_op(kKey, &big);
    const std::size_t shard = kChunks * kChunkFloats;
    router.offer_scatter(big,
                         offer(wire_vector.data(), {{0, shard}, {shard, shard}, {2 * shard, shard}}, kChunkFloats));
    std::vector<std::uint32_t> all(kChunks);
    for (std::uint32_t c = 0; c < kChunks; ++c) all[c] = c;
    feed(repair_request(5, 1, all, wire::Phase::scatter_repair));
    feed(repair_request(5, 2, all, wire::Phase::scatter_repair));
    std::vector<RepairJob> jobs;
    router.repair().take(jobs);
    EXPECT_EQ(jobs.size(), Phase2Repair::kQueuedAnswerBytes / (kChunkFloats * sizeof(float)));
    router.close_op(kKey, &big);
}

}  // namespace
}  // namespace optireduce
