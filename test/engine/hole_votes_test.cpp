// SPDX-License-Identifier: BSD-3-Clause
// The all-gather's hole votes: the ranges and their wire payload (pure), and the exchange between
// three ranks over a scripted network that loses datagrams: every rank ends with the same union,
// every vote in, and a rank that closed still answers a peer that missed its last confirmation.
#include "engine/dgram/hole_votes.hpp"
#include "engine/dgram/hole_ranges.hpp"
#include "scripted_endpoint.hpp"
#include "telemetry/stats.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace optireduce {
namespace {

TEST(HoleRanges, MergeSortsJoinsAndDropsEmpty) {
    EXPECT_EQ(merge_ranges({{10, 2}, {0, 3}, {3, 1}, {11, 5}, {20, 0}}), (std::vector<ChunkRange>{{0, 4}, {10, 6}}));
}

TEST(HoleRanges, CoarsenKeepsTheWidestGapsAndCoversEverything) {
    const std::vector<ChunkRange> in{{0, 1}, {2, 1}, {10, 1}, {12, 1}, {40, 1}};
    const auto out = coarsen_ranges(in, 3);
    EXPECT_EQ(out, (std::vector<ChunkRange>{{0, 3}, {10, 3}, {40, 1}}));
    EXPECT_EQ(coarsen_ranges(in, 1), (std::vector<ChunkRange>{{0, 41}}));
    EXPECT_EQ(coarsen_ranges(in, 9), merge_ranges(in));
}

TEST(HoleRanges, VoteRoundTripsAndFitsItsDatagram) {
    HoleVote v{{1, 0, 1, 1, 0, 0, 0, 0, 1}, {}, true};
    for (std::uint32_t i = 0; i < 500; ++i) v.holes.push_back({3 * i, 1});
    const auto small = encode_vote(v, 100);
    ASSERT_FALSE(small.empty());
    EXPECT_LE(small.size(), 100u);
    const auto back = decode_vote(small, 9, 2000);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->have, v.have);
    EXPECT_TRUE(back->final);
    // Coarsened: fewer ranges, but every hole still inside one.
    for (const ChunkRange &h : v.holes) {
        bool covered = false;
        for (const ChunkRange &r : back->holes)
            covered = covered || (h.first >= r.first && h.first < r.first + r.count);
        EXPECT_TRUE(covered) << h.first;
    }
    const auto full = encode_vote(v, 9000);
    EXPECT_EQ(decode_vote(full, 9, 2000)->holes, v.holes);
    v.lesson_100us = 0xbeef;  // the sender's lesson travels as is
    EXPECT_EQ(decode_vote(encode_vote(v, 9000), 9, 2000)->lesson_100us, 0xbeef);
    EXPECT_FALSE(decode_vote(full, 8, 2000));  // another communicator size
    EXPECT_FALSE(decode_vote(full, 9, 1000));  // ranges beyond the result
    auto cut = full;
    cut.pop_back();
    EXPECT_FALSE(decode_vote(cut, 9, 2000));  // truncated
}

constexpr CommKey kKey{42, 7};
constexpr int kRanks = 3;

struct Ranks {
    HoleVotes votes[kRanks];
    test::ScriptedEndpoint net;   // what the ranks send collects in net.sent; deliver() hands it over
    Clock::time_point arrival{};  // when deliver() says the datagrams arrived
    Ranks() {
        for (int r = 0; r < kRanks; ++r) votes[r].add_comm(kKey, r, kRanks, {0, 1, 2});
    }
    // Delivers what was sent, each datagram lost with probability `loss`.
    void deliver(std::mt19937 &rng, double loss) {
        auto queue = std::move(net.sent);
        net.sent.clear();
        std::bernoulli_distribution lost(loss);
        for (auto &sent : queue) {
            if (lost(rng)) continue;
            const std::vector<std::byte> &d = sent.bytes;
            const wire::Decoded dec = wire::decode(d);
            ASSERT_TRUE(dec.header);
            EXPECT_STREQ(votes[sent.dest].on_vote(kKey, *dec.header, std::span(d).subspan(wire::kHeaderBytes), arrival),
                         "");
        }
    }
};

TEST(HoleVotes, EveryRankEndsWithTheSameUnionDespiteLoss) {
    for (unsigned seed = 1; seed <= 21; ++seed) {
        const double loss = seed == 21 ? 0 : 0.3;  // without loss nothing can end an exchange but the protocol
        std::mt19937 rng(seed);
        Ranks ranks;
        const std::vector<ChunkRange> holes[kRanks] = {{{3, 2}}, {}, {{4, 3}, {50, 1}}};
        for (int r = 0; r < kRanks; ++r) ranks.votes[r].open(kKey, 9, 100, holes[r], 1432);
        Clock::time_point now{};
        bool closed[kRanks] = {};
        HoleVotes::Outcome out[kRanks];
        for (int step = 0; step < 200; ++step) {
            now += std::chrono::milliseconds(1);
            for (int r = 0; r < kRanks; ++r) {
                if (closed[r]) {
                    ranks.votes[r].serve(ranks.net);
                    continue;
                }
                ranks.votes[r].send(ranks.net, kKey, 9, now, std::chrono::milliseconds(2));
                if (ranks.votes[r].done(kKey, 9)) {
                    out[r] = ranks.votes[r].close(kKey, 9, now, 0);
                    closed[r] = true;
                }
            }
            ranks.deliver(rng, loss);
        }
        // Once every rank closed, answers are not answered: the network falls silent.
        for (int step = 0; step < 3; ++step) {
            for (HoleVotes &v : ranks.votes) v.serve(ranks.net);
            ranks.deliver(rng, 0);
        }
        for (HoleVotes &v : ranks.votes) v.serve(ranks.net);
        EXPECT_TRUE(ranks.net.sent.empty()) << "seed " << seed << ": " << ranks.net.sent.size() << " still sent";
        for (int r = 0; r < kRanks; ++r) {
            ASSERT_TRUE(closed[r]) << "seed " << seed << " rank " << r;
            EXPECT_EQ(out[r].missing, 0);
            EXPECT_EQ(out[r].holes, (std::vector<ChunkRange>{{3, 4}, {50, 1}})) << "seed " << seed << " rank " << r;
        }
    }
}

TEST(HoleVotes, ARankWithMoreHolesThanItsVoteCarriesFillsWhatItVoted) {
    // Rank 1 misses every other chunk of 2000: a vote of 1432 bytes carries about 170 ranges, so
    // peers get its holes coarsened; rank 1 must end with that same superset, as they do.
    std::mt19937 rng(5);
    Ranks ranks;
    std::vector<ChunkRange> scattered;
    for (std::uint32_t c = 0; c < 2000; c += 2) scattered.push_back({c, 1});
    const std::vector<ChunkRange> holes[kRanks] = {{}, scattered, {{1999, 1}}};
    for (int r = 0; r < kRanks; ++r) ranks.votes[r].open(kKey, 9, 2000, holes[r], 1432);
    Clock::time_point now{};
    for (int step = 0; step < 5; ++step) {
        now += std::chrono::milliseconds(1);
        for (int r = 0; r < kRanks; ++r) ranks.votes[r].send(ranks.net, kKey, 9, now, std::chrono::milliseconds(2));
        ranks.deliver(rng, 0);
    }
    HoleVotes::Outcome out[kRanks];
    for (int r = 0; r < kRanks; ++r) {
        ASSERT_TRUE(ranks.votes[r].done(kKey, 9)) << "rank " << r;
        out[r] = ranks.votes[r].close(kKey, 9, now, 0);
    }
    EXPECT_LE(out[1].holes.size(), vote_max_ranges(kRanks, 1432));
    EXPECT_EQ(out[0].holes, out[1].holes);
    EXPECT_EQ(out[2].holes, out[1].holes);
}

TEST(HoleVotes, AVoteForTheNextOperationWaitsAndOldOnesAreIgnored) {
    std::mt19937 rng(1);
    Ranks ranks;
    // Rank 1 is an operation ahead: its vote for 10 reaches rank 0 before rank 0 opened 10.
    ranks.votes[1].open(kKey, 10, 100, {{7, 1}}, 1432);
    ranks.votes[1].send(ranks.net, kKey, 10, Clock::time_point{} + std::chrono::seconds(1), {});
    ranks.deliver(rng, 0);
    EXPECT_TRUE(ranks.votes[0].voted(kKey, 10, 1));  // before rank 0 opened it
    EXPECT_FALSE(ranks.votes[0].voted(kKey, 10, 2));
    EXPECT_FALSE(ranks.votes[0].voted(kKey, 9, 1));
    ranks.votes[0].open(kKey, 10, 100, {}, 1432);
    const auto out = ranks.votes[0].close(kKey, 10, {}, 0);
    EXPECT_EQ(out.missing, 1);  // rank 2 never voted
    EXPECT_EQ(out.holes, (std::vector<ChunkRange>{{7, 1}}));
}

// A peer that closed without our vote (its budget ran out) still answers ours with its final
// vote, so we get its holes.
TEST(HoleVotes, AClosedPeerStillAnswersWithItsHoles) {
    std::mt19937 rng(1);
    Ranks ranks;
    ranks.votes[1].open(kKey, 5, 100, {{2, 1}}, 1432);
    ranks.votes[2].open(kKey, 5, 100, {}, 1432);
    EXPECT_EQ(ranks.votes[1].close(kKey, 5, {}, 0).missing, 2);  // rank 1 gave up on everyone
    ranks.votes[0].open(kKey, 5, 100, {{9, 1}}, 1432);
    Clock::time_point now{};
    for (int step = 0; step < 10 && !ranks.votes[0].done(kKey, 5); ++step) {
        now += std::chrono::milliseconds(5);
        for (int r : {0, 2}) ranks.votes[r].send(ranks.net, kKey, 5, now, std::chrono::milliseconds(2));
        ranks.votes[1].serve(ranks.net);
        ranks.deliver(rng, 0);
    }
    EXPECT_TRUE(ranks.votes[0].done(kKey, 5));
    EXPECT_EQ(ranks.votes[0].close(kKey, 5, now, 0).holes, (std::vector<ChunkRange>{{2, 1}, {9, 1}}));
}

// A vote that comes after we closed without it was late, not lost: it is counted, and what it
// needed past the budget's base (how long we had waited past it, plus its lateness) is what the
// next operations' budgets learn (VoteWait). A vote we had in time teaches nothing.
TEST(HoleVotes, AVoteThatCameAfterWeClosedTellsHowLateItWas) {
    std::mt19937 rng(1);
    Ranks ranks;
    const Clock::time_point t0 = Clock::time_point{} + std::chrono::seconds(1);
    ranks.votes[0].open(kKey, 4, 100, {}, 1432);
    ranks.votes[2].open(kKey, 4, 100, {}, 1432);
    ranks.votes[2].send(ranks.net, kKey, 4, t0, std::chrono::milliseconds(2));  // rank 2 votes in time
    ranks.deliver(rng, 0);
    EXPECT_EQ(ranks.votes[0].close(kKey, 4, t0, 3).missing, 1);  // 3 ms past the base, without rank 1
    EXPECT_EQ(ranks.votes[0].take_late(kKey), 0);
    const std::uint64_t late_before = process_stats().hole_votes_late.load();
    // Rank 1 votes 7 ms later; its vote also reaches rank 2, which waits for none.
    ranks.votes[1].open(kKey, 4, 100, {{5, 1}}, 1432);
    ranks.votes[1].send(ranks.net, kKey, 4, t0, std::chrono::milliseconds(2));
    ranks.arrival = t0 + std::chrono::milliseconds(7);
    ranks.deliver(rng, 0);
    EXPECT_EQ(process_stats().hole_votes_late.load() - late_before, 1u);
    EXPECT_DOUBLE_EQ(ranks.votes[0].take_late(kKey), 3 + 7);
    EXPECT_EQ(ranks.votes[0].take_late(kKey), 0);  // taken once
    // Its repeats are not late votes again.
    ranks.votes[1].send(ranks.net, kKey, 4, t0 + std::chrono::milliseconds(20), std::chrono::milliseconds(2));
    ranks.deliver(rng, 0);
    EXPECT_EQ(process_stats().hole_votes_late.load() - late_before, 1u);
    EXPECT_EQ(ranks.votes[0].take_late(kKey), 0);
    EXPECT_EQ(ranks.votes[2].take_late(kKey), 0);
}

// Every vote carries its sender's lesson of late votes; close() returns the largest of the votes
// of that round, so a vote late to one rank is waited for by all. One that comes after we closed
// teaches its lateness only: its lesson is an operation old, and taking it would give a rank its
// own decayed lesson back undecayed.
TEST(HoleVotes, CloseReturnsTheLargestLessonThePeersVotesCarried) {
    std::mt19937 rng(1);
    Ranks ranks;
    const Clock::time_point t0 = Clock::time_point{} + std::chrono::seconds(1);
    const std::uint16_t lesson[kRanks] = {30, 400, 125};  // 0.1 ms
    for (int r = 0; r < kRanks; ++r) ranks.votes[r].open(kKey, 6, 100, {}, 1432, lesson[r]);
    for (int r = 0; r < kRanks; ++r) ranks.votes[r].send(ranks.net, kKey, 6, t0, std::chrono::milliseconds(2));
    ranks.deliver(rng, 0);
    EXPECT_DOUBLE_EQ(ranks.votes[0].close(kKey, 6, t0, 0).peers_lesson_ms, 40);
    EXPECT_DOUBLE_EQ(ranks.votes[1].close(kKey, 6, t0, 0).peers_lesson_ms, 12.5);
    // Rank 2 closes round 7 without rank 1's vote, which then comes late with a lesson of 90.
    ranks.votes[2].open(kKey, 7, 100, {}, 1432, 125);
    ranks.votes[0].open(kKey, 7, 100, {}, 1432, 30);
    ranks.votes[0].send(ranks.net, kKey, 7, t0, std::chrono::milliseconds(2));
    ranks.deliver(rng, 0);
    EXPECT_DOUBLE_EQ(ranks.votes[2].close(kKey, 7, t0, 0).peers_lesson_ms, 3);
    ranks.votes[1].open(kKey, 7, 100, {}, 1432, 900);
    ranks.votes[1].send(ranks.net, kKey, 7, t0, std::chrono::milliseconds(2));
    ranks.deliver(rng, 0);
    ranks.votes[2].open(kKey, 8, 100, {}, 1432, 125);
    EXPECT_DOUBLE_EQ(ranks.votes[2].close(kKey, 8, t0, 0).peers_lesson_ms, 0) << "a late vote's lesson was taken";
}

TEST(HoleVotes, NoVoteWithoutAPeerIsDone) {
    Ranks ranks;
    ranks.votes[0].open(kKey, 1, 100, {}, 1432);
    EXPECT_FALSE(ranks.votes[0].done(kKey, 1));
    EXPECT_EQ(ranks.votes[0].close(kKey, 1, {}, 0).missing, 2);
}

}  // namespace
}  // namespace optireduce
