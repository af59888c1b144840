// SPDX-License-Identifier: BSD-3-Clause
// The all-gather's hole votes: the ranges and their wire payload (pure), and the exchange between
// three ranks over a scripted network that loses datagrams: every rank ends with the same union,
// every vote in, and a rank that closed still answers a peer that missed its last confirmation.
#include "engine/dgram/hole_votes.hpp"
#include "engine/dgram/hole_ranges.hpp"
#include "scripted_endpoint.hpp"
#include "telemetry/stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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
    test::ScriptedEndpoint net;  // what the ranks send collects in net.sent; deliver() hands it over
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
            EXPECT_STREQ(votes[sent.dest].on_vote(kKey, *dec.header, std::span(d).subspan(wire::kHeaderBytes)), "");
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
                    out[r] = ranks.votes[r].close(kKey, 9);
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
        out[r] = ranks.votes[r].close(kKey, 9);
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
    const auto out = ranks.votes[0].close(kKey, 10);
    EXPECT_EQ(out.missing, 1);  // rank 2 never voted
    EXPECT_EQ(out.holes, (std::vector<ChunkRange>{{7, 1}}));
}

// A peer that closed (here without our vote: ours was lost on the way) still answers ours with
// its final vote, so we get its holes.
TEST(HoleVotes, AClosedPeerStillAnswersWithItsHoles) {
    std::mt19937 rng(1);
    Ranks ranks;
    ranks.votes[1].open(kKey, 5, 100, {{2, 1}}, 1432);
    ranks.votes[2].open(kKey, 5, 100, {}, 1432);
    EXPECT_EQ(ranks.votes[1].close(kKey, 5).missing, 2);  // rank 1 gave up on everyone
    ranks.votes[0].open(kKey, 5, 100, {{9, 1}}, 1432);
    Clock::time_point now{};
    for (int step = 0; step < 10 && !ranks.votes[0].done(kKey, 5); ++step) {
        now += std::chrono::milliseconds(5);
        for (int r : {0, 2}) ranks.votes[r].send(ranks.net, kKey, 5, now, std::chrono::milliseconds(2));
        ranks.votes[1].serve(ranks.net);
        ranks.deliver(rng, 0);
    }
    EXPECT_TRUE(ranks.votes[0].done(kKey, 5));
    EXPECT_EQ(ranks.votes[0].close(kKey, 5).holes, (std::vector<ChunkRange>{{2, 1}, {9, 1}}));
}

// The case that once left replicas different: rank 2 is stopped for a second (nothing reaches it
// and it sends nothing) right after it voted once, its vote to rank 0 lost. Rank 0 is not done
// for that whole second, asks again at its pace, and once rank 2 resumes every rank ends with
// the same union, rank 2's holes in it.
TEST(HoleVotes, ARankStoppedForASecondIsWaitedForAndEveryRankAgrees) {
    std::mt19937 rng(3);
    Ranks ranks;
    const std::vector<ChunkRange> holes[kRanks] = {{{1, 1}}, {}, {{60, 2}}};
    for (int r = 0; r < kRanks; ++r) ranks.votes[r].open(kKey, 11, 100, holes[r], 1432);
    Clock::time_point now{};
    for (int r = 0; r < kRanks; ++r) ranks.votes[r].send(ranks.net, kKey, 11, now, std::chrono::milliseconds(2));
    // Rank 2's first vote reaches rank 1 only; then rank 2 stops.
    std::erase_if(ranks.net.sent,
                  [](const auto &d) { return d.dest == 0 && wire::decode(d.bytes).header->src_rank == 2; });
    ranks.deliver(rng, 0);
    bool closed[kRanks] = {};
    HoleVotes::Outcome out[kRanks];
    int sends_to_2 = 0;
    for (int ms = 1; ms <= 1200; ++ms) {
        now += std::chrono::milliseconds(1);
        const bool stopped = ms < 1000;
        for (int r = 0; r < kRanks; ++r) {
            if (r == 2 && stopped) continue;
            if (closed[r]) {
                ranks.votes[r].serve(ranks.net);
                continue;
            }
            ranks.votes[r].send(ranks.net, kKey, 11, now, std::chrono::milliseconds(20));
            if (ranks.votes[r].done(kKey, 11)) {
                out[r] = ranks.votes[r].close(kKey, 11);
                closed[r] = true;
            }
        }
        if (stopped) {
            EXPECT_FALSE(closed[0]) << "rank 0 closed without rank 2's vote at " << ms << " ms";
            sends_to_2 += static_cast<int>(
                std::count_if(ranks.net.sent.begin(), ranks.net.sent.end(), [](const auto &d) { return d.dest == 2; }));
            std::erase_if(ranks.net.sent, [](const auto &d) { return d.dest == 2; });
        }
        ranks.deliver(rng, 0);
    }
    EXPECT_GE(sends_to_2, 40);  // asked again every 20 ms while it was away
    for (int r = 0; r < kRanks; ++r) {
        ASSERT_TRUE(closed[r]) << "rank " << r;
        EXPECT_EQ(out[r].missing, 0);
        EXPECT_EQ(out[r].holes, (std::vector<ChunkRange>{{1, 1}, {60, 2}})) << "rank " << r;
    }
}

TEST(HoleVotes, NoVoteWithoutAPeerIsDone) {
    Ranks ranks;
    ranks.votes[0].open(kKey, 1, 100, {}, 1432);
    EXPECT_FALSE(ranks.votes[0].done(kKey, 1));
    EXPECT_EQ(ranks.votes[0].close(kKey, 1).missing, 2);
}

}  // namespace
}  // namespace optireduce
