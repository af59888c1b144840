// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: the datagram router (the code that applies a datagram to operation state)
// driven the way the network and the engine drive it. Each input is a script of actions: raw
// bytes as a datagram, a structured datagram (mostly valid header with one field bent: sequence
// far ahead or behind, foreign nonce or communicator, source out of range, chunk beyond the
// stream, wrong length, spoofed FI_SOURCE, any flags), opening/closing/skipping operations,
// the owner closing a phase, publishing a shard and answering repair requests (of both phases:
// an open operation offers its wire vector to reduce-scatter repair), freeing and re-adding the
// communicator.
//
// Every receive slot is its own exact heap allocation, freed when its operation closes, so
// AddressSanitizer turns any write past a slot or after close into a crash; so is the offered
// wire vector, so an answer read past it or after close is one too. Checked after every
// action: no slot is written that the loss map does not record as received, bitmaps never count
// past what was expected, repair answers never carry more than one datagram's payload. Memory
// held for operations ahead stays under the router's bound (libFuzzer's -rss_limit_mb and
// -malloc_limit_mb catch the rest). Built by scripts/fuzz.sh.
#include "codec/sharding.hpp"
#include "engine/dgram/dgram_router.hpp"
#include "telemetry/stats.hpp"
#include "transport/wire_header.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace optireduce {
namespace {

constexpr std::uint64_t kNonce = 0x0123456789abcdefull;
constexpr float kUnset = -12345.0f;  // what a slot holds until a datagram lands there

[[noreturn]] void fail(const char *what) {
    std::fprintf(stderr, "router_fuzz: invariant broken: %s\n", what);
    std::abort();
}

// One communicator as the engine of one rank sees it, with at most one open operation.
struct Rank {
    DgramRouter::CommKey key;
    int rank = 0, size = 0;
    std::uint32_t next_seq = 0;
    bool added = true;

    // The open operation, laid out as BoundedOperation lays out its receive state.
    bool open = false;
    OpReceive op;
    std::vector<std::unique_ptr<float[]>> slots[2];
    // Offered to reduce-scatter repair: every shard's chunks under the operation's codec, exactly
    // as many bytes as they take.
    std::unique_ptr<std::byte[]> wire_vector;

    std::vector<fi_addr_t> peers() const {
        std::vector<fi_addr_t> p(static_cast<std::size_t>(size));
        for (int s = 0; s < size; ++s) p[static_cast<std::size_t>(s)] = s == rank ? FI_ADDR_NOTAVAIL : fi_addr_t(s);
        return p;
    }

    void open_op(DgramRouter &router, std::size_t n, std::size_t F, Codec codec) {
        const auto N = static_cast<std::size_t>(size), me = static_cast<std::size_t>(rank);
        op = OpReceive{};
        op.seq = next_seq++;
        op.floats_per_datagram = F;
        op.codec = codec;
        op.size_for(N);
        const Range own = shard_of(n, size, rank);
        std::vector<std::uint32_t> chunks[2];
        for (int p = 0; p < 2; ++p) {
            op.dest[p].assign(N, nullptr);
            op.length[p].assign(N, 0);
            chunks[p].assign(N, 0);
            slots[p].clear();
            slots[p].resize(N);
        }
        for (std::size_t s = 0; s < N; ++s) {
            if (s == me) continue;
            const Range theirs = shard_of(n, size, static_cast<int>(s));
            const std::size_t len[2] = {own.count, theirs.count};
            for (int p = 0; p < 2; ++p) {
                // Exact size: one float more would hide an overflow from ASan.
                slots[p][s].reset(new float[len[p] ? len[p] : 1]);
                std::fill_n(slots[p][s].get(), len[p], kUnset);
                op.dest[p][s] = slots[p][s].get();
                op.length[p][s] = len[p];
                chunks[p][s] = static_cast<std::uint32_t>(segment_count(len[p], F));
            }
        }
        op.map[0].reset(chunks[0]);
        op.map[1].reset(chunks[1]);
        const std::size_t own_chunks = segment_count(own.count, F);
        op.contributors = static_cast<std::uint16_t>(own_chunks > 0 ? N - 1 : 0);
        op.arrivals.assign(own_chunks, 0);
        router.open_op(key, &op);
        open = true;
        // Our contribution, offered to receivers' reduce-scatter repair requests until we close.
        std::size_t bytes = 0;
        for (int p = 0; p < size; ++p) bytes += CodedStream::bytes_for(codec, shard_of(n, size, p).count, F);
        wire_vector.reset(new std::byte[bytes ? bytes : 1]);
        std::fill_n(wire_vector.get(), bytes, std::byte{0x40});
        ScatterSource offered{true, std::vector<CodedStream>(N), {}};
        for (std::size_t p = 0, at = 0; p < N; ++p) {
            const std::size_t count = shard_of(n, size, static_cast<int>(p)).count;
            offered.streams[p] = CodedStream{wire_vector.get() + at, count, F, codec};
            at += CodedStream::bytes_for(codec, count, F);
        }
        offered.header = wire_header_for(key, rank, op.seq, wire::Phase::reduce_scatter);
        router.offer_scatter(op, std::move(offered));
    }

    void close_op(DgramRouter &router) {
        if (!open) return;
        router.close_op(key, &op);
        check();
        for (auto &s : slots) s.clear();  // freed: a later write is a use after free
        wire_vector.reset();              // and a later read of it for an answer too
        open = false;
    }

    // Nothing lands that the loss map does not record: every chunk not marked received still
    // holds kUnset (payloads never carry that pattern, see send_structured; raw datagrams that
    // decode are as unlikely to). One thread here, so no lock is needed to read.
    void check() const {
        for (int p = 0; p < 2; ++p) {
            const ChunkBitmap &map = op.map[p];
            if (map.received_total() > map.expected()) fail("more chunks received than expected");
            for (std::size_t s = 0; s < op.length[p].size(); ++s) {
                if (s == static_cast<std::size_t>(rank)) continue;
                if (map.received(s) > map.chunks(s)) fail("a sender delivered more chunks than it has");
                const std::size_t F = op.floats_per_datagram;
                for (std::uint32_t c = 0; c < map.chunks(s); ++c) {
                    if (map.test(s, c)) continue;
                    const Range g = segment_of(op.length[p][s], F, c);
                    for (std::size_t i = 0; i < g.count; ++i)
                        if (std::memcmp(&op.dest[p][s][g.offset + i], &kUnset, sizeof(float)) != 0)
                            fail("a chunk the loss map does not record was written");
                }
            }
        }
        for (std::size_t c = 0; c < op.arrivals.size(); ++c)
            if (op.arrivals[c] > op.contributors) fail("more contributions to a chunk than contributors");
    }
};

wire::Header random_header(FuzzedDataProvider &in, const Rank &r) {
    wire::Header h;
    h.job_nonce = r.key.nonce;
    h.comm_id = r.key.comm_id;
    const std::uint32_t base = r.open ? r.op.seq : r.next_seq;
    h.seq = base + static_cast<std::uint32_t>(in.ConsumeIntegralInRange<int>(-3, 6));
    h.src_rank = static_cast<std::uint32_t>(in.ConsumeIntegralInRange<int>(0, r.size - 1));
    h.chunk = in.ConsumeIntegralInRange<std::uint32_t>(0, 12);
    const std::uint8_t phase = in.ConsumeIntegralInRange<std::uint8_t>(1, 5);
    h.phase = static_cast<wire::Phase>(phase);
    h.flags = in.ConsumeIntegral<std::uint8_t>() & 0x7;
    h.loss_hint = in.ConsumeIntegral<std::uint8_t>();
    if (h.phase == wire::Phase::all_gather) h.shard_error = in.ConsumeIntegralInRange<std::uint16_t>(0, 0x7bff);
    // One field bent out of the valid range, or none.
    switch (in.ConsumeIntegralInRange<int>(0, 9)) {
        case 0: h.job_nonce = in.ConsumeIntegral<std::uint64_t>(); break;
        case 1: h.comm_id = in.ConsumeIntegral<std::uint32_t>(); break;
        case 2: h.seq = in.ConsumeIntegral<std::uint32_t>(); break;
        case 3: h.src_rank = in.ConsumeIntegral<std::uint32_t>(); break;
        case 4: h.chunk = in.ConsumeIntegral<std::uint32_t>(); break;
        case 5: h.sender_deadline_us = in.ConsumeIntegral<std::uint32_t>(); break;
        default: break;
    }
    return h;
}

void send_structured(FuzzedDataProvider &in, DgramRouter &router, const Rank &r) {
    wire::Header h = random_header(in, r);
    // Payload: usually the length of the chunk the header names, else anything.
    std::size_t floats = 0;
    const bool stream = h.phase == wire::Phase::reduce_scatter || h.phase == wire::Phase::all_gather;
    if (r.open && h.src_rank < static_cast<std::uint32_t>(r.size) && stream) {
        const int p = h.phase == wire::Phase::reduce_scatter ? 0 : 1;
        const std::size_t len = r.op.length[p][h.src_rank], F = r.op.floats_per_datagram;
        if (h.chunk < segment_count(len, F)) floats = segment_of(len, F, h.chunk).count;
    }
    std::size_t bytes = floats * sizeof(float);
    if (wire::is_repair_request(h.phase)) bytes = sizeof(std::uint32_t) * in.ConsumeIntegralInRange<std::size_t>(1, 8);
    if (in.ConsumeBool()) bytes = in.ConsumeIntegralInRange<std::size_t>(0, 600);
    h.payload_len = static_cast<std::uint16_t>(bytes);
    std::vector<std::byte> d(wire::kHeaderBytes + bytes);
    wire::encode(h, std::span<std::byte, wire::kHeaderBytes>(d.data(), wire::kHeaderBytes));
    for (std::size_t i = 0; i < bytes; ++i) d[wire::kHeaderBytes + i] = std::byte(in.ConsumeIntegral<std::uint8_t>());
    // Payload floats must not collide with the "unset" marker, or check() cannot tell.
    for (std::size_t i = 0; i + sizeof(float) <= bytes; i += sizeof(float))
        if (std::memcmp(d.data() + wire::kHeaderBytes + i, &kUnset, sizeof(float)) == 0)
            d[wire::kHeaderBytes + i] = std::byte{0};
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0) d.resize(in.ConsumeIntegralInRange<std::size_t>(0, d.size()));
    const int src = in.ConsumeIntegralInRange<int>(-1, r.size);
    router.on_datagram(d, src < 0 ? FI_ADDR_NOTAVAIL : fi_addr_t(src));
}

void run(const std::uint8_t *data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    DgramRouter router;
    // Two communicators: rank 0 of 4 and rank 2 of 3, so routing between them is exercised.
    Rank ranks[2];
    ranks[0].key = {kNonce, 7};
    ranks[0].rank = 0;
    ranks[0].size = 4;
    ranks[1].key = {kNonce, 8};
    ranks[1].rank = 2;
    ranks[1].size = 3;
    for (Rank &r : ranks) {
        router.add_comm(r.key, r.rank, r.size, r.peers());
    }
    // Geometry of every operation of this input: small, so many chunks and short tails.
    const std::size_t n = in.ConsumeIntegralInRange<std::size_t>(0, 200);
    const std::size_t F = in.ConsumeIntegralInRange<std::size_t>(1, 16);
    std::vector<RepairJob> repairs;
    for (int steps = 0; steps < 2000 && in.remaining_bytes() > 0; ++steps) {
        Rank &r = ranks[in.ConsumeIntegralInRange<int>(0, 1)];
        switch (in.ConsumeIntegralInRange<int>(0, 15)) {
            case 0: {  // raw bytes off the wire
                const auto raw = in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<std::size_t>(0, 300));
                router.on_datagram(std::as_bytes(std::span(raw)), FI_ADDR_NOTAVAIL);
                break;
            }
            case 1:
                if (!r.open && r.added)
                    r.open_op(router, n, F, static_cast<Codec>(in.ConsumeIntegralInRange<int>(0, 2)));
                break;
            case 2: r.close_op(router); break;
            case 3:
                if (!r.open && r.added) router.skip_op(r.key, r.next_seq++);
                break;
            case 4:
                if (r.open) {  // the owner closes a phase, as the engine does, under the lock
                    std::unique_lock lock(router.mutex());
                    const int p = in.ConsumeIntegralInRange<int>(0, 1);
                    const auto window = std::chrono::milliseconds(in.ConsumeIntegralInRange<int>(0, 5));
                    const std::vector<std::uint8_t> slow =
                        in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<int>(0, 5));
                    router.close_phase(lock, r.op, p, Clock::now(), window, slow);
                }
                break;
            case 5: {
                std::vector<float> shard(in.ConsumeIntegralInRange<std::size_t>(0, 100), 1.0f);
                const std::uint32_t seq = r.next_seq - static_cast<std::uint32_t>(in.ConsumeIntegralInRange<int>(0, 2));
                const std::size_t per_chunk = in.ConsumeIntegralInRange<std::size_t>(0, 16);
                router.repair().publish(r.key, seq, CodedStream::floats(shard.data(), shard.size(), per_chunk),
                                        in.ConsumeIntegralInRange<std::uint16_t>(0, 0x7bff));
                break;
            }
            case 6:
                router.repair().take(repairs);
                for (const RepairJob &j : repairs) {
                    // At most one chunk of 16 entries, under the widest codec (fp32).
                    if (j.payload.empty() || j.payload.size() > coded_bytes(Codec::fp32, 16))
                        fail("a repair answer is not one chunk");
                    // The datagram as sent: the header, then the payload's coded bytes.
                    const wire::Decoded dec = wire::decode([&] {
                        std::vector<std::byte> d(j.header.begin(), j.header.end());
                        d.insert(d.end(), j.payload.begin(), j.payload.end());
                        return d;
                    }());
                    const wire::Phase want = j.scatter ? wire::Phase::reduce_scatter : wire::Phase::all_gather;
                    if (!dec.header || dec.header->phase != want)
                        fail("a repair answer does not decode as a datagram of its phase");
                }
                break;
            case 7: (void)router.take_near_misses(r.key); break;
            case 8:
                if (r.added && !r.open) {
                    router.remove_comm(r.key);
                    r.added = false;
                } else if (!r.added) {
                    router.add_comm(r.key, r.rank, r.size, r.peers());
                    r.added = true;
                    r.next_seq = 0;
                }
                break;
            default: send_structured(in, router, r); break;
        }
        if (r.open) r.check();
    }
    for (Rank &r : ranks) r.close_op(router);
}

}  // namespace
}  // namespace optireduce

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    optireduce::run(data, size);
    return 0;
}
