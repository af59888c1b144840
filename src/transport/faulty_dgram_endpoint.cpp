// SPDX-License-Identifier: BSD-3-Clause
#include "transport/faulty_dgram_endpoint.hpp"

#include "telemetry/stats.hpp"

#include <algorithm>

namespace optireduce {
namespace {

// Streams of the two sequences, so one seed gives independent drop and duplicate decisions. The
// drop's is the one it had when the router drew it, so a seed drops as it did.
constexpr std::uint64_t kDropStream = 0x726f75746572ull;  // "router"
constexpr std::uint64_t kDuplicateStream = 0x647570ull;   // "dup"

}  // namespace

FaultyDgramEndpoint::FaultyDgramEndpoint(std::unique_ptr<DgramEndpoint> inner, const DgramFaults &faults)
    : DgramEndpoint(inner->provider()),
      inner_(std::move(inner)),
      faults_(faults),
      drop_rng_(faults.seed, kDropStream),
      dup_rng_(faults.seed, kDuplicateStream) {
    name_ = inner_->name();
}

std::string FaultyDgramEndpoint::describe() const {
    return inner_->describe() + " (test-only faults: drop " + std::to_string(faults_.drop) + ", duplicate " +
           std::to_string(faults_.duplicate) + ")";
}

bool FaultyDgramEndpoint::duplicate() {
    if (faults_.duplicate <= 0) return false;
    std::lock_guard lock(dup_mutex_);
    return dup_rng_.chance(faults_.duplicate);
}

int FaultyDgramEndpoint::send(fi_addr_t dest, std::span<const std::byte> header, std::span<const std::byte> payload) {
    const int rc = inner_->send(dest, header, payload);
    if (rc == 0 && duplicate()) inner_->send(dest, header, payload);
    return rc;
}

int FaultyDgramEndpoint::send_runs(std::span<const DgramRun> runs, std::span<std::size_t> sent) {
    const int rc = inner_->send_runs(runs, sent);
    // What went out went out even where the call failed part way: those may be copied too.
    for (std::size_t r = 0; r < runs.size(); ++r) {
        const DgramRun &run = runs[r];
        for (std::size_t i = 0; i < sent[r]; ++i) {
            if (!duplicate()) continue;
            const std::size_t at = i * run.segment;
            inner_->send(run.dest, run.headers.subspan(i * run.header_bytes, run.header_bytes),
                         run.payload.subspan(at, std::min(run.segment, run.payload.size() - at)));
        }
    }
    return rc;
}

int FaultyDgramEndpoint::poll(const Sink &sink) {
    if (faults_.drop <= 0) return inner_->poll(sink);
    return inner_->poll([&](std::span<const std::byte> d, fi_addr_t source) {
        if (drop_rng_.chance(faults_.drop)) return bump(process_stats().datagrams_fault_dropped);
        sink(d, source);
    });
}

std::unique_ptr<DgramEndpoint> with_faults(std::unique_ptr<DgramEndpoint> ep, const DgramFaults &faults) {
    if (!ep || !faults.any()) return ep;
    return std::make_unique<FaultyDgramEndpoint>(std::move(ep), faults);
}

}  // namespace optireduce
