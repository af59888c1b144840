// SPDX-License-Identifier: BSD-3-Clause
// StreamSender::stop against a scripted channel that takes two datagrams per run, as a link too
// slow for its data does: a receiver that stopped waiting gets nothing more, what its stream had
// not sent and every chunk made ready for it later is given up and counted, and the other
// streams go on whole. A queue that takes one run per round gives every stream its turn. And the
// queue budget against a scripted slow link: nothing is left queued on the host when the
// receivers stop waiting. Runs are sized so that all senders' runs to one receiver fit its
// link's burst (incast_run).
#include "engine/bounded/stream_sender.hpp"
#include "engine/bounded/incast_run.hpp"
#include "engine/dgram/dgram_channel.hpp"
#include "scripted_endpoint.hpp"
#include "telemetry/stats.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace optireduce {
namespace {

constexpr std::size_t kFloats = 40;  // per stream: 10 datagrams of 4 floats

struct Fixture : ::testing::Test {
    DgramChannel channel;
    test::ScriptedEndpoint *script = nullptr;
    CommState::Bounded b;
    std::vector<std::uint64_t> bytes = std::vector<std::uint64_t>(3, 0);
    std::vector<double> seconds = std::vector<double>(3, 0);
    std::vector<float> data = std::vector<float>(kFloats, 1.0f);

    Fixture() {
        auto ep = std::make_unique<test::ScriptedEndpoint>();
        ep->accept = 2;
        script = ep.get();
        channel.endpoint = std::move(ep);
        b.channel = &channel;
        b.peers = {100, 101, 102};
        b.floats_per_datagram = 4;
        b.pacer = SendPacer(3);  // unpaced: rate 0 to every peer
    }
    std::size_t sent_to(fi_addr_t dest) const {
        return static_cast<std::size_t>(
            std::count_if(script->sent.begin(), script->sent.end(), [&](const auto &d) { return d.dest == dest; }));
    }
    static std::uint64_t given_up() { return process_stats().datagrams_given_up.load(); }
};

TEST_F(Fixture, AStoppedReceiverGetsNothingMoreAndItsRestIsGivenUp) {
    StreamSender s(b, wire::Header{}, bytes, seconds);
    s.add_stream(1, CodedStream::floats(data.data(), kFloats, b.floats_per_datagram));
    s.add_stream(2, CodedStream::floats(data.data(), kFloats, b.floats_per_datagram));
    s.all_ready();
    bool progressed = false;
    Clock::time_point earliest = Clock::time_point::max();
    s.pump(&progressed, &earliest);
    ASSERT_EQ(sent_to(101), 2u);
    const std::uint64_t before = given_up();
    s.stop(1);  // receiver 1 closed its phase
    s.send_all(Clock::now() + std::chrono::seconds(5), QueueDeadline{Clock::now() + std::chrono::seconds(5)}, [] {});
    EXPECT_EQ(sent_to(101), 2u);
    EXPECT_EQ(sent_to(102), 10u);
    EXPECT_FALSE(s.has_ready());
    s.finish();
    EXPECT_TRUE(s.gave_up());
    EXPECT_EQ(given_up(), before + 8);
}

TEST_F(Fixture, ChunksReadyAfterTheStopAreGivenUpToo) {
    // The all-gather: chunks of our shard become ready one by one, after receiver 2 moved on.
    StreamSender s(b, wire::Header{}, bytes, seconds);
    s.add_stream(1, CodedStream::floats(data.data(), kFloats, b.floats_per_datagram));
    s.add_stream(2, CodedStream::floats(data.data(), kFloats, b.floats_per_datagram));
    const std::uint64_t before = given_up();
    s.stop(2);
    s.stop(2);  // again: nothing more to give up
    for (std::uint32_t c = 0; c < 10; ++c) s.ready(c);
    s.send_all(Clock::now() + std::chrono::seconds(5), QueueDeadline{Clock::now() + std::chrono::seconds(5)}, [] {});
    EXPECT_EQ(sent_to(101), 10u);
    EXPECT_EQ(sent_to(102), 0u);
    s.finish();
    EXPECT_TRUE(s.gave_up());
    EXPECT_EQ(given_up(), before + 10);
}

TEST_F(Fixture, WithoutAStopEverythingGoes) {
    StreamSender s(b, wire::Header{}, bytes, seconds);
    s.add_stream(1, CodedStream::floats(data.data(), kFloats, b.floats_per_datagram));
    s.all_ready();
    const std::uint64_t before = given_up();
    s.send_all(Clock::now() + std::chrono::seconds(5), QueueDeadline{Clock::now() + std::chrono::seconds(5)}, [] {});
    s.finish();
    EXPECT_EQ(sent_to(101), 10u);
    EXPECT_FALSE(s.gave_up());
    EXPECT_EQ(given_up(), before);
}

TEST_F(Fixture, AQueueThatFillsPartWayThroughARoundFavoursNoReceiver) {
    // Room for one run per round, as when the host's queue is nearly full: the round's first
    // stream gets it. Rounds that always began with the same stream gave that receiver most of
    // the uplink on top of the other senders' shares, more than its switch port drains, and the
    // ports dropped 0.3-1.1% of a clean network's datagrams (docs/notes/2026-12-06-clean-network-loss-send-rounds.md).
    script->accept = 1000;
    script->room_per_call = 16;                 // the scripted channel's run
    std::vector<float> big(4 * 16 * 40, 1.0f);  // 40 runs per stream
    StreamSender s(b, wire::Header{}, bytes, seconds);
    for (int peer = 0; peer < 3; ++peer)
        s.add_stream(peer, CodedStream::floats(big.data(), big.size(), b.floats_per_datagram));
    s.all_ready();
    for (int round = 0; round < 30; ++round) {
        bool progressed = false;
        Clock::time_point earliest = Clock::time_point::max();
        s.pump(&progressed, &earliest);
        ASSERT_TRUE(progressed);
    }
    EXPECT_EQ(sent_to(100), 160u);
    EXPECT_EQ(sent_to(101), 160u);
    EXPECT_EQ(sent_to(102), 160u);
}

// One round sends each stream one run; what the scripted channel got per receiver is its length.
std::vector<std::size_t> first_round_runs(Fixture &f, int streams, std::size_t floats_per_stream) {
    f.script->accept = 1000;  // the channel takes whole runs
    std::vector<float> big(floats_per_stream, 1.0f);
    StreamSender s(f.b, wire::Header{}, f.bytes, f.seconds);
    for (int k = 0; k < streams; ++k)
        s.add_stream(k, CodedStream::floats(big.data(), big.size(), f.b.floats_per_datagram));
    s.all_ready();
    bool progressed = false;
    Clock::time_point earliest = Clock::time_point::max();
    s.pump(&progressed, &earliest);
    std::vector<std::size_t> runs;
    for (int k = 0; k < streams; ++k) runs.push_back(f.sent_to(f.b.peers[static_cast<std::size_t>(k)]));
    return runs;
}

TEST_F(Fixture, RunsToOneReceiverFromAllItsSendersAddUpToTheIncastBudget) {
    // Four ranks, datagrams of MTU 1500: three senders' runs can reach one receiver together,
    // so each is at most a third of kIncastBytes (14 datagrams), not the channel's 16.
    b.peers = {100, 101, 102, 103};
    b.pacer = SendPacer(4);
    b.floats_per_datagram = 360;
    const std::size_t datagram = wire::kHeaderBytes + 360 * sizeof(float);
    for (std::size_t run : first_round_runs(*this, 3, 360 * 100)) {
        EXPECT_LE(3 * run * datagram, kIncastBytes) << "one round's runs to a receiver overflow its burst";
        EXPECT_GE(4 * run * datagram, kIncastBytes) << "runs shorter than the budget needs";
        EXPECT_LT(run, 16u);
    }
}

TEST_F(Fixture, TwoRanksKeepTheChannelsRuns) {
    // One sender per receiver: nothing to share the receiver's link with.
    b.peers = {100, 101};
    b.pacer = SendPacer(2);
    b.floats_per_datagram = 360;
    EXPECT_EQ(first_round_runs(*this, 1, 360 * 100), std::vector<std::size_t>{16});
}

TEST_F(Fixture, AStreamThatFitsInOneRunGoesWhole) {
    // A small operation: 10 datagrams per receiver, fewer than the channel's run of 16. Split
    // into runs of 14 or fewer it would reach its sub-millisecond deadline in pieces.
    b.peers = {100, 101, 102, 103};
    b.pacer = SendPacer(4);
    b.floats_per_datagram = 360;
    EXPECT_EQ(first_round_runs(*this, 3, 360 * 10), (std::vector<std::size_t>{10, 10, 10}));
}

// A receiver closes early once it has a tail datagram from every sender and its link went quiet
// (PhaseCloser::before_close): every flagged datagram to `dest` must be handed over in the same
// call as everything after it, or a sender that loses its core between two rounds has its
// receiver close without the rest. Returns how many were flagged.
std::size_t expect_tail_in_one_call(const test::ScriptedEndpoint &script, fi_addr_t dest, std::size_t datagrams) {
    std::size_t n = 0, flagged = 0, first_flagged = 0, tail_call = 0;
    for (const auto &d : script.sent) {
        if (d.dest != dest) continue;
        if (flagged > 0) {
            EXPECT_EQ(d.call, tail_call) << "datagram " << n << " sent a round after the tail began";
        }
        if ((std::to_integer<std::uint8_t>(d.bytes[6]) & wire::kTail) != 0 && flagged++ == 0) {
            first_flagged = n;
            tail_call = d.call;
        }
        ++n;
    }
    EXPECT_EQ(n, datagrams);
    EXPECT_GE(flagged, 1u) << "no tail: the receiver can never close early";
    EXPECT_EQ(first_flagged + flagged, n) << "the flagged datagrams are not the stream's last";
    return flagged;
}

TEST_F(Fixture, AStreamsTailGoesInItsLastRun) {
    // 2000 datagrams: 1% is 20, more than a run of 14. A receiver takes the first tail flag it
    // sees as the stream's end, so every flagged datagram must go in the stream's last run.
    script->accept = 1000;
    b.peers = {100, 101, 102, 103};
    b.pacer = SendPacer(4);
    b.floats_per_datagram = 360;
    bytes.assign(4, 0);
    seconds.assign(4, 0);
    std::vector<float> big(360 * 2000, 1.0f);
    StreamSender s(b, wire::Header{}, bytes, seconds);
    for (int k = 1; k < 4; ++k) s.add_stream(k, CodedStream::floats(big.data(), big.size(), b.floats_per_datagram));
    s.all_ready();
    s.send_all(Clock::now() + std::chrono::seconds(5), QueueDeadline{Clock::now() + std::chrono::seconds(5)}, [] {});
    s.finish();
    // The run of this job on the scripted channel (16 at most): 14.
    const std::size_t run = incast_run(16, 3, wire::kHeaderBytes + 360 * sizeof(float), 2000);
    // Also: 2000 datagrams to rank 1, the flagged ones its last, handed over in one call.
    const std::size_t flagged = expect_tail_in_one_call(*script, 101, 2000);
    EXPECT_GE(flagged, 3u);
    EXPECT_LE(flagged, run) << "the tail spans more than one run";
}

TEST_F(Fixture, ATailLongerThanARunIsCutToOneRun) {
    // Four ranks, datagrams of MTU 9000: runs of 2, shorter than the three-datagram tail. A
    // tail sent in two rounds closed a lossless network's phase without its last chunk (a
    // sender of 4 ranks on 2 cores lost its core in between; docs/notes/2026-12-07-tail-at-most-one-run.md).
    b.peers = {100, 101, 102, 103};
    b.pacer = SendPacer(4);
    b.floats_per_datagram = 2240;
    bytes.assign(4, 0);
    seconds.assign(4, 0);
    ASSERT_EQ(incast_run(16, 3, wire::kHeaderBytes + 2240 * sizeof(float), 30), 2u);
    std::vector<float> big(2240 * 30 - 500, 1.0f);  // 30 datagrams, the last one partial
    StreamSender s(b, wire::Header{}, bytes, seconds);
    for (int k = 1; k < 4; ++k) s.add_stream(k, CodedStream::floats(big.data(), big.size(), b.floats_per_datagram));
    s.all_ready();
    s.send_all(Clock::now() + std::chrono::seconds(5), QueueDeadline{Clock::now() + std::chrono::seconds(5)}, [] {});
    s.finish();
    for (fi_addr_t dest : {101u, 102u, 103u}) EXPECT_EQ(expect_tail_in_one_call(*script, dest, 30), 2u);
}

TEST(IncastRun, DividesTheBudgetAmongTheSendersWithinTheChannelsRun) {
    EXPECT_EQ(incast_run(44, 3, 1472, 7000), 14u);  // 4 ranks, MTU 1500
    EXPECT_EQ(incast_run(44, 1, 1472, 7000), 44u);  // 2 ranks
    EXPECT_EQ(incast_run(7, 3, 8972, 1000), 2u);    // MTU 9000
    EXPECT_EQ(incast_run(44, 63, 1472, 7000), 1u);  // 64 ranks: one datagram, never none
    EXPECT_EQ(incast_run(8, 3, 1472, 7000), 8u);    // a channel with shorter runs keeps them
    EXPECT_EQ(incast_run(44, 3, 1472, 44), 44u);    // a stream that fits in one run goes whole
    EXPECT_EQ(incast_run(44, 3, 1472, 45), 14u);
}

TEST_F(Fixture, BehindASlowLinkNothingIsLeftQueuedWhenTheReceiversStopWaiting) {
    // A 2 MB/s link behind a 1 MiB queue; 2 MiB to send; the receivers wait 150 ms for it
    // (late ones 10 ms more), the send limit is 300 ms. Without the budget the queue is full when
    // the receivers stop waiting (half a second of data nobody waits for) and still full at the
    // limit; with it, it is down to the short queue always allowed by then, and stays there.
    script->accept = 1000;
    script->drain_rate = 2e6;
    script->capacity = 1024 * 1024;
    // The previous phase measured the link (a first phase ever fills the queue before the rate
    // is known: QueueBudget's prior).
    b.host_drain_rate = 2e6;
    b.floats_per_datagram = 256;  // 1 KiB of payload per datagram
    std::vector<float> big(512 * 1024, 1.0f);
    StreamSender s(b, wire::Header{}, bytes, seconds);
    s.add_stream(1, CodedStream::floats(big.data(), big.size(), b.floats_per_datagram));
    s.all_ready();
    const Clock::time_point t0 = Clock::now();
    std::int64_t queued_at_end = -1;
    bool checked = false;
    const QueueDeadline queue{t0 + std::chrono::milliseconds(150), std::chrono::milliseconds(10)};
    s.send_all(t0 + std::chrono::milliseconds(300), queue, [&] {
        if (!checked && Clock::now() >= t0 + std::chrono::milliseconds(150)) {
            checked = true;
            queued_at_end = script->queued_bytes();
        }
    });
    ASSERT_TRUE(checked);
    const std::int64_t short_queue = QueueBudget::kAlwaysQueued + 32 * 1024;
    EXPECT_LT(queued_at_end, short_queue) << "data queued past the receivers' end";
    EXPECT_LT(script->queued_bytes(), short_queue) << "a long queue kept past the receivers' end";
    // What went is what the link carried until the limit (600 KB) and a short queue, no more.
    EXPECT_LT(bytes[1], 600'000u + static_cast<std::uint64_t>(short_queue));
    EXPECT_GT(bytes[1], 500'000u);
    s.finish();
    EXPECT_TRUE(s.gave_up());
}

}  // namespace
}  // namespace optireduce
