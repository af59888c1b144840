// SPDX-License-Identifier: BSD-3-Clause
// What a closed phase teaches the deadline (deadline_controller.hpp), from what each sender's
// path delivered: the typical paths' outcome, without a path far slower than the others. A host
// whose link runs at a tenth of the others' for seconds delivers a fraction of its stream by the
// deadline; learning that span widened every peer's deadline towards it (to the 1 s ceiling,
// with its loss widening the multiple too), so one slow link set everyone's pace. Left out, it
// costs its own late data, as bounded mode promises.
//
// Slow is a matter of rate, not span: chunks delivered per millisecond from the sender's start
// to its last datagram. (A slow all-gather owner starts late, after its own slow reduce-scatter,
// so its span from its start looked ordinary while its rate was a tenth of the others'.) Jitter
// stays in: a path counts as slow only below 1/kSlowOverMedian of the median path's rate, and
// only among kMinPathsToCompare or more (of two paths neither is "the others": on a host whose
// cores the ranks share, one sender descheduled for a while looks twice as slow, and leaving it
// out cost its late data). Pure arithmetic, unit-tested alone.
#pragma once

#include "engine/deadlines/deadline_controller.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace optireduce {

// One sender's path in one phase, times from its own start. A sender with nothing received is
// not a path (nothing heard: a straggler, or this rank itself).
struct PathSample {
    double elapsed_ms = 0;       // its start to the phase's close
    double last_arrival_ms = 0;  // its start to its latest datagram
    std::uint64_t expected = 0;  // chunks expected from it
    std::uint64_t received = 0;
    // Chunks per millisecond from its start to its last datagram; infinite when they all came
    // at once (or before its start: held, or all sent early), which is never slow.
    double rate() const;
};

struct TypicalPaths {
    PhaseOutcome outcome;            // over the typical paths only
    std::vector<std::uint8_t> slow;  // per sender, as given: 1 where left out
    int slow_count() const;
};

inline constexpr double kSlowOverMedian = 3.0;
inline constexpr std::size_t kMinPathsToCompare = 3;

// `paths`: one per sender. `cut_short`: the phase closed at its deadline with data missing
// (PhaseOutcome::cut_short).
TypicalPaths typical_paths(std::span<const PathSample> paths, bool cut_short);

}  // namespace optireduce
