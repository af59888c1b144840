// SPDX-License-Identifier: BSD-3-Clause
// Which (sender, chunk) datagrams of one phase of one operation have arrived: the exact loss
// map of bounded mode. Setting a bit twice is how duplicates are recognised; the map, not a
// byte count, decides completion, so a duplicate can never stand in for a lost datagram.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace optireduce {

class ChunkBitmap {
public:
    // chunks[s]: how many datagrams sender s sends in this phase (0 for this rank itself).
    void reset(std::span<const std::uint32_t> chunks) {
        chunks_.assign(chunks.begin(), chunks.end());
        base_.resize(chunks_.size());
        received_.assign(chunks_.size(), 0);
        tail_.assign(chunks_.size(), 0);
        std::size_t bits = 0;
        expected_ = 0;
        senders_ = 0;
        for (std::size_t s = 0; s < chunks_.size(); ++s) {
            base_[s] = bits;
            bits += chunks_[s];
            expected_ += chunks_[s];
            senders_ += chunks_[s] > 0;
        }
        words_.assign((bits + 63) / 64, 0);
        received_total_ = 0;
        tails_ = 0;
    }

    std::uint32_t chunks(std::size_t sender) const { return chunks_[sender]; }
    std::uint32_t received(std::size_t sender) const { return received_[sender]; }
    bool test(std::size_t sender, std::uint32_t chunk) const {
        const std::size_t b = base_[sender] + chunk;
        return (words_[b / 64] >> (b % 64)) & 1u;
    }
    // Records an arrival; false if it was already recorded (a duplicate). chunk < chunks(sender).
    bool set(std::size_t sender, std::uint32_t chunk, bool tail) {
        const std::size_t b = base_[sender] + chunk;
        const std::uint64_t mask = std::uint64_t{1} << (b % 64);
        if (words_[b / 64] & mask) return false;
        words_[b / 64] |= mask;
        ++received_[sender];
        ++received_total_;
        if (tail && !tail_[sender]) {
            tail_[sender] = 1;
            ++tails_;
        }
        return true;
    }

    // Chunks of `sender` missing below the highest one that arrived: lost in the network or an
    // overflowing buffer, where a stream cut short by the deadline misses its end instead.
    std::uint32_t holes(std::size_t sender) const {
        std::uint32_t top = 0, seen = 0;
        for (std::uint32_t c = 0; c < chunks_[sender]; ++c)
            if (test(sender, c)) {
                top = c + 1;
                ++seen;
            }
        return top - seen;
    }

    bool complete() const { return received_total_ == expected_; }
    // Every sender that has anything to send has delivered its last datagram.
    bool all_tails() const { return tails_ == senders_; }
    // Sender slots, one per rank of the communicator (this rank's own included, with no chunks).
    std::size_t size() const { return chunks_.size(); }
    std::uint64_t expected() const { return expected_; }
    std::uint64_t received_total() const { return received_total_; }
    // Chunks expected and received from senders that delivered at least one datagram.
    std::uint64_t expected_from_heard() const {
        std::uint64_t e = 0;
        for (std::size_t s = 0; s < chunks_.size(); ++s)
            if (received_[s] > 0) e += chunks_[s];
        return e;
    }

private:
    std::vector<std::uint32_t> chunks_, received_;
    std::vector<std::size_t> base_;
    std::vector<std::uint8_t> tail_;
    std::vector<std::uint64_t> words_;
    std::uint64_t expected_ = 0, received_total_ = 0;
    std::size_t senders_ = 0, tails_ = 0;
};

}  // namespace optireduce
