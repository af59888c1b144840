// SPDX-License-Identifier: BSD-3-Clause
// How long bounded mode waits for a peer that has not started an operation yet
// (docs/architecture.md, "Deadlines, the straggler bound and early close"). The phase deadline
// bounds the network: it runs, per sender, from that sender's first datagram. A peer that has
// sent nothing is not slow on the network, it is still computing (or preempted, or dead); between
// ranks of a training job that skew is milliseconds on a quiet cluster, seconds at the first
// step, hundreds of milliseconds where ranks share cores. This bound is learned from the skew the
// job shows, the way the deadline is learned from completion times: a smoothed mean and mean
// deviation of each operation's spread of start times (Jacobson/Karels), mean + 4 deviations,
// times a factor that widens whenever a peer had to be written off (its data lost, and replicas
// then differ) and narrows slowly while none is. Until a few operations have been seen it is the
// maximum, so the first steps of a job, whose skew is the largest, lose nothing. After that it is
// also capped at a small multiple of the deadlines the job shows (kDeadlineMultiple times the
// largest recent sum of both phases' deadlines, at least kCapFloorMs): waiting for one late rank
// longer than several whole operations take costs everyone more than its data is worth, and a
// rank that is behind catches up by dropping (the router's `ahead`), not by making others wait.
// Pure arithmetic, unit-tested alone.
#pragma once

namespace optireduce {

struct StragglerSettings {
    double max_ms = 10000;  // OPTIREDUCE_STRAGGLER_MAX_MS: never wait longer; 0: never wait at all
};

class StragglerBound {
public:
    // Enough operations to see the skew's spread, not only its mean.
    static constexpr int kCalibrationOps = 8;
    static constexpr double kSmoothing = 0.25;
    static constexpr double kDeviations = 4;
    static constexpr double kMinMultiple = 1.0, kMaxMultiple = 4.0;
    static constexpr double kWiden = 2.0, kNarrow = 0.995;
    // Per operation: a peak is forgotten over a few hundred operations (a training step is
    // often several allreduces, only the first of which carries the step's skew).
    static constexpr double kPeakMargin = 2.0, kPeakDecay = 0.998;
    // Never below this: a few ms of scheduling noise is not worth a lost contribution.
    static constexpr double kFloorMs = 5;
    // The cap: this many times the recent peak of an operation's two deadlines, never below
    // the floor (a job of tiny messages still has compute skew of tens of milliseconds).
    static constexpr double kDeadlineMultiple = 4, kCapFloorMs = 50;

    explicit StragglerBound(StragglerSettings s = {}) : s_(s) {}

    // How long after this rank started a phase a peer that has not started it is waited for.
    double bound_ms() const;
    // One operation: how far the latest start trailed the earliest (ms), and whether a peer was
    // written off as a straggler.
    void observe(double lateness_ms, bool wrote_off);
    // One operation's deadlines (both phases, summed), for the cap; forgotten like the peak.
    void observe_deadlines(double deadlines_ms);
    // The cap the deadlines set (the maximum until any was observed).
    double cap_ms() const;

    int observed() const { return observed_; }

private:
    StragglerSettings s_;
    int observed_ = 0;
    double mean_ms_ = 0, deviation_ms_ = 0, peak_ms_ = 0, deadlines_peak_ms_ = 0;
    double multiple_ = kMinMultiple;
};

}  // namespace optireduce
